import Catalog
import Foundation

/// What a worker holds from the shared queue: the photos in hand (whose leases the renewer
/// moves on), the run's tallies, and the wake-up of the threads waiting for a job.
final class SharedQueueHand: @unchecked Sendable {
    // @unchecked: every mutable property is touched only while `condition` is locked.
    private let condition = NSCondition()
    private var held: [Int64: QueuedPhoto] = [:]
    private(set) var tally = RunTally()
    private let wakeup = Wakeup()

    /// Wakes the threads waiting for a job (a photo was just admitted here).
    func wake() { wakeup.wake() }

    /// Waits until `wake` is called or `timeout` passes.
    func waitForWork(timeout: Double) { wakeup.wait(timeout: timeout) }

    func holding(_ photo: QueuedPhoto) {
        condition.lock()
        held[photo.jobId] = photo
        condition.unlock()
    }

    func finished(_ photo: QueuedPhoto, _ result: RunTally.Result) {
        condition.lock()
        held[photo.jobId] = nil
        tally.seen += 1
        tally.record(result)
        condition.broadcast()
        condition.unlock()
    }

    /// The photos in hand right now.
    var inHand: [QueuedPhoto] {
        condition.lock()
        defer { condition.unlock() }
        return Array(held.values)
    }

    var snapshot: RunTally {
        condition.lock()
        defer { condition.unlock() }
        return tally
    }
}
