import Catalog
import CatalogCopy
import Foundation
import GRDB
import Logging
import PostgresCatalog
import PostgresHarness
import PostgresStore
import Testing

/// What a copy refuses, each in one line that says what to do.
@Suite("catalog copy refusals")
struct CopyRefusalTests {
    @Test("a missing source is refused, naming the path and --from")
    func missingSource() throws {
        let path = NSTemporaryDirectory() + "darkroom-copy-missing-" + UUID().uuidString + "/catalog.sqlite"
        let copy = CatalogCopy(sourcePath: path, target: try PostgresLocation("postgres://nobody@127.0.0.1:1/none"), logger: Logger(label: "test"))
        #expect(throws: CatalogCopyError.sourceMissing(path)) {
            try copy.run(progress: CopyProgress(style: .none, logger: Logger(label: "test")))
        }
        #expect(CatalogCopyError.sourceMissing(path).description == "no SQLite catalog at \(path): name the catalog to copy with --from, or set catalog.path")
    }
}

@Suite("catalog copy refusals on a PostgreSQL server", .enabled(if: SharedCluster.available, Comment(rawValue: SharedCluster.skipReason)))
struct PostgresRefusalTests {
    /// Runs a copy expected to fail; returns its error, checked to be one line.
    func refusal(_ source: SourceCatalog, _ location: PostgresLocation) throws -> CatalogCopyError? {
        do {
            let summary = try Copying.copy(source, to: location)
            Issue.record("the copy went through: \(summary.line)")
            return nil
        } catch {
            #expect(!error.description.contains("\n"), "\(error.description)")
            return error
        }
    }

    @Test("a PostgreSQL catalog holding pictures from elsewhere is refused, and left as it was")
    func nonEmptyTarget() throws {
        let source = try SourceCatalog.make(pictures: 20, seed: 31, webhooks: false)
        defer { source.remove() }
        let location = try SharedCluster.freshDatabase()
        let postgres = try PostgresCatalog(location: location)
        defer { postgres.close() }
        _ = try Copying.commit(3, seed: 32, to: postgres)
        let error = try refusal(source, location)
        guard case .targetNotEmpty(_, let holds)? = error else {
            Issue.record("expected targetNotEmpty, got \(String(describing: error))")
            return
        }
        #expect(holds.contains("3 rows of pictures"))
        #expect(error?.description.contains("copy into an empty database (createdb NAME") == true)
        #expect(error?.category == .configuration)
        #expect(try postgres.allPictures().count == 3)
    }

    @Test("a PostgreSQL catalog holding a copy of another SQLite catalog is refused")
    func otherCopy() throws {
        let first = try SourceCatalog.make(pictures: 20, seed: 33, webhooks: false)
        let second = try SourceCatalog.make(pictures: 20, seed: 34, webhooks: false)
        defer { first.remove(); second.remove() }
        let location = try SharedCluster.freshDatabase()
        _ = try Copying.copy(first, to: location)
        let error = try refusal(second, location)
        #expect(error == .targetHoldsOtherCopy(location: location.description, copiedFrom: first.path))
    }

    @Test("rows written into the PostgreSQL catalog after its copy make a new copy refuse it rather than start over")
    func targetWrittenAfterTheCopy() throws {
        let source = try SourceCatalog.make(pictures: 20, seed: 35, webhooks: false)
        defer { source.remove() }
        let location = try SharedCluster.freshDatabase()
        _ = try Copying.copy(source, to: location)
        let postgres = try PostgresCatalog(location: location)
        defer { postgres.close() }
        // A worker's failed photo: one job row, nothing else.
        var failed = SourceCatalog.job("late.jpg", outcome: .failed)
        failed.error = "truncated"
        try postgres.recordFailure(failed)
        _ = try Copying.commit(1, seed: 37, to: source.catalog)
        let error = try refusal(source, location)
        #expect(error == .targetChanged(location: location.description, table: "jobs", there: 23, copied: 22))
        #expect(try postgres.allJobs().count == 23 && postgres.allPictures().count == 20)
    }

    @Test("an unreachable server is refused in one line naming the address")
    func unreachable() throws {
        let source = try SourceCatalog.make(pictures: 1, seed: 38, webhooks: false)
        defer { source.remove() }
        // The discard port: nothing listens there on a test machine, so the connection is refused.
        let error = try refusal(source, try PostgresLocation("postgres://darkroom@127.0.0.1:9/catalog"))
        guard case .target(.unavailable)? = error else {
            Issue.record("expected an unreachable target, got \(String(describing: error))")
            return
        }
        #expect(error?.description.contains("cannot connect to PostgreSQL at postgres://darkroom@127.0.0.1:9/catalog") == true)
        #expect(error?.category == .catalog)
    }

    @Test("a second copy into the same database while one runs is refused")
    func copyRunning() throws {
        let source = try SourceCatalog.make(pictures: 1, seed: 39, webhooks: false)
        defer { source.remove() }
        let location = try SharedCluster.freshDatabase()
        let pool = try PostgresPool(location: location, maximumConnections: 1)
        defer { pool.close() }
        let error = try pool.withSession { session in
            // The lock a running copy holds, held here.
            _ = try session.value("SELECT pg_try_advisory_lock(7261900915)", as: Bool.self)
            return try refusal(source, location)
        }
        #expect(error == .copyRunning(location: location.description))
    }

    @Test("a source an older darkroom wrote is refused until this version has migrated it; the file is not touched")
    func olderSource() throws {
        let source = try SourceCatalog.make(pictures: 1, seed: 40, webhooks: false)
        defer { source.remove() }
        try source.catalog.write { db in try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v11-picture-thumb-hash'") }
        let before = try Data(contentsOf: URL(fileURLWithPath: source.path))
        let error = try refusal(source, try SharedCluster.freshDatabase())
        guard case .sourceSchema(_, let reason)? = error else {
            Issue.record("expected sourceSchema, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("older darkroom") && reason.contains("v11-picture-thumb-hash"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: source.path)) == before)
    }

    @Test("webhook deliveries are not dropped when the PostgreSQL schema has no table for them yet",
          .enabled(if: !Copying.postgresHasWebhooks, "the PostgreSQL catalog has its webhook tables"))
    func webhooksWithoutTheirTable() throws {
        let source = try SourceCatalog.make(pictures: 5, seed: 41, webhooks: true)
        defer { source.remove() }
        let error = try refusal(source, try SharedCluster.freshDatabase())
        guard case .schemaMismatch("webhook_deliveries", _)? = error else {
            Issue.record("expected a refusal naming webhook_deliveries, got \(String(describing: error))")
            return
        }
    }
}

@Suite("catalog copy: ids", .enabled(if: SharedCluster.available, Comment(rawValue: SharedCluster.skipReason)))
struct CopyIdTests {
    @Test("ids SQLite gave to rows since deleted are never given again: the next outbox event comes after them")
    func deletedTopIds() throws {
        let source = try SourceCatalog.make(pictures: 10, seed: 42, webhooks: false)
        defer { source.remove() }
        let highest = try source.catalog.write { db in
            let highest = try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM outbox") ?? 0
            try db.execute(sql: "DELETE FROM outbox WHERE id > ?", arguments: [highest - 3])
            return highest
        }
        let location = try SharedCluster.freshDatabase()
        _ = try Copying.copy(source, to: location)
        let postgres = try PostgresCatalog(location: location)
        defer { postgres.close() }
        #expect(try postgres.allOutboxEvents().compactMap(\.id).max() == highest - 3)
        _ = try Copying.commit(1, seed: 43, to: postgres)
        let next = try #require(try postgres.allOutboxEvents().compactMap(\.id).filter { $0 > highest - 3 }.min())
        #expect(next == highest + 1)
    }
}
