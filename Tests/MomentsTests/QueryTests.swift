import Foundation
import Testing
@testable import Moments
import SeededRandom

@Suite("API queries")
struct QueryTests {
    @Test("Places around a point: centres within the radius, nearest first, across the date line")
    func placesAround() {
        var store = InMemoryMomentStore()
        let center = Coordinate(latitude: 0, longitude: 179.9995)
        store.savePlace(Place(id: 1, name: "east", center: Coordinate(latitude: 0, longitude: -179.9995), radiusMetres: 50))  // 111 m
        store.savePlace(Place(id: 2, name: "here", center: center, radiusMetres: 10))
        store.savePlace(Place(id: 3, name: "far", center: Geo.destination(from: center, bearingDegrees: 0, distanceMetres: 1_001),
                              radiusMetres: 5_000))
        #expect(store.places(around: center, radiusMetres: 1_000).map(\.id) == [2, 1])
        #expect(store.places(around: center, radiusMetres: 1_002).map(\.id) == [2, 1, 3])
        #expect(PlaceQuery.around(center, radiusMetres: 1_000, among: store.allPlaces()).map(\.id) == [2, 1])
    }

    @Test("Moments of a place: latest start first")
    func momentsOfAPlace() throws {
        var world = World()
        try world.declare(Fixture.declared(1, from: 0, to: 60))
        var second = Fixture.declared(2, from: 120, to: 180)
        second.place = Fixture.declared(1).place
        second.moment.placeId = second.place.id
        try world.declare(second)
        let moments = PlaceQuery.moments(at: 1001, among: world.store.moments(atPlace: 1001))
        #expect(moments.map(\.id) == [2, 1])
    }

    @Test("Pictures of a moment page in a stable order (time, then key; no time last), whatever the arrival order")
    func paging() throws {
        var rng = SplitMix64(seed: 5)
        var pictures: [PhotoFacts] = []
        for id in Int64(1)...23 {
            let minutes: Double? = id % 7 == 0 ? nil : Double(Int.random(in: 0...5, using: &rng))
            pictures.append(Fixture.photo(id, minutes: minutes, key: String(format: "%08x", rng.next() & 0xffff_ffff)))
        }
        let expected = pictures.sorted { a, b in
            switch (a.capturedAt, b.capturedAt) {
            case let (x?, y?) where x != y: x < y
            case (nil, _?): false
            case (_?, nil): true
            default: a.key < b.key
            }
        }.map(\.id)
        #expect(expected.suffix(3).allSatisfy { $0 % 7 == 0 })
        var seen: [Int64] = []
        var cursor: PictureCursor?
        var pages = 0
        repeat {
            // A new picture arriving between pages, before the cursor, does not shift later pages.
            let page = PictureOrder.page(pictures.shuffled(using: &rng), after: cursor, limit: 5)
            seen += page.pictures.map(\.id)
            cursor = try page.next.map { try #require(PictureCursor($0.description)) }  // through its token
            pages += 1
        } while cursor != nil
        #expect(seen == expected)
        #expect(pages == 5)
        #expect(PictureCursor("no colon") == nil && PictureCursor("zz:key") == nil)
    }

    @Test("A cursor survives insertions before it: an offset would repeat a picture, the cursor does not")
    func cursorIsStable() {
        var pictures = (1...6).map { Fixture.photo(Int64($0), minutes: Double($0)) }
        let first = PictureOrder.page(pictures, after: nil, limit: 3)
        pictures.append(Fixture.photo(99, minutes: 0))  // lands at the very start
        let second = PictureOrder.page(pictures, after: first.next, limit: 3)
        #expect(second.pictures.map(\.id) == [4, 5, 6])
        #expect(second.next == nil)
    }
}

@Suite("Configuration of the rules")
struct MomentRulesTests {
    @Test("The moments section decodes from snake_case keys, each missing key taking its default")
    func decoding() throws {
        let json = #"{"grace_before_seconds": 60, "automatic_radius_metres": 300, "cover_policy": "first"}"#
        let rules = try JSONDecoder().decode(MomentRules.self, from: Data(json.utf8))
        #expect(rules.graceBefore == 60 && rules.automaticRadiusMetres == 300 && rules.coverPolicy == .first)
        #expect(rules.graceAfter == MomentRules.default.graceAfter)
        #expect(rules.automaticTimeGap == 7200 && rules.automaticVisibility == .private && rules.coverMargin == 0.1)
        let empty = try JSONDecoder().decode(MomentRules.self, from: Data("{}".utf8))
        #expect(empty == .default)
        let roundTrip = try JSONDecoder().decode(MomentRules.self, from: JSONEncoder().encode(rules))
        #expect(roundTrip == rules)
    }

    @Test("Out-of-range values are refused with the key and the expected range", arguments: [
        MomentRules(graceBefore: -1), MomentRules(automaticRadiusMetres: 0), MomentRules(automaticTimeGap: .nan),
        MomentRules(coverMargin: 1.5),
    ])
    func validation(_ rules: MomentRules) {
        #expect(throws: MomentError.self) { try rules.validate() }
        do { try rules.validate() } catch {
            #expect(error.description.hasPrefix("moments."))
            #expect(error.description.contains("expected"))
        }
    }

    @Test("The defaults are valid")
    func defaultsAreValid() throws {
        try MomentRules.default.validate()
    }
}
