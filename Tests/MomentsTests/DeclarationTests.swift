import Foundation
import Testing
@testable import Moments

/// Creating is not updating, in the in-memory store as in the catalog.
@Suite("Create and update of declared moments")
struct DeclarationTests {
    @Test func aCreateWithATakenIdIsRefusedAndChangesNothing() throws {
        var world = World()
        try world.declare(Fixture.declared(1, creator: "mallory", visibility: .private))
        var takeover = Fixture.declared(1, creator: "bob", visibility: .public)
        takeover.moment.title = "mine now"
        #expect(throws: MomentError.idTaken(kind: "moment", id: 1, existing: MomentEngine.summary(of: try #require(world.store.moment(id: 1))))) {
            try world.declare(takeover)
        }
        #expect(world.store.moment(id: 1)?.creator == "mallory")
        #expect(world.store.moment(id: 1)?.visibility == .private)
        try world.update(takeover)
        #expect(world.store.moment(id: 1)?.creator == "bob")
    }

    @Test func anUpdateNeedsTheMomentAndIdsStayInTheBackendsRange() throws {
        var world = World()
        #expect(throws: MomentError.momentNotFound(id: 2)) { try world.update(Fixture.declared(2)) }
        var tooLarge = Fixture.declared(1)
        tooLarge.moment.id = Declaration.backendIds.upperBound + 1
        #expect(throws: MomentError.idOutOfRange(kind: "moment", id: tooLarge.moment.id)) { try world.declare(tooLarge) }
        tooLarge.moment.id = -5
        #expect(throws: MomentError.idOutOfRange(kind: "moment", id: -5)) { try world.declare(tooLarge) }
        #expect(world.store.allMoments().isEmpty)
    }

    @Test func changingAPlacesCircleThroughUpdatePlaceMovesItsMomentsPictures() throws {
        var world = World()
        let placed = Fixture.declared(1, radius: 50)
        try world.declare(placed)
        try world.ingest(Fixture.photo(10, minutes: 10, at: Fixture.point(80)))
        #expect(world.momentOf(10) != 1)
        var wider = placed.place
        wider.radiusMetres = 100
        _ = try world.engine.updatePlace(wider, in: &world.store)
        #expect(world.momentOf(10) == 1)
        #expect(throws: MomentError.placeNotFound(id: 99)) {
            try world.engine.updatePlace(Place(id: 99, center: Fixture.origin, radiusMetres: 10), in: &world.store)
        }
    }
}
