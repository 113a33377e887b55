import Catalog
import Foundation
import GRDB
import Moments
import Testing

@Suite("Ids the catalog gives and takes")
struct CatalogIdTests {
    static func catalog() throws -> (Catalog, String) {
        let path = NSTemporaryDirectory() + "darkroom-ids-" + UUID().uuidString + ".sqlite"
        return (try Catalog(path: path), path)
    }

    static let largest: Int64 = 9_007_199_254_740_991

    @Test func aPlaceAtInt64MaxLeftByAnOlderVersionIsNeverReplacedByTheNextId() throws {
        let (catalog, path) = try Self.catalog()
        defer { try? FileManager.default.removeItem(atPath: path) }
        // A catalog written before ids were bounded may hold the largest Int64: MAX(id) + 1
        // overflowed there and named that row again.
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: "INSERT INTO places (id, name, latitude, longitude, radius_metres, created_at) VALUES (?, 'old', 1, 2, 30, 0)",
                           arguments: [Int64.max])
        }
        let made = try catalog.declarePlace(id: nil, name: "new", center: Coordinate(latitude: 3, longitude: 4), radiusMetres: 50)
        #expect(made.id == 1)
        #expect(try catalog.place(id: Int64.max)?.name == "old")
        // At the top of the range, the next id is the lowest free one.
        _ = try catalog.declarePlace(id: Self.largest, name: "top", center: Coordinate(latitude: 5, longitude: 6), radiusMetres: 50)
        let next = try catalog.declarePlace(id: nil, name: "after", center: Coordinate(latitude: 7, longitude: 8), radiusMetres: 50)
        #expect(next.id == 2)
        #expect(try catalog.place(id: Self.largest)?.name == "top")
    }

    @Test func aCreateNeverReplacesAndAnUpdateNeedsTheRecord() throws {
        let (catalog, path) = try Self.catalog()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let center = Coordinate(latitude: 48.85, longitude: 2.35)
        _ = try catalog.declarePlace(id: 4, name: "garden", center: center, radiusMetres: 100)
        #expect(throws: CatalogError.self) { try catalog.declarePlace(id: 4, name: "taken", center: center, radiusMetres: 10) }
        #expect(throws: CatalogError.self) { try catalog.declarePlace(id: Self.largest + 1, name: "far", center: center, radiusMetres: 10) }
        #expect(try catalog.place(id: 4)?.name == "garden")
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let secret = Moment(id: 0, kind: .declared, placeId: 4, start: start, end: start + 3600, creator: "mallory", visibility: .private)
        _ = try catalog.declareMoment(secret, id: 9)
        var takeover = secret
        takeover.creator = "bob"
        takeover.visibility = .public
        let refusal = #expect(throws: CatalogError.self) { try catalog.declareMoment(takeover, id: 9) }
        #expect(refusal?.description.hasPrefix("moment 9 already exists (private, creator mallory") == true, "\(String(describing: refusal))")
        #expect(try catalog.moment(id: 9)?.creator == "mallory")
        #expect(throws: CatalogError.self) { try catalog.declareMoment(takeover, id: 10, as: .update) }
        _ = try catalog.declareMoment(takeover, id: 9, as: .update)
        #expect(try catalog.moment(id: 9)?.creator == "bob")
        #expect(throws: CatalogError.self) { try catalog.updatePlace(id: 5, name: nil, center: center, radiusMetres: 10) }
        #expect(try catalog.updatePlace(id: 4, name: "park", center: center, radiusMetres: 300).radiusMetres == 300)
        #expect(try catalog.place(id: 4)?.name == "park")
    }
}
