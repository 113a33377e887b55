import Foundation
@testable import Moments
import SeededRandom

/// Fixed points and instants for readable tests.
enum Fixture {
    static let origin = Coordinate(latitude: 48.8566, longitude: 2.3522)
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    /// The point `metres` away from `from` at `bearing` degrees.
    static func point(_ metres: Double, bearing: Double = 90, from: Coordinate = origin) -> Coordinate {
        Geo.destination(from: from, bearingDegrees: bearing, distanceMetres: metres)
    }

    /// t0 plus `minutes`.
    static func time(_ minutes: Double) -> Date { t0.addingTimeInterval(minutes * 60) }

    /// A photo; its key sorts like its id unless given.
    static func photo(_ id: Int64, author: String? = "ana", minutes: Double? = 0, at location: Coordinate? = origin,
                      key: String? = nil, requested: Int64? = nil, score: Double = 0.5) -> PhotoFacts {
        PhotoFacts(id: id, key: key ?? String(format: "k%06lld", id), author: author,
                   capturedAt: minutes.map(time), location: location, requestedMomentId: requested, coverScore: score)
    }

    /// A declared moment with its place (place id = moment id + 1000).
    static func declared(_ id: Int64, at center: Coordinate = origin, radius: Double = 100,
                         from start: Double = 0, to end: Double = 60, creator: String? = "owner",
                         visibility: Visibility = .public, invitees: Set<String> = []) -> PlacedMoment {
        let place = Place(id: id + 1000, name: "place \(id)", center: center, radiusMetres: radius)
        let moment = Moment(id: id, kind: .declared, placeId: place.id, start: time(start), end: time(end),
                            creator: creator, visibility: visibility, invitees: invitees, title: "moment \(id)")
        return PlacedMoment(moment: moment, place: place)
    }
}

/// An in-memory store with an engine, for terse scenario tests.
struct World {
    var store = InMemoryMomentStore()
    var engine: MomentEngine

    init(rules: MomentRules = MomentRules(graceBefore: 0, graceAfter: 0)) {
        engine = MomentEngine(rules: rules)
        store = InMemoryMomentStore(indexedFor: rules)
    }

    @discardableResult
    mutating func ingest(_ photos: PhotoFacts...) throws -> [MomentEvent] {
        try engine.ingest(photos, into: &store)
    }

    @discardableResult
    mutating func declare(_ placed: PlacedMoment) throws -> [MomentEvent] {
        try engine.declare(placed.moment, at: placed.place, as: .create, into: &store)
    }

    /// Declares again a moment that exists (an edit).
    @discardableResult
    mutating func update(_ placed: PlacedMoment) throws -> [MomentEvent] {
        try engine.declare(placed.moment, at: placed.place, as: .update, into: &store)
    }

    @discardableResult
    mutating func remove(_ id: Int64) throws -> [MomentEvent] {
        try engine.remove(pictureId: id, from: &store)
    }

    func momentOf(_ pictureId: Int64) -> Int64? { store.momentId(ofPicture: pictureId) }
    func moment(of pictureId: Int64) -> Moment? { momentOf(pictureId).flatMap { store.moment(id: $0) } }
    func members(_ momentId: Int64?) -> Set<Int64> {
        momentId.map { Set(store.pictures(inMoment: $0).map(\.id)) } ?? []
    }
    var automaticMoments: [Moment] { store.allMoments().filter { $0.kind == .automatic } }
}

/// The order-independent shape of a store's moment state: what must not depend on
/// arrival order. Automatic moments are named by their pictures' keys, declared ones by id.
struct Snapshot: Equatable, CustomStringConvertible {
    var declared: [Int64: Set<String>] = [:]
    var automatic: Set<Set<String>> = []
    var covers: [Set<String>: String] = [:]
    var automaticWindows: [Set<String>: ClosedRange<Date>] = [:]
    var candidates: Set<String> = []
    var unassigned: Set<String> = []

    init(_ store: InMemoryMomentStore) {
        let keys = Dictionary(uniqueKeysWithValues: store.allPictures().map { ($0.id, $0.key) })
        for moment in store.allMoments() {
            let members = Set(store.pictures(inMoment: moment.id).map(\.key))
            if moment.kind == .declared { declared[moment.id] = members } else { automatic.insert(members) }
            if let cover = moment.coverPictureId { covers[members] = keys[cover] }
            if moment.kind == .automatic { automaticWindows[members] = moment.start...moment.end }
            for picture in store.candidatePictures(ofMoment: moment.id) { candidates.insert("\(keys[picture] ?? "?")@\(moment.id)") }
        }
        for picture in store.allPictures() where store.momentId(ofPicture: picture.id) == nil { unassigned.insert(picture.key) }
    }

    var description: String {
        "declared \(declared.mapValues { $0.sorted() }), automatic \(automatic.map { $0.sorted() }), "
            + "covers \(covers.count), candidates \(candidates.sorted()), unassigned \(unassigned.sorted())"
    }
}
