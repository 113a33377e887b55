import Foundation
import GRDB

/// The webhook dispatcher's state in the catalog: each call is one short transaction, so that
/// delivery never holds the catalog while an endpoint answers.
extension Catalog {
    /// Whether `endpoint` has new outbox events or deliveries due by `instant` (a read: no lock).
    public func webhookWorkIsDue(endpoint: String, by instant: Double) throws(CatalogError) -> Bool {
        try read { db in try WebhookDeliveryRecord.hasWork(endpoint: endpoint, dueBy: instant, in: db) }
    }

    /// Takes on new outbox events for `endpoint` and claims up to `limit` deliveries due by
    /// `instant` until `leaseUntil`, in one immediate transaction: two dispatchers sharing the
    /// catalog never claim the same delivery at once.
    public func claimWebhookDeliveries(endpoint: String, dueBy instant: Double, leaseUntil: Double,
                                       limit: Int) throws(CatalogError) -> [WebhookDeliveryRecord.Claim] {
        try write { db in
            try WebhookDeliveryRecord.claimDue(endpoint: endpoint, dueBy: instant, leaseUntil: leaseUntil, limit: limit, in: db)
        }
    }

    /// Records a 2xx answer; marks the outbox row delivered once every one of `endpoints` has it.
    public func recordWebhookDelivered(outboxId: Int64, endpoint: String, status: Int, at instant: Double,
                                       endpoints: [String]) throws(CatalogError) {
        try write { db in
            try WebhookDeliveryRecord.recordDelivered(outboxId: outboxId, endpoint: endpoint, status: status, at: instant,
                                                      endpoints: endpoints, in: db)
        }
    }

    /// Records a failed try, due again at `retryAt`.
    public func recordWebhookFailure(outboxId: Int64, endpoint: String, status: Int?, reason: String,
                                     retryAt: Double) throws(CatalogError) {
        try write { db in
            try WebhookDeliveryRecord.recordFailure(outboxId: outboxId, endpoint: endpoint, status: status, reason: reason,
                                                    retryAt: retryAt, in: db)
        }
    }

    /// Gives back a claim without counting a try.
    public func releaseWebhookClaim(outboxId: Int64, endpoint: String, at instant: Double) throws(CatalogError) {
        try write { db in try WebhookDeliveryRecord.release(outboxId: outboxId, endpoint: endpoint, at: instant, in: db) }
    }

    /// Makes due the first waiting event of every moment of `endpoint` (run when a dispatcher starts).
    public func promoteWaitingWebhookDeliveries(endpoint: String) throws(CatalogError) {
        try write { db in try WebhookDeliveryRecord.promoteWaiting(endpoint: endpoint, in: db) }
    }

    /// The delivery rows of one endpoint, in outbox order.
    public func webhookDeliveries(endpoint: String) throws(CatalogError) -> [WebhookDeliveryRecord] {
        try read { db in try WebhookDeliveryRecord.all(endpoint: endpoint, in: db) }
    }

    /// Delivery totals over every endpoint, as of `now`.
    public func webhookStatistics(now: Date = Date()) throws(CatalogError) -> WebhookStatistics {
        let instant = now.timeIntervalSince1970
        return try read { db in try WebhookDeliveryRecord.statistics(now: instant, in: db) }
    }
}
