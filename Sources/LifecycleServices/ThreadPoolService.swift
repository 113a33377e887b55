import NIOPosix
import ServiceLifecycle

/// A started thread pool as a service: it runs until a graceful shutdown (or cancellation),
/// then lets the work in hand finish and stops its threads.
public struct ThreadPoolService: Service {
    let pool: NIOThreadPool
    let waits: Bool

    /// `waits` false: the stop does not wait for the work in hand, which may never end (a check
    /// of a hung file system); the threads stop when it does, or with the process.
    public init(pool: NIOThreadPool, waits: Bool = true) {
        self.pool = pool
        self.waits = waits
    }

    public func run() async throws {
        try? await gracefulShutdown()
        if waits {
            try await pool.shutdownGracefully()
        } else {
            pool.shutdownGracefully { _ in }
        }
    }
}
