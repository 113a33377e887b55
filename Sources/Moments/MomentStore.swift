import Foundation

/// A picture in an automatic moment, as a neighbour of a new photo.
public struct AutomaticNeighbour: Sendable, Hashable {
    /// The neighbour's facts.
    public var photo: PhotoFacts
    /// The automatic moment it belongs to.
    public var momentId: Int64

    /// A neighbour from its facts and moment.
    public init(photo: PhotoFacts, momentId: Int64) {
        self.photo = photo
        self.momentId = momentId
    }
}

/// The aggregates of a moment's pictures that the engine needs after every change: enough to
/// keep a window, a place and a cover up to date without reading every picture. Each is a
/// `min`, a `max` or a `LIMIT 1` on an index (no count: it would read the whole moment).
public struct MomentDigest: Sendable, Hashable {
    /// The first picture in the stable order (`PictureOrder`): the anchor, and policy `first`'s cover.
    public var earliest: PhotoFacts?
    /// The earliest capture time among the pictures, nil when none has one.
    public var firstCapture: Date?
    /// The latest capture time among the pictures.
    public var lastCapture: Date?
    /// The highest cover score among the pictures.
    public var bestScore: Double?

    /// A digest from its parts.
    public init(earliest: PhotoFacts?, firstCapture: Date?, lastCapture: Date?, bestScore: Double?) {
        self.earliest = earliest
        self.firstCapture = firstCapture
        self.lastCapture = lastCapture
        self.bestScore = bestScore
    }

    /// The digest of a set of pictures, computed by reading them all.
    public init(of pictures: some Collection<PhotoFacts>) {
        let times = pictures.compactMap(\.capturedAt)
        self.init(earliest: pictures.min(by: PictureOrder.precedes),
                  firstCapture: times.min(), lastCapture: times.max(), bestScore: pictures.map(\.coverScore).max())
    }
}

/// Where the moment state lives: places, moments, pictures' facts, assignments, candidates.
///
/// `MomentEngine` holds the rules and calls these methods; a store holds the state and answers
/// the queries with its indexes. The catalog implements it inside one write transaction (a
/// class wrapping GRDB's `Database`: its `mutating` requirements are met by plain methods);
/// `InMemoryMomentStore` implements it for tests and tools. Calls are synchronous and throwing:
/// an error aborts the engine's operation and the caller rolls the transaction back.
///
/// Index queries may return a **superset** of the exact answer: the engine filters exactly.
/// They must never miss an item.
public protocol MomentStore {
    // MARK: Lookups

    /// The facts of a picture, nil when the store has no such picture.
    func picture(id: Int64) throws -> PhotoFacts?
    /// The moment a picture is assigned to, nil when unassigned.
    func momentId(ofPicture id: Int64) throws -> Int64?
    /// A moment by id.
    func moment(id: Int64) throws -> Moment?
    /// The aggregates of a moment's pictures. The default reads `pictures(inMoment:)`; the
    /// catalog answers with aggregate queries over an index on (moment, capture time, key).
    func digest(ofMoment id: Int64) throws -> MomentDigest
    /// The first picture of a moment in the stable order whose cover score is at least
    /// `minimumScore` (policy `best`). The default reads `pictures(inMoment:)`.
    func earliestPicture(inMoment id: Int64, scoringAtLeast minimumScore: Double) throws -> PhotoFacts?
    /// A place by id.
    func place(id: Int64) throws -> Place?
    /// The pictures assigned to a moment, in any order.
    func pictures(inMoment id: Int64) throws -> [PhotoFacts]
    /// The moments a picture is a candidate of.
    func candidateMoments(ofPicture id: Int64) throws -> Set<Int64>
    /// The pictures that are candidates of a moment.
    func candidatePictures(ofMoment id: Int64) throws -> Set<Int64>
    /// The pictures whose uploader asked for this moment id (sidecar).
    func pictures(requestingMoment id: Int64) throws -> [PhotoFacts]
    /// The moments (declared and automatic) held at a place.
    func moments(atPlace id: Int64) throws -> [Moment]

    // MARK: Index queries (a superset is fine)

    /// Declared moments whose circle may hold `location` and whose window (with the rules'
    /// grace) may hold `time`, each with its place.
    func declaredMoments(near location: Coordinate, at time: Date, rules: MomentRules) throws -> [PlacedMoment]
    /// Pictures in automatic moments by the same author as `photo`, within the rules'
    /// automatic radius and time gap of it.
    func automaticNeighbours(of photo: PhotoFacts, rules: MomentRules) throws -> [AutomaticNeighbour]
    /// Places whose circle may hold `location`.
    func places(containing location: Coordinate) throws -> [Place]
    /// Places whose centre may lie within `radiusMetres` of `center`.
    func places(around center: Coordinate, radiusMetres: Double) throws -> [Place]
    /// Pictures with a location within `radiusMetres` of `center` and a capture time in
    /// `from ... through`: the photos a newly declared moment may pull in.
    func pictures(near center: Coordinate, radiusMetres: Double, from: Date, through: Date) throws -> [PhotoFacts]

    // MARK: Whole catalog (for `MomentEngine.rebuild`)

    /// Every picture's facts.
    func allPictures() throws -> [PhotoFacts]
    /// Every moment.
    func allMoments() throws -> [Moment]

    // MARK: Mutations

    /// Records a picture's facts (insert or replace), without assigning it.
    mutating func savePicture(_ facts: PhotoFacts) throws
    /// Forgets a picture with its assignment and its candidate records.
    mutating func deletePicture(id: Int64) throws
    /// Creates a place with a new id from the worker's own range: never an id the backend uses
    /// for its places (`InMemoryMomentStore` counts down from -1).
    mutating func createPlace(name: String?, center: Coordinate, radiusMetres: Double) throws -> Place
    /// Inserts or replaces a place with its own id (a declared moment's place, from the backend).
    mutating func savePlace(_ place: Place) throws
    /// Creates a moment with a new id (the given id is ignored) and returns it. The id comes
    /// from the worker's own range: never one the backend uses for declared moments, which keep
    /// the backend's ids (`InMemoryMomentStore` counts down from -1).
    mutating func createMoment(_ moment: Moment) throws -> Moment
    /// Inserts or replaces a moment with its own id.
    mutating func saveMoment(_ moment: Moment) throws
    /// Deletes a moment, unassigning its pictures and dropping its candidate records.
    mutating func deleteMoment(id: Int64) throws
    /// Moves every picture of one moment into another (a merge). The default assigns them one by
    /// one; the catalog can do it in one statement.
    mutating func movePictures(fromMoment source: Int64, toMoment target: Int64) throws
    /// Assigns a picture to a moment, or unassigns it (nil).
    mutating func assign(picture id: Int64, to momentId: Int64?) throws
    /// Records a picture as a candidate of a moment; recording twice is harmless.
    mutating func recordCandidate(picture id: Int64, moment momentId: Int64) throws
    /// Drops a candidate record; dropping a missing one is harmless.
    mutating func removeCandidate(picture id: Int64, moment momentId: Int64) throws
}

extension MomentStore {
    /// Computed from `pictures(inMoment:)`.
    public func digest(ofMoment id: Int64) throws -> MomentDigest {
        MomentDigest(of: try pictures(inMoment: id))
    }

    /// Computed from `pictures(inMoment:)`.
    public func earliestPicture(inMoment id: Int64, scoringAtLeast minimumScore: Double) throws -> PhotoFacts? {
        try pictures(inMoment: id).filter { $0.coverScore >= minimumScore }.min(by: PictureOrder.precedes)
    }

    /// Assigns the pictures one by one.
    public mutating func movePictures(fromMoment source: Int64, toMoment target: Int64) throws {
        for picture in try pictures(inMoment: source) { try assign(picture: picture.id, to: target) }
    }
}
