import Foundation
import Testing
@testable import Moments

@Suite("Declared moments")
struct DeclaredMomentTests {
    struct BoundaryCase: Sendable, CustomTestStringConvertible {
        let name: String
        let metres: Double
        let bearing: Double
        let seconds: Double  // capture time, seconds from the window's start (window is 0 ... 3600 s)
        let grace: TimeInterval
        let joins: Bool
        var testDescription: String { name }
    }

    static let boundaries: [BoundaryCase] = [
        .init(name: "centre, inside the window", metres: 0, bearing: 0, seconds: 1800, grace: 0, joins: true),
        .init(name: "radius - 1 m", metres: 99, bearing: 90, seconds: 1800, grace: 0, joins: true),
        .init(name: "radius + 1 m", metres: 101, bearing: 90, seconds: 1800, grace: 0, joins: false),
        .init(name: "radius - 1 m due north", metres: 99, bearing: 0, seconds: 1800, grace: 0, joins: true),
        .init(name: "radius + 1 m due south-west", metres: 101, bearing: 225, seconds: 1800, grace: 0, joins: false),
        .init(name: "at the start exactly", metres: 0, bearing: 0, seconds: 0, grace: 0, joins: true),
        .init(name: "1 s before the start", metres: 0, bearing: 0, seconds: -1, grace: 0, joins: false),
        .init(name: "at the end exactly", metres: 0, bearing: 0, seconds: 3600, grace: 0, joins: true),
        .init(name: "1 s after the end", metres: 0, bearing: 0, seconds: 3601, grace: 0, joins: false),
        .init(name: "at start - grace", metres: 0, bearing: 0, seconds: -600, grace: 600, joins: true),
        .init(name: "1 s before start - grace", metres: 0, bearing: 0, seconds: -601, grace: 600, joins: false),
        .init(name: "at end + grace", metres: 0, bearing: 0, seconds: 4200, grace: 600, joins: true),
        .init(name: "1 s after end + grace", metres: 0, bearing: 0, seconds: 4201, grace: 600, joins: false),
    ]

    @Test("A photo joins when within the radius and the window with grace, boundaries inclusive",
          arguments: boundaries)
    func boundary(_ c: BoundaryCase) throws {
        var world = World(rules: MomentRules(graceBefore: c.grace, graceAfter: c.grace))
        try world.declare(Fixture.declared(1, radius: 100, from: 0, to: 60))
        let photo = Fixture.photo(10, minutes: c.seconds / 60, at: Fixture.point(c.metres, bearing: c.bearing))
        let events = try world.ingest(photo)
        #expect((world.momentOf(10) == 1) == c.joins)
        #expect(events.contains(.pictureAdded(pictureId: 10, momentId: 1)) == c.joins)
    }

    @Test("Across the date line: a moment at 179.9999 takes a photo at -179.9999 (22 m away)")
    func dateLine() throws {
        var world = World()
        try world.declare(Fixture.declared(1, at: Coordinate(latitude: 0, longitude: 179.9999), radius: 30))
        try world.ingest(Fixture.photo(10, minutes: 5, at: Coordinate(latitude: 0, longitude: -179.9999)))
        #expect(world.momentOf(10) == 1)
    }

    @Test("Pictures taken in the window but uploaded days later still join (after-the-fact)")
    func afterTheFact() throws {
        var world = World()
        try world.declare(Fixture.declared(1, from: 0, to: 60))
        try world.ingest(Fixture.photo(10, minutes: 30))  // arrives "days later": upload time plays no part
        #expect(world.momentOf(10) == 1)
    }

    @Test("Declaring a moment pulls in the matching photos already catalogued, shrinking their automatic moment")
    func declarationPullsPhotosIn() throws {
        var world = World()
        // One automatic chain of three photos 120 m apart; the declared circle will hold only the middle one.
        try world.ingest(Fixture.photo(10, minutes: 0, at: Fixture.point(0)),
                         Fixture.photo(11, minutes: 1, at: Fixture.point(120)),
                         Fixture.photo(12, minutes: 2, at: Fixture.point(240)))
        #expect(world.automaticMoments.count == 1)
        let events = try world.declare(Fixture.declared(1, at: Fixture.point(120), radius: 50, from: 0, to: 10))
        #expect(world.momentOf(11) == 1)
        #expect(events.contains(.pictureAdded(pictureId: 11, momentId: 1)))
        // The chain is broken in two: 10 and 12 are now 240 m apart.
        #expect(world.automaticMoments.count == 2)
        #expect(world.momentOf(10) != world.momentOf(12))
        #expect(events.contains { if case .momentCreated(let m) = $0 { m.kind == .automatic } else { false } })
    }

    @Test("A private moment takes its creator's and invitees' photos; a stranger's becomes a candidate and goes on")
    func privateMoment() throws {
        var world = World()
        try world.declare(Fixture.declared(1, creator: "owner", visibility: .private, invitees: ["guest"]))
        try world.ingest(Fixture.photo(10, author: "owner", minutes: 5),
                         Fixture.photo(11, author: "guest", minutes: 6))
        let events = try world.ingest(Fixture.photo(12, author: "stranger", minutes: 7))
        let anonymous = try world.ingest(Fixture.photo(13, author: nil, minutes: 8))
        #expect(world.momentOf(10) == 1)
        #expect(world.momentOf(11) == 1)
        #expect(world.momentOf(12) != 1)
        #expect(events.contains(.candidateRecorded(pictureId: 12, momentId: 1)))
        #expect(anonymous.contains(.candidateRecorded(pictureId: 13, momentId: 1)))
        #expect(world.store.candidatePictures(ofMoment: 1) == [12, 13])
        // The stranger's photo went on to the next rule: its own automatic moment, private to it.
        let auto = try #require(world.moment(of: 12))
        #expect(auto.kind == .automatic && auto.creator == "stranger" && auto.visibility == .private)
    }

    @Test("A stranger's photo matching a private and a public moment joins the public one and is a candidate of the private one")
    func privateThenPublic() throws {
        var world = World()
        try world.declare(Fixture.declared(1, visibility: .private))
        try world.declare(Fixture.declared(2, radius: 200, visibility: .public))
        try world.ingest(Fixture.photo(10, author: "stranger", minutes: 5))
        #expect(world.momentOf(10) == 2)
        #expect(world.store.candidateMoments(ofPicture: 10) == [1])
    }

    @Test("Inviting the stranger later turns the candidate into a member")
    func invitationLater() throws {
        var world = World()
        var placed = Fixture.declared(1, visibility: .private)
        try world.declare(placed)
        try world.ingest(Fixture.photo(10, author: "stranger", minutes: 5))
        placed.moment.invitees = ["stranger"]
        let events = try world.update(placed)
        #expect(world.momentOf(10) == 1)
        #expect(world.store.candidateMoments(ofPicture: 10).isEmpty)
        #expect(events.contains(.candidateWithdrawn(pictureId: 10, momentId: 1)))
        #expect(world.automaticMoments.isEmpty)  // its automatic moment was emptied and deleted
    }

    struct TieBreak: Sendable, CustomTestStringConvertible {
        let name: String
        let a: PlacedMoment
        let b: PlacedMoment
        let winner: Int64
        var testDescription: String { name }
    }

    /// Each case differs from the one before in the rule it exercises.
    static let tieBreaks: [TieBreak] = [
        .init(name: "author's own beats a nearer public moment",
              a: Fixture.declared(1, at: Fixture.point(0), radius: 100, creator: "someone"),
              b: Fixture.declared(2, at: Fixture.point(60), radius: 100, creator: "ana"), winner: 2),
        .init(name: "invited beats a nearer public moment",
              a: Fixture.declared(1, at: Fixture.point(0), radius: 100, creator: "someone"),
              b: Fixture.declared(2, at: Fixture.point(60), radius: 100, creator: "x", invitees: ["ana"]), winner: 2),
        .init(name: "then the smallest distance/radius ratio (not the smallest distance)",
              a: Fixture.declared(1, at: Fixture.point(30), radius: 50, creator: "x"),  // ratio 0.6
              b: Fixture.declared(2, at: Fixture.point(40), radius: 100, creator: "y"), winner: 2),  // ratio 0.4
        .init(name: "then the latest start",
              a: Fixture.declared(1, radius: 100, from: 0, to: 60, creator: "x"),
              b: Fixture.declared(2, radius: 100, from: -30, to: 60, creator: "y"), winner: 1),
        .init(name: "then the lowest id",
              a: Fixture.declared(7, radius: 100, creator: "x"),
              b: Fixture.declared(3, radius: 100, creator: "y"), winner: 3),
    ]

    @Test("One deterministic winner among several matching moments, in either declaration order",
          arguments: tieBreaks)
    func tieBreak(_ c: TieBreak) throws {
        for order in [[c.a, c.b], [c.b, c.a]] {
            var before = World()
            for placed in order { try before.declare(placed) }
            try before.ingest(Fixture.photo(10, author: "ana", minutes: 10))
            #expect(before.momentOf(10) == c.winner)
            var after = World()  // photo first: the declarations pull it in
            try after.ingest(Fixture.photo(10, author: "ana", minutes: 10))
            for placed in order { try after.declare(placed) }
            #expect(after.momentOf(10) == c.winner)
        }
    }

    @Test("Moving a declared moment releases the photos it no longer holds into automatic moments")
    func movingAMoment() throws {
        var world = World()
        var placed = Fixture.declared(1)
        try world.declare(placed)
        try world.ingest(Fixture.photo(10, minutes: 5), Fixture.photo(11, minutes: 6))
        #expect(world.members(1) == [10, 11])
        placed.place.center = Fixture.point(5_000)
        let events = try world.update(placed)
        #expect(world.members(1).isEmpty)
        #expect(world.moment(of: 10)?.kind == .automatic && world.momentOf(10) == world.momentOf(11))
        #expect(events.contains(.coverChanged(momentId: 1, pictureId: nil, reason: "no pictures left")))
    }

    @Test("Withdrawing a declared moment sends its photos on to the other rules")
    func withdraw() throws {
        var world = World()
        try world.declare(Fixture.declared(1))
        try world.ingest(Fixture.photo(10, minutes: 5), Fixture.photo(11, minutes: nil, requested: 1))
        #expect(world.members(1) == [10, 11])
        let events = try world.engine.withdraw(momentId: 1, from: &world.store)
        #expect(world.store.moment(id: 1) == nil)
        #expect(world.moment(of: 10)?.kind == .automatic)
        #expect(world.momentOf(11) == nil)
        #expect(events.contains(.momentDeleted(momentId: 1)))
        #expect(events.contains(.pictureAdded(pictureId: 11, momentId: nil)))
    }

    @Test("Declaring refuses a bad moment with a one-line reason")
    func refusals() throws {
        var world = World()
        var backwards = Fixture.declared(1)
        backwards.moment.end = backwards.moment.start.addingTimeInterval(-1)
        #expect(throws: MomentError.self) { try world.declare(backwards) }
        var noRadius = Fixture.declared(2)
        noRadius.place.radiusMetres = 0
        #expect(throws: MomentError.self) { try world.declare(noRadius) }
        do {
            try world.declare(backwards)
            Issue.record("expected a refusal")
        } catch let error as MomentError {
            #expect(error.description.contains("ends before it starts"))
            #expect(!error.description.contains("\n"))
        }
    }
}
