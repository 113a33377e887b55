import Foundation
import Testing
@testable import Moments

@Suite("Automatic moments")
struct AutomaticMomentTests {
    @Test("The same author's photos within the radius and the gap form one private moment spanning them")
    func oneMoment() throws {
        var world = World()
        let events = try world.ingest(Fixture.photo(10, minutes: 0), Fixture.photo(11, minutes: 90, at: Fixture.point(140)),
                                      Fixture.photo(12, minutes: 200, at: Fixture.point(280)))
        let moment = try #require(world.moment(of: 10))
        #expect(world.members(moment.id) == [10, 11, 12])
        #expect(moment.kind == .automatic && moment.visibility == .private && moment.creator == "ana")
        #expect(moment.start == Fixture.time(0) && moment.end == Fixture.time(200))
        #expect(events.filter { if case .momentCreated = $0 { true } else { false } }.count == 1)
        // Its place is new, centred on the anchor (the earliest photo), with the default radius.
        let place = try #require(world.store.place(id: moment.placeId))
        #expect(place.center == Fixture.origin && place.radiusMetres == 150 && place.name == nil)
    }

    struct LinkCase: Sendable, CustomTestStringConvertible {
        let name: String
        let metres: Double
        let minutes: Double
        let otherAuthor: Bool
        let linked: Bool
        var testDescription: String { name }
    }

    static let links: [LinkCase] = [
        .init(name: "radius - 1 m", metres: 149, minutes: 0, otherAuthor: false, linked: true),
        .init(name: "radius + 1 m", metres: 151, minutes: 0, otherAuthor: false, linked: false),
        .init(name: "gap exactly", metres: 0, minutes: 120, otherAuthor: false, linked: true),
        .init(name: "gap + 1 s", metres: 0, minutes: 120 + 1.0 / 60, otherAuthor: false, linked: false),
        .init(name: "another author, same spot and time", metres: 0, minutes: 0, otherAuthor: true, linked: false),
    ]

    @Test("Two photos link at the radius and gap boundaries, inclusive, and only for one author", arguments: links)
    func link(_ c: LinkCase) throws {
        var world = World()
        try world.ingest(Fixture.photo(10), Fixture.photo(11, author: c.otherAuthor ? "ben" : "ana", minutes: c.minutes,
                                                          at: Fixture.point(c.metres)))
        #expect((world.momentOf(10) == world.momentOf(11)) == c.linked)
    }

    @Test("An automatic moment uses the existing place that holds its anchor best")
    func existingPlace() throws {
        var world = World()
        world.store.savePlace(Place(id: 500, name: "far", center: Fixture.point(80), radiusMetres: 100))  // ratio 0.8
        world.store.savePlace(Place(id: 501, name: "near", center: Fixture.point(20), radiusMetres: 100))  // ratio 0.2
        world.store.savePlace(Place(id: 502, name: "tiny", center: Fixture.point(300), radiusMetres: 10))
        try world.ingest(Fixture.photo(10))
        #expect(world.moment(of: 10)?.placeId == 501)
        #expect(world.store.allPlaces().count == 3)
    }

    @Test("A late photo bridging two moments merges them into the one holding the earliest picture")
    func bridge() throws {
        var world = World()
        try world.ingest(Fixture.photo(10, minutes: 0, at: Fixture.point(0)), Fixture.photo(11, minutes: 0, at: Fixture.point(250)))
        let (a, b) = (try #require(world.momentOf(10)), try #require(world.momentOf(11)))
        #expect(a != b)
        let events = try world.ingest(Fixture.photo(12, minutes: 0, at: Fixture.point(125)))
        // Same capture time: photo 10 is earlier by key, so its moment survives.
        #expect(events.contains(.momentMerged(from: b, into: a)))
        #expect(events.filter { if case .momentMerged = $0 { true } else { false } }.count == 1)
        #expect(world.members(a) == [10, 11, 12])
        #expect(world.store.moment(id: b) == nil)
        #expect(world.automaticMoments.count == 1)
    }

    @Test("A photo linking three moments merges all of them into the earliest one")
    func threeWayMerge() throws {
        var world = World()
        for (i, bearing) in [0.0, 120, 240].enumerated() {
            try world.ingest(Fixture.photo(Int64(10 + i), at: Fixture.point(140, bearing: bearing)))
        }
        let ids = Set([10, 11, 12].compactMap { world.momentOf($0) })
        #expect(ids.count == 3)
        let first = world.momentOf(10)
        let events = try world.ingest(Fixture.photo(13, minutes: 1))
        #expect(events.filter { if case .momentMerged = $0 { true } else { false } }.count == 2)
        #expect(world.momentOf(13) == first)
        #expect(world.automaticMoments.count == 1)
    }

    @Test("An earlier photo moves the window and the place to the new anchor")
    func earlierAnchor() throws {
        var world = World()
        try world.ingest(Fixture.photo(10, minutes: 60))
        let before = try #require(world.moment(of: 10))
        try world.ingest(Fixture.photo(11, minutes: 0, at: Fixture.point(149, bearing: 0)))
        let after = try #require(world.moment(of: 10))
        #expect(after.id == before.id && after.start == Fixture.time(0) && after.end == Fixture.time(60))
        // The old place (centred on photo 10) holds the new anchor 149 m away, but a moment's place
        // is the place holding the anchor best: the same as a rebuild would pick.
        #expect(try #require(world.store.place(id: after.placeId)).contains(Fixture.point(149, bearing: 0)))
    }

    @Test("Removing the middle of a chain splits the moment; removing the last photo deletes it")
    func removalSplits() throws {
        var world = World()
        try world.ingest(Fixture.photo(10, at: Fixture.point(0)), Fixture.photo(11, at: Fixture.point(120)),
                         Fixture.photo(12, at: Fixture.point(240)))
        let original = try #require(world.momentOf(10))
        let events = try world.remove(11)
        #expect(events.contains(.pictureRemoved(pictureId: 11, momentId: original)))
        #expect(world.momentOf(10) == original)  // the component with the anchor keeps the id
        let split = try #require(world.momentOf(12))
        #expect(split != original)
        #expect(events.contains(.pictureAdded(pictureId: 12, momentId: split)))
        let gone = try world.remove(12)
        #expect(gone.contains(.momentDeleted(momentId: split)))
        #expect(world.automaticMoments.count == 1)
    }

    @Test("Ingesting the same facts twice changes nothing; new facts for an id replace the old")
    func idempotent() throws {
        var world = World()
        try world.ingest(Fixture.photo(10))
        let again = try world.ingest(Fixture.photo(10))
        #expect(again.isEmpty)
        try world.ingest(Fixture.photo(10, at: Fixture.point(10_000)))
        #expect(world.automaticMoments.count == 1)
        #expect(world.store.place(id: try #require(world.moment(of: 10)).placeId)?.contains(Fixture.point(10_000)) == true)
    }
}

@Suite("Photos without time or place, and sidecar moment ids")
struct SidecarTests {
    @Test("A photo without time or location is kept, unassigned", arguments: [
        Fixture.photo(10, minutes: nil), Fixture.photo(10, at: nil), Fixture.photo(10, minutes: nil, at: nil),
        Fixture.photo(10, at: Coordinate(latitude: 91, longitude: 0)),
    ])
    func unassigned(_ photo: PhotoFacts) throws {
        var world = World()
        try world.declare(Fixture.declared(1))
        let events = try world.ingest(photo)
        #expect(events == [.pictureAdded(pictureId: 10, momentId: nil)])
        #expect(world.store.picture(id: 10) == photo)
        #expect(world.momentOf(10) == nil)
    }

    @Test("A sidecar's moment id places a photo without time or location, when the moment admits the author")
    func requestedJoins() throws {
        var world = World()
        try world.declare(Fixture.declared(1, visibility: .private, invitees: ["ana"]))
        try world.declare(Fixture.declared(2, at: Fixture.point(50_000), visibility: .private))
        try world.ingest(Fixture.photo(10, minutes: nil, at: nil, requested: 1))
        let refused = try world.ingest(Fixture.photo(11, minutes: nil, at: nil, requested: 2))
        try world.ingest(Fixture.photo(12, minutes: nil, requested: 999))  // no such moment
        #expect(world.momentOf(10) == 1)
        #expect(world.momentOf(11) == nil)
        #expect(refused.contains(.candidateRecorded(pictureId: 11, momentId: 2)))
        #expect(world.momentOf(12) == nil)
    }

    @Test("A requested moment wins over a better geographic match, when admitted")
    func requestedWins() throws {
        var world = World()
        try world.declare(Fixture.declared(1, creator: "ana"))
        try world.declare(Fixture.declared(2, at: Fixture.point(20_000)))
        try world.ingest(Fixture.photo(10, minutes: 5, requested: 2))
        #expect(world.momentOf(10) == 2)
    }

    @Test("A photo naming a moment declared later joins it when it is declared")
    func requestedLater() throws {
        var world = World()
        try world.ingest(Fixture.photo(10, minutes: nil, at: nil, requested: 1), Fixture.photo(11, minutes: 5, requested: 1))
        #expect(world.momentOf(10) == nil)
        let automatic = try #require(world.moment(of: 11))
        #expect(automatic.kind == .automatic)
        let events = try world.declare(Fixture.declared(1, at: Fixture.point(30_000)))
        #expect(world.members(1) == [10, 11])
        #expect(events.contains(.momentDeleted(momentId: automatic.id)))
        #expect(world.automaticMoments.isEmpty)
    }
}
