import NIOPosix
import ServiceLifecycle

/// A started thread pool as a service: it runs until a graceful shutdown (or cancellation),
/// then lets the work in hand finish and stops its threads.
public struct ThreadPoolService: Service {
    let pool: NIOThreadPool

    public init(pool: NIOThreadPool) {
        self.pool = pool
    }

    public func run() async throws {
        try? await gracefulShutdown()
        try await pool.shutdownGracefully()
    }
}
