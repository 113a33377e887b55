import Catalog
import Dispatch
import Foundation
import Logging
import Webhooks
import Settings

/// Webhook delivery beside `darkroom run` (when `webhooks.urls` is set): the dispatcher runs on
/// the concurrency pool while the workers run on their own threads, so a drop folder's photos
/// reach the backend as `serve`'s do. At the end of a `--once` run, one last pass sends what the
/// run's last photos produced; whatever an endpoint did not take stays pending in the catalog
/// (SQLite or PostgreSQL) for the next run or `serve`.
final class RunWebhooks: Sendable {
    private let dispatcher: WebhookDispatcher
    private let catalog: any CatalogStore
    private let logger: Logger
    private let delivering: Task<Void, Never>

    /// Starts delivering; nil when no URL is configured. Throws a one-line reason when URLs are
    /// set without a secret.
    static func start(_ configuration: Configuration, catalog: any CatalogStore,
                      logger: Logger) throws(WebhookError) -> RunWebhooks? {
        guard !configuration.webhooks.urls.isEmpty else { return nil }
        let dispatcher = try WebhookDispatcher(settings: configuration.webhooks, catalog: catalog, logger: logger)
        return RunWebhooks(dispatcher: dispatcher, catalog: catalog, logger: logger)
    }

    private init(dispatcher: WebhookDispatcher, catalog: any CatalogStore, logger: Logger) {
        self.dispatcher = dispatcher
        self.catalog = catalog
        self.logger = logger
        delivering = Task { await dispatcher.run() }
    }

    /// Stops delivering (after one last pass over what is due, with `lastPass`), closes the
    /// HTTP client and logs what is left pending. Blocks until done.
    func finish(lastPass: Bool) {
        let done = DispatchSemaphore(value: 0)
        Task { [self] in
            delivering.cancel()
            await delivering.value
            let pass = lastPass ? await dispatcher.deliverDue() : WebhookPass()
            await dispatcher.shutdown()
            let pending = (try? catalog.counts(now: Date()).outboxPending) ?? 0
            var fields: Logger.Metadata = ["pending_events": "\(pending)"]
            if lastPass { fields["last_pass_delivered"] = "\(pass.delivered)"; fields["last_pass_failed"] = "\(pass.failed)" }
            if pending > 0 {
                logger.notice("webhook delivery stopped; pending events go out at the next run or with darkroom serve", metadata: fields)
            } else {
                logger.info("webhook delivery stopped; every event delivered", metadata: fields)
            }
            done.signal()
        }
        done.wait()
    }
}
