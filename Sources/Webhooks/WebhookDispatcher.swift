import AsyncHTTPClient
import Catalog
import Dispatch
import Foundation
import Logging
import ServiceSettings

/// Delivers the catalog's outbox events to every configured endpoint as signed HTTP POSTs
/// (see `WebhookMessage` for the wire format), retried with exponential backoff, in order per
/// moment, and marked delivered only on a 2xx.
///
/// Each endpoint is served by its own loop, so a dead endpoint holds up neither the others nor
/// the spool workers. Its state lives in the catalog (`webhook_deliveries`), so a restart neither
/// resends what was delivered nor loses what was not. Several processes (on several machines,
/// with a PostgreSQL catalog) may run a dispatcher on one catalog: a delivery is claimed with a
/// lease in one transaction, so two dispatchers do not send it at once. Delivery is at least once: a process killed between an
/// endpoint's 2xx and the catalog write sends that event again once the lease ends, with the
/// same `X-Darkroom-Delivery`, which receivers use to de-duplicate.
public final class WebhookDispatcher: Sendable {
    let settings: WebhookSettings
    let endpoints: [WebhookEndpoint]
    let secret: [UInt8]
    let catalog: any WebhookStore
    let logger: Logger
    let client: HTTPClient
    /// Deliveries in flight per endpoint: as many as the HTTP client keeps connections to one
    /// host, so that no request spends its deadline waiting for a connection.
    let inFlight: Int
    /// Seconds a claim holds a delivery: one request timeout for the request and as much again
    /// for recording its result, after which another dispatcher may take it.
    let lease: Double
    /// `timeout_seconds`, as the HTTP client counts time.
    let timeoutNanoseconds: Int64
    /// Catalog calls block (on SQLite's writer lock, on PostgreSQL's answers): they run on this
    /// queue, never on the threads of the Swift concurrency pool that serve HTTP requests.
    let catalogQueue = DispatchQueue(label: "darkroom.webhooks.catalog")

    /// A dispatcher for `settings.urls`; throws `WebhookError.missingSecret` when URLs are set
    /// but neither `webhooks.secret` nor `DARKROOM_WEBHOOK_SECRET` (in `environment`) is.
    public init(settings: WebhookSettings, catalog: any WebhookStore, logger: Logger,
                environment: [String: String] = ProcessInfo.processInfo.environment) throws(WebhookError) {
        var seen = Set<String>()
        let urls = settings.urls.filter { seen.insert($0).inserted }
        let secret = settings.resolvedSecret(environment: environment)
        if !urls.isEmpty, secret == nil { throw .missingSecret(endpoints: urls.count) }
        self.settings = settings
        self.endpoints = urls.map(WebhookEndpoint.init(url:))
        self.secret = Array((secret ?? "").utf8)
        self.catalog = catalog
        self.logger = logger
        lease = settings.timeoutSeconds * 2
        timeoutNanoseconds = Int64((settings.timeoutSeconds * 1e9).rounded())
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .nanoseconds(timeoutNanoseconds), read: .nanoseconds(timeoutNanoseconds))
        // A redirect is an answer, not a delivery: the endpoint's URL is what must be configured.
        configuration.redirectConfiguration = .disallow
        // A refused connection is a failed try, retried on this dispatcher's own backoff, rather
        // than a request that waits out its whole timeout while the client reconnects.
        configuration.connectionPool.retryConnectionEstablishment = false
        inFlight = max(1, configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit)
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Delivers until the task is cancelled: one loop per endpoint, each looking at the outbox
    /// every `poll_interval_seconds` once nothing is due.
    public func run() async {
        guard !endpoints.isEmpty else {
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(settings.pollIntervalSeconds)) }
            return
        }
        await withTaskGroup(of: Void.self) { group in
            for endpoint in endpoints {
                group.addTask { await self.serve(endpoint) }
            }
        }
    }

    /// One pass over what is due now, every endpoint at once: each sends its due events, and the
    /// next events of their moments as those are delivered, until nothing due at the start is left.
    public func deliverDue() async -> WebhookPass {
        await withTaskGroup(of: WebhookPass.self) { group in
            for endpoint in endpoints {
                group.addTask { await self.pass(endpoint) }
            }
            var total = WebhookPass()
            for await pass in group { total += pass }
            return total
        }
    }

    /// Closes the HTTP client; call it once `run` has returned.
    public func shutdown() async {
        do {
            try await client.shutdown()
        } catch {
            logger.warning("webhook client did not shut down cleanly", metadata: ["reason": "\(error)"])
        }
    }

    /// Delivery totals over every endpoint, for metrics.
    public static func statistics(catalog: any WebhookStore) throws(CatalogError) -> WebhookStatistics {
        try catalog.webhookStatistics(now: Date())
    }

    // MARK: - Delivery

    private func serve(_ endpoint: WebhookEndpoint) async {
        do {
            try await onCatalog { () throws(CatalogError) in try self.catalog.promoteWaitingWebhookDeliveries(endpoint: endpoint.url) }
        } catch {
            logger.error("webhook delivery: cannot read the catalog", metadata: ["endpoint": "\(endpoint.label)", "reason": "\(error)"])
        }
        while !Task.isCancelled {
            _ = await pass(endpoint)
            try? await Task.sleep(for: .seconds(settings.pollIntervalSeconds))
        }
    }

    /// Sends what is due for one endpoint, round after round, until a round finds nothing due
    /// by the pass's start (so a failed try waits for its backoff, even a zero one).
    func pass(_ endpoint: WebhookEndpoint) async -> WebhookPass {
        let start = Date().timeIntervalSince1970
        var total = WebhookPass()
        while !Task.isCancelled {
            let claims: [WebhookDeliveryRecord.Claim]
            do {
                guard try await onCatalog({ () throws(CatalogError) in
                    try self.catalog.webhookWorkIsDue(endpoint: endpoint.url, by: start)
                }) else { break }
                let leaseUntil = Date().timeIntervalSince1970 + lease
                claims = try await onCatalog { () throws(CatalogError) in
                    try self.catalog.claimWebhookDeliveries(endpoint: endpoint.url, dueBy: start, leaseUntil: leaseUntil, limit: self.inFlight)
                }
            } catch {
                // An outage of a shared catalog's database is logged once by its probe, not here
                // at every poll: delivery goes on once it is back.
                let level: Logger.Level = if case CatalogError.unavailable? = error as? CatalogError { .debug } else { .error }
                logger.log(level: level, "webhook delivery: cannot read the outbox", metadata: ["endpoint": "\(endpoint.label)", "reason": "\(error)"])
                break
            }
            if claims.isEmpty { break }
            total += await withTaskGroup(of: WebhookPass.self) { group in
                for claim in claims {
                    group.addTask { await self.deliver(claim, to: endpoint) }
                }
                var round = WebhookPass()
                for await one in group { round += one }
                return round
            }
        }
        return total
    }

    /// What one try came to.
    private enum Outcome {
        case delivered(status: Int)
        case failed(status: Int?, reason: String)
        /// The task was cancelled mid-request: not a try of the endpoint.
        case stopped
    }

    /// Sends one claimed event and records the result.
    private func deliver(_ claim: WebhookDeliveryRecord.Claim, to endpoint: WebhookEndpoint) async -> WebhookPass {
        guard let id = claim.event.id else { return WebhookPass() }
        let attempt = claim.attempts + 1
        let outcome = await post(claim.event, attempt: attempt, to: endpoint)
        let now = Date().timeIntervalSince1970
        let urls = endpoints.map(\.url)
        do {
            switch outcome {
            case .delivered(let status):
                try await onCatalog { () throws(CatalogError) in
                    try self.catalog.recordWebhookDelivered(outboxId: id, endpoint: endpoint.url, status: status, at: now, endpoints: urls)
                }
                return WebhookPass(delivered: 1)
            case .failed(let status, let reason):
                let delay = retryDelay(afterAttempt: attempt)
                logger.warning("webhook delivery failed", metadata: [
                    "endpoint": "\(endpoint.label)", "status": "\(status.map(String.init) ?? "none")",
                    "event": "\(claim.event.event.rawValue)", "delivery": "\(id)", "attempt": "\(attempt)",
                    "retry_in_s": "\(delay)", "reason": "\(reason)",
                ])
                try await onCatalog { () throws(CatalogError) in
                    try self.catalog.recordWebhookFailure(outboxId: id, endpoint: endpoint.url, status: status, reason: reason, retryAt: now + delay)
                }
                return WebhookPass(failed: 1)
            case .stopped:
                try await onCatalog { () throws(CatalogError) in
                    try self.catalog.releaseWebhookClaim(outboxId: id, endpoint: endpoint.url, at: now)
                }
                return WebhookPass()
            }
        } catch {
            logger.error("webhook delivery: cannot record a result; the event is sent again once its claim expires", metadata: [
                "endpoint": "\(endpoint.label)", "delivery": "\(id)", "reason": "\(error)"])
            return WebhookPass()
        }
    }

    /// POSTs one event; a 2xx is a delivery, anything else a failed try.
    private func post(_ event: OutboxEvent, attempt: Int, to endpoint: WebhookEndpoint) async -> Outcome {
        let message = WebhookMessage(event: event, attempt: attempt, timestamp: Int(Date().timeIntervalSince1970), secret: secret)
        var request = HTTPClientRequest(url: endpoint.url)
        request.method = .POST
        for (name, value) in message.headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(message.body)
        let status: Int
        do {
            let response = try await client.execute(request, timeout: .nanoseconds(timeoutNanoseconds))
            status = Int(response.status.code)
            // Read the answer to its end so the connection can serve the next delivery; what it
            // says does not change the verdict of its status.
            do { for try await _ in response.body {} } catch {}
        } catch {
            if Task.isCancelled { return .stopped }
            return .failed(status: nil, reason: Self.oneLine(error))
        }
        return (200..<300).contains(status) ? .delivered(status: status) : .failed(status: status, reason: "HTTP \(status)")
    }

    /// Seconds to wait after the `attempt`th failed try: the base, doubling, up to the maximum.
    func retryDelay(afterAttempt attempt: Int) -> Double {
        min(settings.retryBaseSeconds * pow(2, Double(max(0, attempt - 1))), settings.retryMaxSeconds)
    }

    /// Runs a blocking catalog call on the catalog queue.
    private func onCatalog<T: Sendable>(_ body: @escaping @Sendable () throws(CatalogError) -> T) async throws(CatalogError) -> T {
        let result: Result<T, CatalogError> = await withCheckedContinuation { continuation in
            catalogQueue.async { continuation.resume(returning: Result(catching: body)) }
        }
        return try result.get()
    }

    private static func oneLine(_ error: any Error) -> String {
        String(describing: error).split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
