import Foundation
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
/// always has a thread for the other kinds. A request that gives up leaves nothing behind: it
/// looks at the check's outcome every few milliseconds rather than awaiting it.
package final class ReadinessProbes: Sendable {
    /// The kinds of check: one thread each.
    static let kinds = 3
    /// How often a waiting request looks at its check's outcome.
    static let pollMilliseconds = 5

    package let pool = NIOThreadPool(numberOfThreads: ReadinessProbes.kinds)
    private let inFlight = Mutex<[String: Check]>([:])

    /// Probes with no check in flight; `pool` is started by its owner.
    package init() {}

    /// One check in flight and, once it has ended, its outcome.
    private final class Check: Sendable {
        let outcome = Mutex<Result<Void, any Error>?>(nil)
    }

    /// Runs `body` as the check `kind` (or joins the one in flight) and waits at most `seconds`
    /// for it: its outcome, or nil when it did not end in time (it goes on, and a later request
    /// sees its outcome). The check's task runs on `executor` (the admin listener's event loop
    /// for its requests).
    package func check(_ kind: String, within seconds: Double, on executor: (any TaskExecutor)?,
                       _ body: @escaping @Sendable () throws -> Void) async -> Result<Void, any Error>? {
        let pool = pool
        let check = inFlight.withLock { running -> Check in
            if let check = running[kind] { return check }
            let check = Check()
            running[kind] = check
            Task(executorPreference: executor) {
                let outcome: Result<Void, any Error>
                do {
                    try await pool.runIfActive(body)
                    outcome = .success(())
                } catch {
                    outcome = .failure(error)
                }
                check.outcome.withLock { $0 = outcome }
                self.finished(kind, check)
            }
            return check
        }
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let outcome = check.outcome.withLock({ $0 }) { return outcome }
            guard Date() < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(Self.pollMilliseconds))
        }
    }

    /// Whether a check of `kind` is in flight.
    func isRunning(_ kind: String) -> Bool {
        inFlight.withLock { $0[kind] != nil }
    }

    private func finished(_ kind: String, _ check: Check) {
        inFlight.withLock { running in
            if running[kind] === check { running[kind] = nil }
        }
    }
}
