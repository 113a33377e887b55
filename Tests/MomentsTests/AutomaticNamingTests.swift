import Foundation
@testable import Moments
import Testing

/// A naming with fixed answers: "Paris, Île-de-France, FR" everywhere, in Europe/Paris.
private struct FixedNaming: AutomaticNaming {
    func placeName(at center: Coordinate) -> String? { "Paris, Île-de-France, FR" }
    func timeZone(at point: Coordinate) -> TimeZone? { TimeZone(identifier: "Europe/Paris") }
}

@Suite("Automatic naming")
struct AutomaticNamingTests {
    @Test("an automatic moment's place is named and its title is the town and local date")
    func namesAndTitles() throws {
        var store = InMemoryMomentStore()
        let engine = MomentEngine(naming: FixedNaming())
        // 23:30 UTC on 14 November 2023 is already the 15th in Paris.
        let late = PhotoFacts(id: 1, key: "k1", author: "ana", capturedAt: Date(timeIntervalSince1970: 1_700_004_600),
                              location: Fixture.origin)
        let events = try engine.ingest(late, into: &store)
        guard case .momentCreated(let created) = try #require(events.first) else {
            Issue.record("expected momentCreated first, got \(events)")
            return
        }
        #expect(created.title == "Paris, 15 November 2023")
        let moment = try #require(store.moment(id: created.id))
        #expect(moment.title == "Paris, 15 November 2023")
        #expect(store.place(id: moment.placeId)?.name == "Paris, Île-de-France, FR")
    }

    @Test("a declared place's name is kept; unnamed automatic ones are named afterwards, once")
    func nameAutomaticLater() throws {
        var store = InMemoryMomentStore()
        // Made without naming, as before it existed.
        _ = try MomentEngine().ingest([Fixture.photo(1, minutes: 0), Fixture.photo(2, minutes: 5, at: Fixture.point(20_000))],
                                      into: &store)
        let declared = Place(id: 7, name: "Backend's own name", center: Fixture.point(50_000), radiusMetres: 500)
        _ = try MomentEngine().declare(Moment(id: 70, kind: .declared, placeId: 7, start: Fixture.t0, end: Fixture.t0),
                                       at: declared, into: &store)
        #expect(try store.allMoments().filter { $0.kind == .automatic }.allSatisfy { $0.title == nil })
        let engine = MomentEngine(naming: FixedNaming())
        let first = try engine.nameAutomatic(in: &store)
        #expect(first == NamingOutcome(places: 2, moments: 2))
        #expect(try engine.nameAutomatic(in: &store) == NamingOutcome())
        #expect(store.place(id: 7)?.name == "Backend's own name")
        #expect(store.moment(id: 70)?.title == nil)
        for moment in try store.allMoments() where moment.kind == .automatic {
            #expect(moment.title?.hasPrefix("Paris, ") == true)
        }
    }

    @Test("titles' dates are in English whatever the locale")
    func titleDate() {
        #expect(MomentTitleDate.format(Date(timeIntervalSince1970: 1_715_472_000), in: .gmt) == "12 May 2024")
    }
}
