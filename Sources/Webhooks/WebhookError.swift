/// Why webhook delivery cannot start.
public enum WebhookError: Error, CustomStringConvertible, Sendable, Equatable {
    /// Endpoints are configured but there is no key to sign the events with.
    case missingSecret(endpoints: Int)

    public var description: String {
        switch self {
        case .missingSecret(let endpoints):
            "webhooks.urls lists \(endpoints) endpoint(s) but no signing secret is set; set webhooks.secret in pipeline.json or DARKROOM_WEBHOOK_SECRET in the environment"
        }
    }
}
