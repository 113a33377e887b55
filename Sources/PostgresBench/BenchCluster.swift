import BenchKit
import PostgresHarness

/// The temporary PostgreSQL cluster a benchmark measures against, or a one-line reason.
public enum BenchCluster {
    /// `durable`: fsync on, as a production server (the queue, `run --once`); off where only
    /// the queries are measured, as the SQLite runs' tmpfs.
    public static func start(durable: Bool) throws -> TemporaryCluster {
        do {
            return try TemporaryCluster.start(durable: durable)
        } catch {
            throw BenchError("cannot start a PostgreSQL cluster (make deps installs it): \(error)")
        }
    }
}
