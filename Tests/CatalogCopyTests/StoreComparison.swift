import Catalog
import CatalogImports
import Foundation
import GRDB
import JSONValues
import Moments
import Operations
@testable import PostgresCatalog
import PostgresNIO
import Testing

/// Holds a PostgreSQL catalog to the SQLite catalog it was copied from, through what reads
/// them: the `CatalogStore` reads and the `MomentCatalog` views that the HTTP routes and the
/// command line render (as their JSON), page by page, and the tables behind the outbox,
/// webhook progress and the import journal, row by row with their ids.
struct StoreComparison {
    let sqlite: Catalog
    let postgres: PostgresCatalog

    /// Records an issue for every read that answers differently; returns how many reads were compared.
    @discardableResult
    func compareEverything(pageSize: Int = 7) throws -> Int {
        var compared = 0
        func same<T: Encodable>(_ what: String, _ left: T, _ right: T) {
            compared += 1
            let (a, b) = (StableJSON.string(left), StableJSON.string(right))
            if a != b { Issue.record("\(what) differs:\nSQLite:     \(a.prefix(2000))\nPostgreSQL: \(b.prefix(2000))") }
        }
        let views = (MomentCatalog(catalog: sqlite), MomentCatalog(catalog: postgres))

        // Places: all of them, and around each one and each site of the outings.
        let places = try sqlite.places()
        #expect(places.count > 1)
        same("places", places.map(PlaceView.init), try postgres.places().map(PlaceView.init))
        let sites = places.map(\.center) + [Coordinate(latitude: -16.5, longitude: 179.9995), Coordinate(latitude: 64.1466, longitude: -21.9426)]
        for centre in sites {
            for radius in [50.0, 2_000] {
                same("places around \(centre) within \(radius) m", try sqlite.places(around: centre, radiusMetres: radius).map(PlaceView.init),
                     try postgres.places(around: centre, radiusMetres: radius).map(PlaceView.init))
            }
            same("place \(centre)", try places.first { $0.center == centre }.map { try sqlite.place(id: $0.id) } ?? nil,
                 try places.first { $0.center == centre }.map { try postgres.place(id: $0.id) } ?? nil)
        }

        // Moments: the listing, each place's, each moment and every page of its pictures.
        same("moments", try views.0.moments(), try views.1.moments())
        for place in places {
            same("moments at place \(place.id)", try views.0.moments(atPlace: place.id), try views.1.moments(atPlace: place.id))
        }
        same("picture counts", try sqlite.pictureCounts().sorted { $0.key < $1.key }.map { [$0.key, Int64($0.value)] },
             try postgres.pictureCounts().sorted { $0.key < $1.key }.map { [$0.key, Int64($0.value)] })
        let moments = try sqlite.moments(atPlace: nil)
        #expect(moments.count > 2)
        for moment in moments {
            same("moment \(moment.id)", try views.0.moment(id: moment.id), try views.1.moment(id: moment.id))
            var cursor: PictureCursor?
            var pages = 0
            repeat {
                let left = try views.0.page(ofMoment: moment.id, after: cursor, limit: pageSize)
                let right = try views.1.page(ofMoment: moment.id, after: cursor, limit: pageSize)
                same("moment \(moment.id) page \(pages)", left, right)
                cursor = left?.next.flatMap(PictureCursor.init)
                pages += 1
            } while cursor != nil
        }
        same("moment that does not exist", try views.0.moment(id: 999_999), try views.1.moment(id: 999_999))

        // Pictures, each through its view (variants included) and as the whole record.
        let pictures = try sqlite.read { db in try PictureRecord.all(in: db) }
        let stored = try postgres.allPictures()
        #expect(pictures.count == stored.count)
        if pictures != stored { Issue.record("the pictures' rows differ") }
        for picture in pictures {
            let id = picture.id ?? 0
            same("picture \(id)", try views.0.picture(id: id), try views.1.picture(id: id))
        }
        same("picture that does not exist", try views.0.picture(id: 999_999), try views.1.picture(id: 999_999))
        same("counts", try sqlite.counts(now: Date(timeIntervalSince1970: SourceCatalog.now)),
             try postgres.counts(now: Date(timeIntervalSince1970: SourceCatalog.now)))

        // The tables behind the outbox, jobs, candidates, webhook progress and imports, row for row.
        let events = try sqlite.read { db in try OutboxEvent.all(in: db) }
        #expect(!events.isEmpty)
        if events != (try postgres.allOutboxEvents()) { Issue.record("the outbox differs (its ids are its positions)") }
        compared += 1
        if (try sqlite.read { db in try JobRecord.order(Column("id")).fetchAll(db) }) != (try postgres.allJobs()) {
            Issue.record("the jobs differ")
        }
        compared += 1
        same("candidates", try sqlite.read { db in try Row.fetchAll(db, sql: "SELECT moment_id, picture_id FROM moment_candidates ORDER BY 1, 2").map { "\($0[0] as Int64)/\($0[1] as Int64)" } },
             try postgres.read { session in try session.rows("SELECT moment_id, picture_id FROM moment_candidates ORDER BY 1, 2").map { row in
                 let (moment, picture) = try row.decode((Int64, Int64).self)
                 return "\(moment)/\(picture)"
             } })
        if try Self.hasTable("webhook_deliveries", in: postgres) {
            let mine = try sqlite.read { db in try WebhookDeliveryRecord.order(Column("endpoint"), Column("outbox_id")).fetchAll(db) }
            let theirs = try postgres.read { session in
                try session.rows("SELECT * FROM webhook_deliveries ORDER BY endpoint, outbox_id").map { try PostgresCatalog.record(WebhookDeliveryRecord.self, $0) }
            }
            #expect(mine == theirs, "webhook deliveries: \(mine.count) in SQLite, \(theirs.count) in PostgreSQL")
            compared += 1
        }
        same("import runs", try sqlite.importRuns(limit: 100), try postgres.importRuns(limit: 100))
        let files = try sqlite.read { db in try ImportFileRecord.order(Column("source_path")).fetchAll(db) }
        #expect(files.count > 0)
        #expect(files == (try postgres.read { session in
            try session.rows("SELECT * FROM import_files ORDER BY source_path COLLATE \"C\"").map { try PostgresCatalog.record(ImportFileRecord.self, $0) }
        }))
        compared += 1
        return compared
    }

    /// Whether the PostgreSQL catalog's schema has a table (the webhook tables arrive in their own migration).
    static func hasTable(_ table: String, in catalog: PostgresCatalog) throws -> Bool {
        try catalog.read { session in try session.value("SELECT to_regclass(\(table))::text", as: String.self) != nil }
    }
}
