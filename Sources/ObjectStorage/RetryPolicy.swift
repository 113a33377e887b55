import Foundation

/// How the client tries again after a transient failure: at most `maxAttempts` sends of one
/// request, waiting between them an exponential backoff with full jitter (a uniform draw between
/// zero and `min(maxDelaySeconds, baseDelaySeconds × 2^(attempt−1))`), and at least what the
/// server's `Retry-After` asks, up to `maxRetryAfterSeconds`. A request whose body cannot be
/// sent a second time (a stream) is never retried.
public struct RetryPolicy: Sendable, Equatable {
    /// Sends of one request in all, the first included (1: never retry).
    public var maxAttempts: Int
    /// The backoff's ceiling after the first failure.
    public var baseDelaySeconds: Double
    /// The most the backoff's ceiling grows to.
    public var maxDelaySeconds: Double
    /// The most a server's `Retry-After` is obeyed for (a longer one is cut to this).
    public var maxRetryAfterSeconds: Double

    public init(maxAttempts: Int = 4, baseDelaySeconds: Double = 0.2, maxDelaySeconds: Double = 10, maxRetryAfterSeconds: Double = 30) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelaySeconds = max(0, baseDelaySeconds)
        self.maxDelaySeconds = max(0, maxDelaySeconds)
        self.maxRetryAfterSeconds = max(0, maxRetryAfterSeconds)
    }

    /// Never retries.
    public static let none = RetryPolicy(maxAttempts: 1)

    /// Whether a request that failed on its `attempt`-th send (1-based) may be sent again.
    public func allowsRetry(afterAttempt attempt: Int) -> Bool {
        attempt < maxAttempts
    }

    /// The ceiling of the jittered wait after the `attempt`-th send failed:
    /// `min(maxDelaySeconds, baseDelaySeconds × 2^(attempt−1))`.
    public func backoffCeiling(afterAttempt attempt: Int) -> Double {
        let exponent = Double(min(max(attempt, 1) - 1, 62))
        return min(maxDelaySeconds, baseDelaySeconds * pow(2, exponent))
    }

    /// The wait before the next send after the `attempt`-th failed: `unitRandom` (a draw in
    /// [0, 1)) times the backoff's ceiling, or the server's `Retry-After` (capped) if longer.
    public func delay(afterAttempt attempt: Int, retryAfterSeconds: Double?, unitRandom: Double) -> Double {
        let jittered = min(max(unitRandom, 0), 1) * backoffCeiling(afterAttempt: attempt)
        guard let retryAfterSeconds, retryAfterSeconds.isFinite, retryAfterSeconds > 0 else { return jittered }
        return max(jittered, min(retryAfterSeconds, maxRetryAfterSeconds))
    }

    /// The seconds of a `Retry-After` header (`120`, or `1.5`); nil for an HTTP date or anything
    /// else unreadable.
    public static func retryAfterSeconds(_ header: String?) -> Double? {
        guard let text = header?.trimmingCharacters(in: .whitespaces), let value = Double(text), value.isFinite, value >= 0 else {
            return nil
        }
        return value
    }
}
