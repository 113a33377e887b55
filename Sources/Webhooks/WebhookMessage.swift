import Catalog
import Crypto
import Foundation

/// One outbox event as an endpoint receives it: a JSON body and the headers that sign it.
///
/// The body is `{"id":…,"event":"…","created_at":"…","payload":{…}}`. The signature is
/// `sha256=` and the hex HMAC-SHA256, keyed by the shared secret, of `<timestamp>.<body>`, where
/// the timestamp (Unix seconds, also sent as a header) lets a receiver refuse stale replays.
struct WebhookMessage: Sendable {
    /// `sha256=<hex>`: the HMAC of `<timestamp>.<body>`.
    static let signatureHeader = "X-Darkroom-Signature"
    /// When the request was signed, in Unix seconds.
    static let timestampHeader = "X-Darkroom-Timestamp"
    /// The event's name (`picture.added`, ...).
    static let eventHeader = "X-Darkroom-Event"
    /// The outbox id: the same for every try and every endpoint, so a receiver can de-duplicate.
    static let deliveryHeader = "X-Darkroom-Delivery"
    /// Which try this is, from 1.
    static let attemptHeader = "X-Darkroom-Attempt"

    /// The JSON body.
    let body: [UInt8]
    /// The headers to send, in order.
    let headers: [(name: String, value: String)]

    /// The message of `event`, signed with `secret` at `timestamp`.
    init(event: OutboxEvent, attempt: Int, timestamp: Int, secret: [UInt8]) {
        body = Self.body(of: event)
        headers = [
            ("Content-Type", "application/json"),
            ("User-Agent", "darkroom-webhooks"),
            (Self.eventHeader, event.event.rawValue),
            (Self.deliveryHeader, event.id.map(String.init) ?? ""),
            (Self.attemptHeader, String(attempt)),
            (Self.timestampHeader, String(timestamp)),
            (Self.signatureHeader, Self.signature(timestamp: timestamp, body: body, secret: secret)),
        ]
    }

    /// The JSON body of an event. The payload is embedded as stored; one that is not valid JSON
    /// is sent as a string, so that a damaged row cannot make a receiver refuse it forever.
    static func body(of event: OutboxEvent) -> [UInt8] {
        let payload = Array(event.payload.utf8)
        let validPayload = (try? JSONSerialization.jsonObject(with: Data(payload), options: [.fragmentsAllowed])) != nil
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let created = formatter.string(from: Date(timeIntervalSince1970: event.createdAt))
        var text = "{\"id\":\(event.id ?? 0),\"event\":\(quoted(event.event.rawValue)),\"created_at\":\(quoted(created)),\"payload\":"
        text += validPayload ? event.payload : quoted(event.payload)
        text += "}"
        return Array(text.utf8)
    }

    /// `sha256=<hex>` of `<timestamp>.<body>` keyed by `secret`.
    static func signature(timestamp: Int, body: [UInt8], secret: [UInt8]) -> String {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: secret))
        hmac.update(data: Array("\(timestamp).".utf8))
        hmac.update(data: body)
        let code = hmac.finalize()
        return "sha256=" + code.map { String(format: "%02x", $0) }.joined()
    }

    /// A JSON string literal.
    private static func quoted(_ text: String) -> String {
        guard let data = try? JSONEncoder().encode(text) else { return "\"\"" }
        return String(decoding: data, as: UTF8.self)
    }
}
