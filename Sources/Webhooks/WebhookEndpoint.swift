import Foundation

/// One configured webhook URL, and the form of it that logs may show.
struct WebhookEndpoint: Sendable, Hashable {
    /// The URL as configured: what requests go to, and the endpoint's key in the catalog.
    let url: String
    /// The URL without user, password or query, which may carry credentials.
    let label: String

    init(url: String) {
        self.url = url
        guard var parts = URLComponents(string: url) else {
            label = "(unparsable URL)"
            return
        }
        parts.user = nil
        parts.password = nil
        parts.query = nil
        parts.fragment = nil
        label = parts.string ?? "(unparsable URL)"
    }
}
