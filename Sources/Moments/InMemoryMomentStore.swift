import Foundation

/// A `MomentStore` in memory, indexed like the catalog so that no query scans everything:
/// a space-time grid per author for automatic neighbours, multi-level Cartesian grids for
/// places, declared moments and pictures (see `GeoGrid.swift` and the MomentsScale article).
///
/// A value type: copies are independent snapshots. Used by tests, by tools that replay a
/// catalog, and as the reference the catalog's implementation must agree with.
public struct InMemoryMomentStore: MomentStore, Sendable {
    private var picturesById: [Int64: PhotoFacts] = [:]
    private var assignment: [Int64: Int64] = [:]
    private var membersByMoment: [Int64: Set<Int64>] = [:]
    private var candidatesByPicture: [Int64: Set<Int64>] = [:]
    private var candidatesByMoment: [Int64: Set<Int64>] = [:]
    private var requesters: [Int64: Set<Int64>] = [:]
    private var momentsById: [Int64: Moment] = [:]
    private var placesById: [Int64: Place] = [:]
    private var momentsByPlace: [Int64: Set<Int64>] = [:]
    /// Ids the store allocates (automatic moments, their places) count down from -1: the
    /// backend's ids for declared moments and their places are positive, so they never collide.
    private var nextMomentId: Int64 = -1
    private var nextPlaceId: Int64 = -1

    /// Pictures in automatic moments, by author, place and time.
    private var automaticIndex: NeighbourIndex
    /// Every located picture (for newly declared moments).
    private var pictureGrid = PointGrid()
    /// Place circles (for `places(containing:)`) and centres (for `places(around:)`).
    private var placeDiscs = DiscGrid()
    private var placeCentres = PointGrid()
    /// Declared moments, filed by their place's circle.
    private var declaredDiscs = DiscGrid()

    /// An empty store whose automatic-neighbour index is sized for `rules` (queries with other
    /// rules still work, only slower).
    public init(indexedFor rules: MomentRules = .default) {
        automaticIndex = NeighbourIndex(rules: rules)
    }

    // MARK: Lookups

    /// See `MomentStore`.
    public func picture(id: Int64) -> PhotoFacts? { picturesById[id] }
    /// See `MomentStore`.
    public func momentId(ofPicture id: Int64) -> Int64? { assignment[id] }
    /// See `MomentStore`.
    public func moment(id: Int64) -> Moment? { momentsById[id] }
    /// See `MomentStore`.
    public func place(id: Int64) -> Place? { placesById[id] }
    /// See `MomentStore`.
    public func pictures(inMoment id: Int64) -> [PhotoFacts] {
        (membersByMoment[id] ?? []).compactMap { picturesById[$0] }
    }
    /// See `MomentStore`.
    public func candidateMoments(ofPicture id: Int64) -> Set<Int64> { candidatesByPicture[id] ?? [] }
    /// See `MomentStore`.
    public func candidatePictures(ofMoment id: Int64) -> Set<Int64> { candidatesByMoment[id] ?? [] }
    /// See `MomentStore`.
    public func pictures(requestingMoment id: Int64) -> [PhotoFacts] {
        (requesters[id] ?? []).compactMap { picturesById[$0] }
    }
    /// See `MomentStore`.
    public func moments(atPlace id: Int64) -> [Moment] {
        (momentsByPlace[id] ?? []).compactMap { momentsById[$0] }
    }

    // MARK: Index queries

    /// See `MomentStore`.
    public func declaredMoments(near location: Coordinate, at time: Date, rules: MomentRules) -> [PlacedMoment] {
        declaredDiscs.candidates(containing: location).compactMap { id in
            guard let moment = momentsById[id], moment.window(contains: time, rules: rules),
                  let place = placesById[moment.placeId] else { return nil }
            return PlacedMoment(moment: moment, place: place)
        }
    }

    /// See `MomentStore`.
    public func automaticNeighbours(of photo: PhotoFacts, rules: MomentRules) -> [AutomaticNeighbour] {
        automaticIndex.candidates(near: photo, rules: rules).compactMap { id in
            guard let facts = picturesById[id], let momentId = assignment[id] else { return nil }
            return AutomaticNeighbour(photo: facts, momentId: momentId)
        }
    }

    /// See `MomentStore`.
    public func places(containing location: Coordinate) -> [Place] {
        placeDiscs.candidates(containing: location).compactMap { placesById[$0] }
    }

    /// See `MomentStore`. Exact: nearest first, then by id.
    public func places(around center: Coordinate, radiusMetres: Double) -> [Place] {
        PlaceQuery.around(center, radiusMetres: radiusMetres,
                          among: placeCentres.candidates(near: center, radius: radiusMetres).compactMap { placesById[$0] })
    }

    /// See `MomentStore`.
    public func pictures(near center: Coordinate, radiusMetres: Double, from: Date, through: Date) -> [PhotoFacts] {
        pictureGrid.candidates(near: center, radius: radiusMetres).compactMap { id in
            guard let facts = picturesById[id], let time = facts.capturedAt, from <= time, time <= through else { return nil }
            return facts
        }
    }

    // MARK: Whole catalog

    /// See `MomentStore`.
    public func allPictures() -> [PhotoFacts] { Array(picturesById.values) }
    /// See `MomentStore`.
    public func allMoments() -> [Moment] { Array(momentsById.values) }
    /// Every place.
    public func allPlaces() -> [Place] { Array(placesById.values) }

    // MARK: Mutations

    /// See `MomentStore`.
    public mutating func savePicture(_ facts: PhotoFacts) {
        if picturesById[facts.id] != nil { deletePicture(id: facts.id) }
        picturesById[facts.id] = facts
        if let location = facts.timeAndPlace?.location { pictureGrid.insert(facts.id, at: location) }
        if let requested = facts.requestedMomentId { requesters[requested, default: []].insert(facts.id) }
    }

    /// See `MomentStore`.
    public mutating func deletePicture(id: Int64) {
        guard let facts = picturesById[id] else { return }
        assign(picture: id, to: nil)
        for momentId in candidatesByPicture[id] ?? [] { removeCandidate(picture: id, moment: momentId) }
        if let location = facts.timeAndPlace?.location { pictureGrid.remove(id, at: location) }
        if let requested = facts.requestedMomentId { Self.remove(id, from: &requesters, at: requested) }
        picturesById[id] = nil
    }

    /// See `MomentStore`.
    public mutating func createPlace(name: String?, center: Coordinate, radiusMetres: Double) -> Place {
        let place = Place(id: nextPlaceId, name: name, center: center, radiusMetres: radiusMetres)
        savePlace(place)
        return place
    }

    /// See `MomentStore`.
    public mutating func savePlace(_ place: Place) {
        let old = placesById[place.id]
        if let old {
            placeDiscs.remove(old.id, center: old.center, radius: old.radiusMetres)
            placeCentres.remove(old.id, at: old.center)
        }
        placesById[place.id] = place
        placeDiscs.insert(place.id, center: place.center, radius: place.radiusMetres)
        placeCentres.insert(place.id, at: place.center)
        nextPlaceId = min(nextPlaceId, place.id - 1)
        if let old, !old.hasSameGeometry(as: place) {
            for momentId in momentsByPlace[place.id] ?? [] where momentsById[momentId]?.kind == .declared {
                declaredDiscs.remove(momentId, center: old.center, radius: old.radiusMetres)
                declaredDiscs.insert(momentId, center: place.center, radius: place.radiusMetres)
            }
        }
    }

    /// See `MomentStore`.
    public mutating func createMoment(_ moment: Moment) -> Moment {
        var created = moment
        created.id = nextMomentId
        saveMoment(created)
        return created
    }

    /// See `MomentStore`.
    public mutating func saveMoment(_ moment: Moment) {
        let old = momentsById[moment.id]
        if let old, old.placeId != moment.placeId || old.kind != moment.kind {
            unfile(old)
        }
        momentsById[moment.id] = moment
        nextMomentId = min(nextMomentId, moment.id - 1)
        if old == nil || old?.placeId != moment.placeId || old?.kind != moment.kind { file(moment) }
    }

    /// See `MomentStore`.
    public mutating func deleteMoment(id: Int64) {
        guard let moment = momentsById[id] else { return }
        for pictureId in membersByMoment[id] ?? [] { assign(picture: pictureId, to: nil) }
        for pictureId in candidatesByMoment[id] ?? [] { removeCandidate(picture: pictureId, moment: id) }
        unfile(moment)
        momentsById[id] = nil
    }

    /// See `MomentStore`.
    public mutating func assign(picture id: Int64, to momentId: Int64?) {
        guard let facts = picturesById[id] else { return }
        if let old = assignment[id] {
            Self.remove(id, from: &membersByMoment, at: old)
            if momentsById[old]?.kind == .automatic { automaticIndex.remove(id, photo: facts) }
        }
        assignment[id] = momentId
        if let momentId {
            membersByMoment[momentId, default: []].insert(id)
            if momentsById[momentId]?.kind == .automatic { automaticIndex.insert(id, photo: facts) }
        }
    }

    /// See `MomentStore`.
    public mutating func recordCandidate(picture id: Int64, moment momentId: Int64) {
        candidatesByPicture[id, default: []].insert(momentId)
        candidatesByMoment[momentId, default: []].insert(id)
    }

    /// See `MomentStore`.
    public mutating func removeCandidate(picture id: Int64, moment momentId: Int64) {
        Self.remove(momentId, from: &candidatesByPicture, at: id)
        Self.remove(id, from: &candidatesByMoment, at: momentId)
    }

    // MARK: Index upkeep

    private mutating func file(_ moment: Moment) {
        momentsByPlace[moment.placeId, default: []].insert(moment.id)
        if moment.kind == .declared, let place = placesById[moment.placeId] {
            declaredDiscs.insert(moment.id, center: place.center, radius: place.radiusMetres)
        }
    }

    private mutating func unfile(_ moment: Moment) {
        Self.remove(moment.id, from: &momentsByPlace, at: moment.placeId)
        if moment.kind == .declared, let place = placesById[moment.placeId] {
            declaredDiscs.remove(moment.id, center: place.center, radius: place.radiusMetres)
        }
    }

    private static func remove(_ id: Int64, from index: inout [Int64: Set<Int64>], at key: Int64) {
        index[key]?.remove(id)
        if index[key]?.isEmpty == true { index[key] = nil }
    }
}
