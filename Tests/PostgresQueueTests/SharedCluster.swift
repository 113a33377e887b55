import Foundation
import PostgresHarness
import PostgresStore
import Testing

/// The test process's temporary PostgreSQL cluster, as the queue's tests use it.
enum QueueCluster {
    static let skipReason = Comment(rawValue: SharedCluster.skipReason)

    /// A new, empty database and its location.
    static func freshDatabase() async throws -> PostgresLocation {
        try SharedCluster.freshDatabase()
    }
}
