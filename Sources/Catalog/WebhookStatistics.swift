/// Webhook delivery totals over every endpoint, for metrics. One delivery is one event sent to
/// one endpoint: an event for two endpoints counts twice.
public struct WebhookStatistics: Sendable, Equatable {
    /// Deliveries an endpoint answered with 2xx.
    public var delivered: Int
    /// Tries that failed (an error, a timeout or a non-2xx status), over all deliveries.
    public var failedAttempts: Int
    /// Deliveries not yet made.
    public var pending: Int
    /// Seconds since the oldest pending delivery's event was written; nil when none is pending.
    public var oldestPendingAge: Double?

    /// Totals as given.
    public init(delivered: Int, failedAttempts: Int, pending: Int, oldestPendingAge: Double?) {
        self.delivered = delivered
        self.failedAttempts = failedAttempts
        self.pending = pending
        self.oldestPendingAge = oldestPendingAge
    }
}
