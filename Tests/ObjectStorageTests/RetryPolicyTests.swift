import Foundation
@testable import ObjectStorage
import Testing

/// The backoff's arithmetic: full jitter under an exponential ceiling, and Retry-After obeyed.
@Suite("Retry policy")
struct RetryPolicyTests {
    let policy = RetryPolicy(maxAttempts: 4, baseDelaySeconds: 0.2, maxDelaySeconds: 10, maxRetryAfterSeconds: 30)

    @Test("the ceiling doubles from the base after each failed attempt, up to the maximum")
    func ceiling() {
        #expect(policy.backoffCeiling(afterAttempt: 1) == 0.2)
        #expect(policy.backoffCeiling(afterAttempt: 2) == 0.4)
        #expect(policy.backoffCeiling(afterAttempt: 3) == 0.8)
        #expect(policy.backoffCeiling(afterAttempt: 6) == 6.4)
        #expect(policy.backoffCeiling(afterAttempt: 7) == 10)
        #expect(policy.backoffCeiling(afterAttempt: 1000) == 10)
        #expect(policy.backoffCeiling(afterAttempt: 0) == 0.2)
    }

    @Test("full jitter: the wait is the draw times the ceiling, from zero to (not reaching) the ceiling")
    func jitter() {
        #expect(policy.delay(afterAttempt: 3, retryAfterSeconds: nil, unitRandom: 0) == 0)
        #expect(policy.delay(afterAttempt: 3, retryAfterSeconds: nil, unitRandom: 0.5) == 0.4)
        #expect(abs(policy.delay(afterAttempt: 3, retryAfterSeconds: nil, unitRandom: 0.999_999) - 0.8) < 1e-5)
        #expect(policy.delay(afterAttempt: 3, retryAfterSeconds: nil, unitRandom: 7) == 0.8)  // a draw out of range is clamped
        var generator = SystemRandomNumberGenerator()
        for attempt in 1...10 {
            let delay = policy.delay(afterAttempt: attempt, retryAfterSeconds: nil, unitRandom: Double.random(in: 0..<1, using: &generator))
            #expect(delay >= 0 && delay < policy.backoffCeiling(afterAttempt: attempt))
        }
    }

    @Test("Retry-After: waited at least as long as the server asks, up to the cap; the jitter wins when longer")
    func retryAfter() {
        #expect(policy.delay(afterAttempt: 1, retryAfterSeconds: 3, unitRandom: 0.5) == 3)
        #expect(policy.delay(afterAttempt: 1, retryAfterSeconds: 0, unitRandom: 0.5) == 0.1)
        #expect(policy.delay(afterAttempt: 1, retryAfterSeconds: 3600, unitRandom: 0.5) == 30)
        #expect(policy.delay(afterAttempt: 7, retryAfterSeconds: 1, unitRandom: 0.5) == 5)
        #expect(policy.delay(afterAttempt: 1, retryAfterSeconds: .infinity, unitRandom: 0.5) == 0.1)
        #expect(RetryPolicy.retryAfterSeconds("120") == 120)
        #expect(RetryPolicy.retryAfterSeconds(" 1.5 ") == 1.5)
        #expect(RetryPolicy.retryAfterSeconds("Wed, 21 Oct 2015 07:28:00 GMT") == nil)
        #expect(RetryPolicy.retryAfterSeconds("-3") == nil)
        #expect(RetryPolicy.retryAfterSeconds(nil) == nil)
    }

    @Test("attempts are bounded: four sends in all by default, one with .none")
    func attempts() {
        #expect(RetryPolicy().maxAttempts == 4)
        #expect((1...3).allSatisfy { policy.allowsRetry(afterAttempt: $0) })
        #expect(!policy.allowsRetry(afterAttempt: 4))
        #expect(!RetryPolicy.none.allowsRetry(afterAttempt: 1))
        #expect(RetryPolicy(maxAttempts: 0).maxAttempts == 1)
    }
}
