import Foundation

/// Bounds the source pixels being decoded and rendered at once across a worker's threads,
/// so memory follows the photos' sizes rather than their count: one 100 MP photo does not run
/// beside seven others. A photo larger than the whole budget runs alone.
public final class PixelBudget: @unchecked Sendable {
    // @unchecked: `inUse` is only read and written while `condition` is locked.
    private let condition = NSCondition()
    private let limit: Int
    private var inUse = 0

    public init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Runs `body` once `pixels` fit in the budget, and gives them back afterwards.
    public func withPixels<T>(_ pixels: Int, _ body: () throws -> T) rethrows -> T {
        let amount = min(max(pixels, 1), limit)
        condition.lock()
        while inUse > 0 && inUse + amount > limit {
            condition.wait()
        }
        inUse += amount
        condition.unlock()
        defer {
            condition.lock()
            inUse -= amount
            condition.broadcast()
            condition.unlock()
        }
        return try body()
    }
}
