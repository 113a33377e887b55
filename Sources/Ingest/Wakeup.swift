import Foundation

/// A wake-up for threads that wait with a time limit: `wake` ends every wait in progress (a
/// photo was admitted, a photo was handed over), and a wait ends anyway when its time is up.
public final class Wakeup: @unchecked Sendable {
    // @unchecked: `wakes` is touched only while `condition` is locked.
    private let condition = NSCondition()
    private var wakes = 0

    public init() {}

    /// Ends every wait in progress.
    public func wake() {
        condition.lock()
        wakes += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until `wake` is called or `timeout` seconds pass.
    public func wait(timeout: Double) {
        condition.lock()
        let seen = wakes
        let deadline = Date(timeIntervalSinceNow: timeout)
        while wakes == seen, condition.wait(until: deadline) {}
        condition.unlock()
    }
}
