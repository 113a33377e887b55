import Catalog
import CatalogFixtures
import Foundation
import GRDB
import Moments
import Testing
import SeededRandom

@Suite("Moments in the SQLite catalog")
struct CatalogMomentsTests {
    static func photos(seed: UInt64, count: Int) -> [PictureRecord] {
        SyntheticOutings.pictures(seed: seed, count: count)
    }

    func job(_ i: Int) -> JobRecord {
        JobRecord(sourceName: "p\(i)", claimPath: "c/\(i)", sha256: nil, outcome: .added, pictureId: nil, attempts: 1,
                  error: nil, sidecarJson: nil, worker: "w", startedAt: 0, finishedAt: 0)
    }

    /// Moments as sets of picture hashes, with each moment's cover hash: what must not depend on order.
    func partition(_ catalog: Catalog) throws -> Set<[String]> {
        try catalog.read { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT m.id AS moment, p.sha256 AS sha, c.sha256 AS cover FROM pictures p
                JOIN moments m ON m.id = p.moment_id LEFT JOIN pictures c ON c.id = m.cover_picture_id
                """)
            var groups: [Int64: (members: [String], cover: String)] = [:]
            for row in rows {
                let id: Int64 = row["moment"]
                groups[id, default: ([], row["cover"] ?? "")].members.append(row["sha"])
            }
            return Set(groups.values.map { ["cover:" + $0.cover] + $0.members.sorted() })
        }
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func theSamePhotosInAnyOrderMakeTheSameMomentsAndCoversAsARebuild(seed: UInt64) throws {
        let photos = Self.photos(seed: seed, count: 90)
        var rng = SplitMix64(seed: seed &* 31)
        var results: [Set<[String]>] = []
        for _ in 0..<3 {
            let path = NSTemporaryDirectory() + "darkroom-moments-" + UUID().uuidString + "/catalog.sqlite"
            defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
            let catalog = try Catalog(path: path)
            // A declared public moment at the first site, so declared and automatic moments mix.
            let place = try catalog.declarePlace(id: 7, name: "Centre", center: Coordinate(latitude: 48.8566, longitude: 2.3522), radiusMetres: 120)
            _ = try catalog.declareMoment(Moment(id: 0, kind: .declared, placeId: place.id,
                                                 start: Date(timeIntervalSince1970: 1_700_000_000), end: Date(timeIntervalSince1970: 1_700_007_200)), id: 70)
            for (i, photo) in photos.shuffled(using: &rng).enumerated() {
                _ = try catalog.commitPicture(photo, variants: [], job: job(i))
            }
            #expect(try catalog.rebuildMoments(apply: false).isEmpty, "incremental state equals a rebuild (seed \(seed))")
            results.append(try partition(catalog))
        }
        #expect(results.allSatisfy { $0 == results[0] }, "seed \(seed): the order changed the moments")
        #expect(results[0].count > 3, "the scenario makes several moments")
    }

    @Test func workerMadeIdsNeverMeetTheBackendsIds() throws {
        let path = NSTemporaryDirectory() + "darkroom-moments-" + UUID().uuidString + "/catalog.sqlite"
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let catalog = try Catalog(path: path)
        for (i, photo) in Self.photos(seed: 9, count: 30).enumerated() {
            _ = try catalog.commitPicture(photo, variants: [], job: job(i))
        }
        let automatic = try catalog.moments().filter { $0.kind == .automatic }
        #expect(!automatic.isEmpty)
        #expect(automatic.allSatisfy { $0.id < 0 && $0.placeId < 0 })
        let declared = try catalog.declarePlace(id: nil, name: nil, center: Coordinate(latitude: 1, longitude: 1), radiusMetres: 10)
        #expect(declared.id == 1)
    }

    @Test func aMomentsPicturesPageInAStableOrderWithACursor() throws {
        let path = NSTemporaryDirectory() + "darkroom-moments-" + UUID().uuidString + "/catalog.sqlite"
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let catalog = try Catalog(path: path)
        // One author, one place, photos a minute apart: one automatic moment.
        var photos = Self.photos(seed: 5, count: 25)
        for i in photos.indices {
            photos[i].authorId = "ana"
            photos[i].latitude = 10
            photos[i].longitude = 10
            photos[i].momentTime = 1_700_000_000 + Double(i % 5) * 60
        }
        for (i, photo) in photos.reversed().enumerated() {
            _ = try catalog.commitPicture(photo, variants: [], job: job(i))
        }
        let moment = try #require(try catalog.moments().first)
        var seen: [PictureRecord] = []
        var cursor: PictureCursor?
        repeat {
            let page = try catalog.pictures(inMoment: moment.id, after: cursor, limit: 7)
            #expect(page.pictures.count <= 7)
            seen += page.pictures
            cursor = page.next
        } while cursor != nil
        #expect(seen.count == photos.count)
        let order = seen.map { String(format: "%.0f ", $0.momentTime ?? 0) + $0.sha256 }
        #expect(order == order.sorted(), "capture time, then hash")
    }
}
