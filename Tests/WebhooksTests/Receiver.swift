import Foundation
import Hummingbird
import Logging
import Synchronization

/// A webhook endpoint on loopback for the tests: records every request it gets and answers
/// with the status its policy chooses.
final class Receiver: Sendable {
    /// One request as the receiver saw it.
    struct Request: Sendable {
        var delivery: Int64
        var event: String
        var momentId: Int64?
        var attempt: Int
        var timestamp: String
        var signature: String
        var body: [UInt8]
        /// What the receiver answered.
        var status: Int
    }

    let port: Int
    var url: String { "http://127.0.0.1:\(port)/hook" }
    private let log: RequestLog
    private let server: Task<Void, any Error>

    /// The requests received, shared with the route handler.
    final class RequestLog: Sendable {
        let requests = Mutex<[Request]>([])
    }

    /// Starts a receiver on `port` (0: any free port). `policy` gets the request and the requests
    /// that came before it, and returns the status to answer.
    static func start(port: Int = 0, policy: @escaping @Sendable (Request, [Request]) -> Int = { _, _ in 200 }) async throws -> Receiver {
        let log = RequestLog()
        let router = Router()
        router.post("/hook") { request, _ -> HTTPResponse.Status in
            let buffer = try await request.body.collect(upTo: .max)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            let body = Array(buffer.readableBytesView)
            let json = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
            let payload = json?["payload"] as? [String: Any]
            var seen = Request(
                delivery: Int64(headers["x-darkroom-delivery"] ?? "") ?? -1, event: headers["x-darkroom-event"] ?? "",
                momentId: (payload?["moment_id"] as? NSNumber)?.int64Value, attempt: Int(headers["x-darkroom-attempt"] ?? "") ?? 0,
                timestamp: headers["x-darkroom-timestamp"] ?? "", signature: headers["x-darkroom-signature"] ?? "",
                body: body, status: 0)
            let status = log.requests.withLock { list in
                seen.status = policy(seen, list)
                list.append(seen)
                return seen.status
            }
            return HTTPResponse.Status(code: status)
        }
        let (ports, announce) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "test-receiver")
        // Stopping the server mid-test logs cancellation errors that are expected here.
        logger.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in
                announce.yield(channel.localAddress?.port ?? 0)
                announce.finish()
            },
            logger: logger)
        let server = Task { try await app.runService(gracefulShutdownSignals: []) }
        var iterator = ports.makeAsyncIterator()
        guard let bound = await iterator.next(), bound > 0 else {
            server.cancel()
            throw ReceiverError.notListening
        }
        return Receiver(port: bound, log: log, server: server)
    }

    private init(port: Int, log: RequestLog, server: Task<Void, any Error>) {
        self.port = port
        self.log = log
        self.server = server
    }

    /// Every request so far, in the order they arrived.
    var all: [Request] { log.requests.withLock { $0 } }

    /// The requests answered 2xx, in the order they arrived.
    var accepted: [Request] { all.filter { (200..<300).contains($0.status) } }

    /// Stops listening: the port is closed once this returns.
    func stop() async {
        server.cancel()
        _ = await server.result
    }

    enum ReceiverError: Error { case notListening }
}
