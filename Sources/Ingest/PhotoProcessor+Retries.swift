import Catalog
import Foundation
import Storage

/// How a photo's tries ended.
public enum TriesOutcome {
    /// Added or a duplicate.
    case done(PhotoOutcome)
    /// A permanent failure, or a transient one that outlasted `worker.max_attempts`.
    case failed(ProcessingFailure, attempts: Int)
    /// A transient failure while the run was stopping: neither done nor failed.
    case stopped(ProcessingFailure, attempts: Int)
}

extension PhotoProcessor {
    /// Runs `attempt` (given its number and the photo's deadline) until it succeeds or fails
    /// for good: a transient failure (disk full, catalog busy) is tried again after
    /// `worker.retry_base_seconds`, doubling, up to `worker.max_attempts` tries. The spool's
    /// workers and the import share this, so both retry alike.
    /// - Parameters:
    ///   - stop: a raised stop ends the retries at once; `failWhenStopped` says whether the last
    ///     transient failure then counts as failed (the spool, which moves it to `failed/`) or as
    ///     stopped (the import, whose next run takes the photo again).
    ///   - retrying: told of each retry, with the failure, the try that failed and the delay.
    ///   - availability: with a shared catalog, whether its database answers. A failure for want
    ///     of it (an outage) is no try of the photo's: the photo waits until the database is
    ///     back and is tried again, with a deadline of its own from then, however long that takes.
    ///     A stop meanwhile ends it as stopped, never failed.
    public func withRetries(started: Date, stop: StopSignal, failWhenStopped: Bool,
                     availability: (any CatalogAvailability)? = nil,
                     retrying: (ProcessingFailure, Int, Double) -> Void,
                     _ attempt: (Int, Date) throws -> PhotoOutcome) -> TriesOutcome {
        var deadline = started.addingTimeInterval(configuration.photoTimeoutSeconds)
        var number = 1
        while true {
            do {
                return .done(try attempt(number, deadline))
            } catch {
                let failure = ProcessingFailure(error)
                if failure.isOutage, let availability {
                    availability.suspect()
                    while !stop.isRaised && !availability.waitUntilReachable(timeout: 0.5) {}
                    if stop.isRaised { return .stopped(failure, attempts: number) }
                    deadline = Date().addingTimeInterval(configuration.photoTimeoutSeconds)
                    continue
                }
                if failure.isTransient && stop.isRaised && !failWhenStopped { return .stopped(failure, attempts: number) }
                guard failure.isTransient, number < configuration.maxAttempts, !stop.isRaised else {
                    return .failed(failure, attempts: number)
                }
                let delay = configuration.retryBaseSeconds * pow(2, Double(number - 1))
                retrying(failure, number, delay)
                stop.sleep(delay)
                number += 1
            }
        }
    }
}
