/// What one pass over the due deliveries did, over every endpoint.
public struct WebhookPass: Sendable, Equatable {
    /// Deliveries an endpoint answered with 2xx.
    public var delivered: Int
    /// Tries that failed (an error, a timeout or a non-2xx status); each is retried later.
    public var failed: Int

    /// A pass with the given counts.
    public init(delivered: Int = 0, failed: Int = 0) {
        self.delivered = delivered
        self.failed = failed
    }

    /// Tries made.
    public var attempts: Int { delivered + failed }

    /// Adds the counts of another pass.
    public static func += (lhs: inout WebhookPass, rhs: WebhookPass) {
        lhs.delivered += rhs.delivered
        lhs.failed += rhs.failed
    }
}
