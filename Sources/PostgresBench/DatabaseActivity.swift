import BenchKit
import PostgresNIO
import PostgresStore

/// The server's counters of one database, read before and after a run (pg_stat_database and
/// the WAL position), and the size of its tables.
public struct DatabaseActivity: Sendable {
    public var commits: Int64, rollbacks: Int64, inserted: Int64, updated: Int64, deleted: Int64, walBytes: Int64

    public static func read(_ location: PostgresLocation) throws -> DatabaseActivity {
        let pool = try PostgresPool(location: location, maximumConnections: 1)
        defer { pool.close() }
        return try pool.withSession { session in
            // The statistics collector publishes on its own schedule; ask for fresh figures.
            try session.execute("SELECT pg_stat_clear_snapshot()")
            guard let row = try session.rows("""
                SELECT xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted,
                       (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint
                FROM pg_stat_database WHERE datname = current_database()
                """).first else { throw BenchError("pg_stat_database has no row for \(location)") }
            let (c, r, i, u, d, w) = try row.decode((Int64, Int64, Int64, Int64, Int64, Int64).self)
            return DatabaseActivity(commits: c, rollbacks: r, inserted: i, updated: u, deleted: d, walBytes: w)
        }
    }

    public func minus(_ other: DatabaseActivity) -> DatabaseActivity {
        DatabaseActivity(commits: commits - other.commits, rollbacks: rollbacks - other.rollbacks, inserted: inserted - other.inserted,
                         updated: updated - other.updated, deleted: deleted - other.deleted, walBytes: walBytes - other.walBytes)
    }

    /// Each catalog table's size with its indexes and TOAST, largest first.
    public static func footprint(_ location: PostgresLocation) throws -> [(String, Int64)] {
        let pool = try PostgresPool(location: location, maximumConnections: 1)
        defer { pool.close() }
        return try pool.withSession { session in
            try session.rows("""
                SELECT relname::text, pg_total_relation_size(oid) FROM pg_class
                WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace ORDER BY 2 DESC LIMIT 6
                """).map { try $0.decode((String, Int64).self) }
        }
    }
}
