import NIOPosix
import Synchronization

/// Where the checks of `/healthz/ready` run: the catalog's, the spool's and the library's, each
/// on a thread of this pool (never the threads that uploads and reads queue on) and each waited
/// for a bounded time. A file system that stops answering (a hung network mount) or a bucket
/// that does not answer makes the server not ready within the bound; it never makes a
/// readiness request hang, and busy request threads never make a check late.
///
/// One check of a kind runs at a time: while one is still in flight (hung), the next requests
/// wait on that same check, again for the bound, rather than queueing another behind it. So a
/// hung mount holds one thread however often the probe asks, and the pool (one thread a kind)
/// always has a thread for the other kinds.
final class ReadinessProbes: Sendable {
    /// The kinds of check: one thread each.
    static let kinds = 3

    let pool = NIOThreadPool(numberOfThreads: ReadinessProbes.kinds)
    private let inFlight = Mutex<[String: Task<Result<Void, any Error>, Never>]>([:])

    /// Runs `body` as the check `kind` (or joins the one in flight) and waits at most `seconds`
    /// for it: its outcome, or nil when it did not end in time (it goes on, and a later request
    /// sees its outcome). Helper tasks run on `executor` (the admin listener's event loop for its
    /// requests).
    func check(_ kind: String, within seconds: Double, on executor: (any TaskExecutor)?,
               _ body: @escaping @Sendable () throws -> Void) async -> Result<Void, any Error>? {
        let pool = pool
        let task = inFlight.withLock { running -> Task<Result<Void, any Error>, Never> in
            if let task = running[kind] { return task }
            let task = Task(executorPreference: executor) { () -> Result<Void, any Error> in
                let outcome: Result<Void, any Error>
                do {
                    try await pool.runIfActive(body)
                    outcome = .success(())
                } catch {
                    outcome = .failure(error)
                }
                // Runs after the insertion below: the lock is held until then.
                self.finished(kind)
                return outcome
            }
            running[kind] = task
            return task
        }
        let ended = Task(executorPreference: executor) { _ = await task.value }
        guard await ServiceEnvironment.wait(for: ended, atMost: seconds, on: executor) else { return nil }
        return await task.value
    }

    /// Whether a check of `kind` is in flight.
    func isRunning(_ kind: String) -> Bool {
        inFlight.withLock { $0[kind] != nil }
    }

    private func finished(_ kind: String) {
        _ = inFlight.withLock { $0.removeValue(forKey: kind) }
    }
}
