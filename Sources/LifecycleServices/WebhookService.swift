import Logging
import ServiceLifecycle
import Webhooks

/// Webhook delivery as a service of `darkroom serve`: delivers until a graceful shutdown (or
/// cancellation), then closes its HTTP client. Undelivered events stay pending in the catalog.
public struct WebhookService: Service {
    let dispatcher: WebhookDispatcher
    let logger: Logger

    public init(dispatcher: WebhookDispatcher, logger: Logger) {
        self.dispatcher = dispatcher
        self.logger = logger
    }

    public func run() async {
        await cancelWhenGracefulShutdown {
            await dispatcher.run()
        }
        await dispatcher.shutdown()
        logger.info("webhook delivery stopped")
    }
}
