import BenchKit
import PostgresStore

/// The least a statement that waits for its answer costs: `SELECT 1` on one pooled
/// connection, from a blocking thread as the catalog calls it. Every figure of a PostgreSQL
/// benchmark that waits for answers stands on this floor.
public enum RoundTrip {
    /// The mean of `count` round trips in milliseconds, after a warm-up.
    public static func milliseconds(at location: PostgresLocation, count: Int = 2000) throws -> Double {
        let pool = try PostgresPool(location: location, maximumConnections: 1)
        defer { pool.close() }
        return try pool.withSession { session in
            for _ in 0..<100 { try session.execute("SELECT 1") }
            let start = Machine.now()
            for _ in 0..<count { try session.execute("SELECT 1") }
            return (Machine.now() - start) * 1000 / Double(count)
        }
    }
}
