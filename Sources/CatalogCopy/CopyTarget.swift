import Catalog
import Foundation
import GRDB
import PostgresCatalog
import PostgresNIO
import PostgresStore

/// The PostgreSQL catalog a copy writes into, and the copy's own record there: which SQLite
/// catalog it copies (`catalog_copies`) and how far each table has come (`catalog_copy_tables`).
/// Each batch of rows commits with its progress in one transaction, so a copy killed at any
/// point continues from its last committed batch and never writes a row twice.
final class CopyTarget {
    let location: PostgresLocation
    private let pool: PostgresPool

    /// The copy's own tables, migrated by name beside the catalog's.
    static let migrations = PostgresMigrations([
        .init("catalog-copy-v1-progress", [
            """
            CREATE TABLE catalog_copies (
                id integer PRIMARY KEY CHECK (id = 1),
                source_path text NOT NULL,
                source_identity text NOT NULL,
                source_digest text NOT NULL,
                started_at double precision NOT NULL,
                finished_at double precision
            )
            """,
            // `last_key` is the SQLite rowid of the last row copied (null: none yet); ids of the
            // worker's own places and moments are negative, so 0 cannot stand for none.
            """
            CREATE TABLE catalog_copy_tables (
                table_name text PRIMARY KEY,
                last_key bigint,
                rows_copied bigint NOT NULL DEFAULT 0,
                finished boolean NOT NULL DEFAULT false
            )
            """,
        ]),
    ])

    /// The advisory lock a copy holds for as long as it runs (the catalog's own are 7_261_900_913
    /// and 914): a second copy into the same database is refused rather than interleaved.
    static let copyLock: Int64 = 7_261_900_915

    /// Connects (the catalog's migrations are applied by opening a `PostgresCatalog` first) and
    /// migrates the copy's own tables.
    init(location: PostgresLocation) throws(CatalogCopyError) {
        self.location = location
        do {
            // One connection holds the lock, one copies; a batch of a large table may rightly take minutes.
            pool = try PostgresPool(location: location, maximumConnections: 2, deadlines: .maintenance)
            try Self.migrations.apply(to: pool)
        } catch {
            throw .target(PostgresCatalog.catalogError(error, location: location))
        }
    }

    func close() { pool.close() }

    /// Runs `body` holding the copy's lock; refuses when another copy holds it.
    func holdingLock<T>(_ body: () throws -> T) throws -> T {
        try pool.withSession { session in
            guard try session.value("SELECT pg_try_advisory_lock(\(Self.copyLock))", as: Bool.self) == true else {
                throw CatalogCopyError.copyRunning(location: location.description)
            }
            defer { try? session.execute("SELECT pg_advisory_unlock(\(Self.copyLock))") }
            return try body()
        }
    }

    /// Runs `body` in one transaction; a failure is reported as copying `table`.
    func transaction<T>(_ table: String, _ body: (PostgresSession) throws -> T) throws(CatalogCopyError) -> T {
        do {
            return try pool.transaction(.readCommitted, body)
        } catch let error as CatalogCopyError {
            throw error
        } catch {
            throw Self.failure(error, table: table, location)
        }
    }

    // MARK: The catalog's tables

    /// A table's columns, nil when the catalog has no such table.
    func columns(of table: String) throws(CatalogCopyError) -> [TablePlan.TargetColumn]? {
        try transaction(table) { session in
            let rows = try session.rows("""
                SELECT column_name::text, data_type::text, is_generated::text, is_identity::text, COALESCE(identity_generation::text, ''),
                       is_nullable::text, column_default::text
                FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = \(table)
                ORDER BY ordinal_position
                """)
            guard !rows.isEmpty else { return nil }
            return try rows.map { row in
                let (name, type, generated, identity, generation, nullable, defaultValue) =
                    try row.decode((String, String, String, String, String, String, String?).self)
                return TablePlan.TargetColumn(
                    name: name, type: type, generated: generated == "ALWAYS", identity: identity == "YES",
                    alwaysIdentity: generation == "ALWAYS",
                    required: nullable == "NO" && defaultValue == nil && identity != "YES" && generated != "ALWAYS")
            }
        }
    }

    /// A table's primary key columns, in order.
    func keyColumns(of table: String) throws(CatalogCopyError) -> [String] {
        try transaction(table) { session in
            try session.values("""
                SELECT a.attname::text FROM pg_index i
                JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
                WHERE i.indrelid = to_regclass(\(table)) AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)
                """, as: String.self)
        }
    }

    /// How many rows each of these tables holds.
    func counts(_ tables: [String]) throws(CatalogCopyError) -> [String: Int] {
        try transaction("the counts") { session in
            var counts: [String: Int] = [:]
            for table in tables {
                counts[table] = Int(try session.value(PostgresQuery(unsafeSQL: "SELECT COUNT(*) FROM \"\(table)\""), as: Int64.self) ?? 0)
            }
            return counts
        }
    }

    /// The result of one counting query (a derived index).
    func count(_ query: String) throws(CatalogCopyError) -> Int {
        try transaction("the counts") { session in Int(try session.value(PostgresQuery(unsafeSQL: query), as: Int64.self) ?? 0) }
    }

    /// Every row of a small table (the totals), as text by column.
    func rows(of table: String, columns: [String]) throws(CatalogCopyError) -> [[String: String]] {
        try transaction(table) { session in
            let list = columns.map { "\"\($0)\"::text" }.joined(separator: ", ")
            return try session.rows(PostgresQuery(unsafeSQL: "SELECT \(list) FROM \"\(table)\"")).map { row in
                var values: [String: String] = [:]
                for (name, cell) in zip(columns, row) { values[name] = try cell.decode(String?.self) ?? "null" }
                return values
            }
        }
    }

    // MARK: The copy's record

    /// Where one table's copy stands.
    struct TableProgress: Sendable, Equatable {
        var lastKey: Int64?
        var rowsCopied: Int
        var finished: Bool
    }

    /// The copy recorded in this catalog, if any.
    struct Record: Sendable, Equatable {
        var sourcePath: String
        var identity: String
        var digest: String
        var finishedAt: Double?
        var tables: [String: TableProgress]
    }

    func record() throws(CatalogCopyError) -> Record? {
        try transaction("catalog_copies") { session in
            guard let row = try session.rows("SELECT source_path, source_identity, source_digest, finished_at FROM catalog_copies WHERE id = 1").first
            else { return nil }
            let (path, identity, digest, finished) = try row.decode((String, String, String, Double?).self)
            var tables: [String: TableProgress] = [:]
            for row in try session.rows("SELECT table_name, last_key, rows_copied, finished FROM catalog_copy_tables") {
                let (name, key, copied, done) = try row.decode((String, Int64?, Int64, Bool).self)
                tables[name] = TableProgress(lastKey: key, rowsCopied: Int(copied), finished: done)
            }
            return Record(sourcePath: path, identity: identity, digest: digest, finishedAt: finished, tables: tables)
        }
    }

    /// Records a copy starting from nothing: the source, and every table at its beginning.
    /// With `emptying`, the rows an earlier copy wrote into these tables (and what PostgreSQL
    /// derived from them) are removed first, in the same transaction, ids numbered afresh.
    func begin(source: String, identity: String, digest: String, tables: [String], emptying: [String]) throws(CatalogCopyError) {
        try transaction("catalog_copies") { session in
            if !emptying.isEmpty {
                let list = (emptying + ["place_boxes", "moment_boxes"]).map { "\"\($0)\"" }.joined(separator: ", ")
                try session.execute(PostgresQuery(unsafeSQL: "TRUNCATE \(list) RESTART IDENTITY"))
            }
            try session.execute("DELETE FROM catalog_copy_tables")
            try session.execute("DELETE FROM catalog_copies")
            try session.execute("""
                INSERT INTO catalog_copies (id, source_path, source_identity, source_digest, started_at)
                VALUES (1, \(source), \(identity), \(digest), \(Date().timeIntervalSince1970))
                """)
            try session.execute("INSERT INTO catalog_copy_tables (table_name) SELECT unnest(\(tables)::text[])")
        }
    }

    /// Adds the progress rows of tables the record lacks (a table PostgreSQL's schema gained
    /// since the copy began), at their beginning.
    func track(_ tables: [String]) throws(CatalogCopyError) {
        try transaction("catalog_copies") { session in
            try session.execute("INSERT INTO catalog_copy_tables (table_name) SELECT unnest(\(tables)::text[]) ON CONFLICT DO NOTHING")
        }
    }

    /// Writes one batch of rows, what PostgreSQL derives from them, and the table's progress, in
    /// one transaction.
    func copy(_ plan: TablePlan, rows: [Row], lastKey: Int64) throws(CatalogCopyError) {
        let insert = try plan.insert(rows)
        let ids = plan.ids(of: rows)
        try transaction(plan.table.name) { session in
            try session.execute(insert)
            switch plan.table.derived {
            case .placeBoxes?: try PostgresCatalog.indexCopiedPlaces(ids: ids, in: session)
            case .momentBoxes?: try PostgresCatalog.indexCopiedMoments(ids: ids, in: session)
            case .positions?: try PostgresCatalog.indexCopiedPictures(ids: ids, in: session)
            case nil: break
            }
            try session.execute("""
                UPDATE catalog_copy_tables SET last_key = \(lastKey), rows_copied = rows_copied + \(Int64(rows.count))
                WHERE table_name = \(plan.table.name)
                """)
        }
    }

    /// Marks a table done, its identity columns moved past the ids copied and past `given`
    /// (the highest id SQLite ever gave, whose row may be gone), so that the next row PostgreSQL
    /// numbers itself (a new picture, job, outbox event) gets an id never seen before.
    func finish(_ plan: TablePlan, given: Int64) throws(CatalogCopyError) {
        try transaction(plan.table.name) { session in
            for column in plan.identityColumns {
                let floor = column == "id" ? given : 0
                try session.execute(PostgresQuery(unsafeSQL: """
                    SELECT setval(pg_get_serial_sequence('"\(plan.table.name)"', '\(column)'), m)
                    FROM (SELECT GREATEST(MAX("\(column)"), \(floor)) AS m FROM "\(plan.table.name)") AS highest WHERE m >= 1
                    """))
            }
            try session.execute("UPDATE catalog_copy_tables SET finished = true WHERE table_name = \(plan.table.name)")
        }
    }

    /// Records the copy as finished (its counts checked).
    func finishCopy() throws(CatalogCopyError) {
        try transaction("catalog_copies") { session in
            try session.execute("UPDATE catalog_copies SET finished_at = \(Date().timeIntervalSince1970) WHERE id = 1")
        }
    }

    /// A failure while copying `table`: the server's refusal of a statement, or the catalog's
    /// error (the server went away).
    static func failure(_ error: any Error, table: String, _ location: PostgresLocation) -> CatalogCopyError {
        let failure = PostgresError(error)
        if case .statement = failure { return .statement(table: table, failure) }
        return .target(PostgresCatalog.catalogError(failure, location: location))
    }
}
