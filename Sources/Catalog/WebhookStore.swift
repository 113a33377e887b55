import Foundation

/// Where the webhook dispatcher keeps its state: which outbox events each endpoint has taken
/// on, which are due, claimed, failing or delivered. The SQLite `Catalog` and `PostgresCatalog`
/// keep it with the same meaning (`webhook_deliveries`), so one dispatcher serves either store.
///
/// Each call is short and stands alone, so that delivery never holds the catalog while an
/// endpoint answers. Claims are exclusive: dispatchers in several processes, on several machines
/// when the catalog is shared, never claim the same delivery at once.
public protocol WebhookStore: Sendable {
    /// Whether `endpoint` has new outbox events or deliveries due by `instant` (a read: no lock).
    func webhookWorkIsDue(endpoint: String, by instant: Double) throws(CatalogError) -> Bool
    /// Takes on new outbox events for `endpoint` and claims up to `limit` deliveries due by
    /// `instant`, oldest first, until `leaseUntil`.
    func claimWebhookDeliveries(endpoint: String, dueBy instant: Double, leaseUntil: Double,
                                limit: Int) throws(CatalogError) -> [WebhookDeliveryRecord.Claim]
    /// Records a 2xx answer; marks the outbox row delivered once every one of `endpoints` has it.
    func recordWebhookDelivered(outboxId: Int64, endpoint: String, status: Int, at instant: Double,
                                endpoints: [String]) throws(CatalogError)
    /// Records a failed try, due again at `retryAt`.
    func recordWebhookFailure(outboxId: Int64, endpoint: String, status: Int?, reason: String,
                              retryAt: Double) throws(CatalogError)
    /// Gives back a claim without counting a try.
    func releaseWebhookClaim(outboxId: Int64, endpoint: String, at instant: Double) throws(CatalogError)
    /// Makes due the first waiting event of every moment of `endpoint` (run when a dispatcher starts).
    func promoteWaitingWebhookDeliveries(endpoint: String) throws(CatalogError)
    /// The delivery rows of one endpoint, in outbox order.
    func webhookDeliveries(endpoint: String) throws(CatalogError) -> [WebhookDeliveryRecord]
    /// Delivery totals over every endpoint, as of `now`.
    func webhookStatistics(now: Date) throws(CatalogError) -> WebhookStatistics
}

extension Catalog: WebhookStore {}
