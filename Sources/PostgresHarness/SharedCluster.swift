import Foundation
import PostgresStore

#if canImport(Glibc)
import Glibc
#endif

/// One temporary cluster for a whole test or benchmark process, started on first use and
/// stopped when the process exits; each caller takes a fresh database of its own in it.
public enum SharedCluster {
    /// Whether the server's programs are installed (tests skip with `skipReason` when not).
    public static let available = TemporaryCluster.binaries() != nil
    /// What a skipped test says.
    public static let skipReason = "PostgreSQL's server programs are not installed (/usr/lib/postgresql/*/bin): run make deps"

    /// The cluster, or why it could not be started.
    public static let cluster: Result<TemporaryCluster, any Error> = {
        let result = Result { try TemporaryCluster.start() }
        atexit {
            if case .success(let cluster) = SharedCluster.cluster { cluster.stop() }
        }
        return result
    }()

    /// A new, empty database in the shared cluster.
    public static func freshDatabase() throws -> PostgresLocation {
        try cluster.get().freshDatabase()
    }
}

extension TemporaryCluster {
    /// A new, empty database in this cluster, named `prefix_` and a random suffix.
    public func freshDatabase(prefix: String = "test") throws -> PostgresLocation {
        let name = prefix + "_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        let pool = try PostgresPool(location: try PostgresLocation(url()), maximumConnections: 1)
        defer { pool.close() }
        try pool.createDatabase(name)
        return try PostgresLocation(url(database: name))
    }
}
