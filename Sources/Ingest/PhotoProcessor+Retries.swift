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
    public func withRetries(started: Date, stop: StopSignal, failWhenStopped: Bool,
                     retrying: (ProcessingFailure, Int, Double) -> Void,
                     _ attempt: (Int, Date) throws -> PhotoOutcome) -> TriesOutcome {
        let deadline = started.addingTimeInterval(configuration.photoTimeoutSeconds)
        var number = 1
        while true {
            do {
                return .done(try attempt(number, deadline))
            } catch {
                let failure = ProcessingFailure(error)
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
