import Foundation
import Testing
@testable import Moments
import SeededRandom

@Suite("In-memory store and its indexes")
struct InMemoryMomentStoreTests {
    /// Many photos by one author around one city over a year: a neighbour query must read a
    /// handful of them, not all (scale: the index, not a timing).
    @Test("Automatic-neighbour queries read a few nearby photos, not the whole catalog")
    func neighbourQueriesAreLocal() throws {
        var rng = SplitMix64(seed: 1)
        let rules = MomentRules.default
        var store = InMemoryMomentStore(indexedFor: rules)
        let engine = MomentEngine(rules: rules)
        let count = 3_000
        for id in 1...count {
            let point = Geo.destination(from: Fixture.origin, bearingDegrees: .random(in: 0..<360, using: &rng),
                                        distanceMetres: .random(in: 0...20_000, using: &rng))
            _ = try engine.ingest(Fixture.photo(Int64(id), minutes: .random(in: 0...525_600, using: &rng), at: point), into: &store)
        }
        let probe = Fixture.photo(0, minutes: 1_000, at: Fixture.origin)
        let read = store.automaticNeighbours(of: probe, rules: rules).count
        #expect(read < count / 100, "read \(read) of \(count)")
        #expect(store.places(containing: Fixture.origin).count < count / 100)
    }

    @Test("Index answers hold every exact answer (compared with brute force)")
    func indexesAreSupersets() throws {
        var rng = SplitMix64(seed: 2)
        let rules = MomentRules(graceBefore: 300, graceAfter: 300)
        var world = World(rules: rules)
        var declared: [PlacedMoment] = []
        for id in Int64(1)...30 {
            let placed = Fixture.declared(id, at: Fixture.point(.random(in: 0...3_000, using: &rng), bearing: .random(in: 0..<360, using: &rng)),
                                          radius: .random(in: 20...800, using: &rng), from: .random(in: 0...600, using: &rng),
                                          to: 700, creator: "x")
            declared.append(placed)
            try world.declare(placed)
        }
        var photos: [PhotoFacts] = []
        for id in Int64(1)...400 {
            let photo = Fixture.photo(id, author: ["ana", "ben"].randomElement(using: &rng),
                                      minutes: .random(in: 0...800, using: &rng),
                                      at: Fixture.point(.random(in: 0...3_500, using: &rng), bearing: .random(in: 0..<360, using: &rng)))
            photos.append(photo)
            try world.ingest(photo)
        }
        for photo in photos {
            let tp = try #require(photo.timeAndPlace)
            let exact = Set(declared.filter { $0.matches(location: tp.location, time: tp.time, rules: rules) }.map(\.moment.id))
            let indexed = Set(world.store.declaredMoments(near: tp.location, at: tp.time, rules: rules).map(\.moment.id))
            #expect(exact.isSubset(of: indexed))
            let holding = Set(world.store.allPlaces().filter { $0.contains(tp.location) }.map(\.id))
            #expect(holding.isSubset(of: Set(world.store.places(containing: tp.location).map(\.id))))
            let linked = Set(photos.filter { $0.id != photo.id && AutomaticClustering.linked(photo, $0, rules: rules)
                && world.moment(of: $0.id)?.kind == .automatic }.map(\.id))
            let neighbours = Set(world.store.automaticNeighbours(of: photo, rules: rules).map(\.photo.id))
            #expect(linked.isSubset(of: neighbours))
        }
        for placed in declared {
            let from = placed.moment.start.addingTimeInterval(-rules.graceBefore)
            let through = placed.moment.end.addingTimeInterval(rules.graceAfter)
            let exact = Set(photos.filter { placed.matches(location: $0.location!, time: $0.capturedAt!, rules: rules) }.map(\.id))
            let indexed = Set(world.store.pictures(near: placed.place.center, radiusMetres: placed.place.radiusMetres,
                                                   from: from, through: through).map(\.id))
            #expect(exact.isSubset(of: indexed))
        }
    }

    @Test("An engine whose rules differ from the store's index still finds every neighbour")
    func rulesLargerThanTheIndex() throws {
        let wide = MomentRules(graceBefore: 0, graceAfter: 0, automaticRadiusMetres: 50_000, automaticTimeGap: 30 * 86_400)
        var store = InMemoryMomentStore(indexedFor: .default)
        let engine = MomentEngine(rules: wide)
        _ = try engine.ingest([Fixture.photo(1, minutes: 0), Fixture.photo(2, minutes: 20 * 1_440, at: Fixture.point(40_000))],
                              into: &store)
        #expect(store.momentId(ofPicture: 1) == store.momentId(ofPicture: 2))
    }

    @Test("Ids the store allocates never collide with the backend's declared ids")
    func idsAreDisjoint() throws {
        var world = World()
        try world.ingest(Fixture.photo(10))
        let automatic = try #require(world.moment(of: 10))
        #expect(automatic.id < 0 && automatic.placeId < 0)
        try world.declare(Fixture.declared(1, at: Fixture.point(5_000)))
        #expect(world.store.moment(id: 1)?.kind == .declared && world.store.moment(id: automatic.id)?.kind == .automatic)
    }

    @Test("Changing a declared place's circle re-evaluates every moment held there")
    func placeChange() throws {
        var world = World()
        let first = Fixture.declared(1, radius: 50)
        var second = Fixture.declared(2, radius: 50, from: 100, to: 160)
        second.place = first.place
        second.moment.placeId = first.place.id
        try world.declare(first)
        try world.declare(second)
        try world.ingest(Fixture.photo(10, minutes: 10, at: Fixture.point(80)), Fixture.photo(11, minutes: 110, at: Fixture.point(80)))
        #expect(world.momentOf(10) != 1 && world.momentOf(11) != 2)
        var wider = first
        wider.place.radiusMetres = 100
        try world.update(wider)
        #expect(world.momentOf(10) == 1)
        #expect(world.momentOf(11) == 2)
        #expect(world.automaticMoments.isEmpty)
    }
}
