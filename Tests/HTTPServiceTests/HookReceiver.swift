import Crypto
import Foundation
import Hummingbird
import Logging
import Synchronization

/// The backend's webhook endpoint, on a free loopback port in the test process: it records
/// every POST to `/darkroom` (event, body, timestamp, signature) in arrival order and answers 204.
final class HookReceiver: Sendable {
    struct Message: Sendable {
        let event: String
        let body: [UInt8]
        let timestamp: String
        let signature: String
        /// `X-Darkroom-Delivery`: the same on every try of one event.
        let delivery: String
    }

    let port: Int
    var url: String { "http://127.0.0.1:\(port)/darkroom" }
    private let inbox: Inbox
    private let task: Task<Void, any Error>

    private init(port: Int, inbox: Inbox, task: Task<Void, any Error>) {
        self.port = port
        self.inbox = inbox
        self.task = task
    }

    /// Runs `body` with a receiver, then stops it.
    static func with<T>(_ body: (HookReceiver) async throws -> T) async throws -> T {
        let receiver = try await start()
        defer { receiver.task.cancel() }
        return try await body(receiver)
    }

    private static func start() async throws -> HookReceiver {
        let inbox = Inbox()
        let router = Router()
        router.post("/darkroom") { request, _ -> HTTPResponse.Status in
            let body = Array(try await request.body.collect(upTo: 1 << 20).readableBytesView)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            let header = { (name: String) in headers[name] ?? "" }
            inbox.append(Message(event: header("x-darkroom-event"), body: body, timestamp: header("x-darkroom-timestamp"),
                                 signature: header("x-darkroom-signature"), delivery: header("x-darkroom-delivery")))
            return .noContent
        }
        let (ports, announce) = AsyncStream<Int>.makeStream()
        let hook = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                               onServerRunning: { announce.yield($0.localAddress?.port ?? 0) },
                               logger: Logger(label: "hook") { _ in SwiftLogNoOpLogHandler() })
        let task = Task { try await hook.runService() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            task.cancel()
            throw CancellationError()
        }
        return HookReceiver(port: port, inbox: inbox, task: task)
    }

    /// What has arrived so far.
    var messages: [Message] { inbox.messages.withLock { $0 } }

    /// Each event once, as a backend sees them after de-duplicating by `X-Darkroom-Delivery`:
    /// delivery is at least once, and a try whose answer came too late is sent again.
    var distinctMessages: [Message] {
        var seen: Set<String> = []
        return messages.filter { seen.insert($0.delivery).inserted }
    }

    /// Waits until `count` messages have arrived or `seconds` have passed; returns what arrived.
    func messages(atLeast count: Int, within seconds: Double) async throws -> [Message] {
        let deadline = Date().addingTimeInterval(seconds)
        while inbox.messages.withLock({ $0.count }) < count && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        return messages
    }

    /// Whether `message` carries the HMAC-SHA256 of its timestamp and body under `secret`.
    static func isSigned(_ message: Message, secret: String) -> Bool {
        let key = SymmetricKey(data: Array(secret.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Array((message.timestamp + ".").utf8) + message.body, using: key)
        return message.signature == "sha256=" + mac.map { String(format: "%02x", $0) }.joined()
    }

    /// The recorded messages, shared with the route handler.
    private final class Inbox: Sendable {
        let messages = Mutex<[Message]>([])
        func append(_ message: Message) { messages.withLock { $0.append(message) } }
    }
}
