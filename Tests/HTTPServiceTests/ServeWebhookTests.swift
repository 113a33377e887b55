import Crypto
import Foundation
import Hummingbird
import Logging
import Pipeline
import Synchronization
import Testing
@testable import HTTPService

@Suite("Serve with webhooks")
struct ServeWebhookTests {
    /// What the backend's hook endpoint received: event name and body, in arrival order.
    final class Inbox: Sendable {
        let received = Mutex<[(event: String, body: [UInt8], timestamp: String, signature: String)]>([])
    }

    static let secret = "hook-secret"

    @Test func anUploadsEventsReachTheBackendSignedAndInOrder() async throws {
        let inbox = Inbox()
        let router = Router()
        router.post("/darkroom") { request, _ -> HTTPResponse.Status in
            let body = Array(try await request.body.collect(upTo: 1 << 20).readableBytesView)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            let header = { (name: String) in headers[name] ?? "" }
            inbox.received.withLock { $0.append((header("x-darkroom-event"), body, header("x-darkroom-timestamp"), header("x-darkroom-signature"))) }
            return .noContent
        }
        let (ports, announce) = AsyncStream<Int>.makeStream()
        let hook = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                               onServerRunning: { announce.yield($0.localAddress?.port ?? 0) },
                               logger: Logger(label: "hook") { _ in SwiftLogNoOpLogHandler() })
        let hookTask = Task { try await hook.runService() }
        defer { hookTask.cancel() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())

        try await TestService.with(configure: { configuration in
            configuration.webhooks.urls = ["http://127.0.0.1:\(port)/darkroom"]
            configuration.webhooks.secret = Self.secret
            configuration.webhooks.pollIntervalSeconds = 0.05
        }) { service in
            let accepted = try await service.upload(try Samples.gpsPhoto(), query: "author_id=alice")
            #expect(accepted.status == 202, "\(accepted.text)")
            let done = try await service.settled(try #require(try accepted.object()["id"] as? String))
            let pictureId = try #require(done["picture_id"] as? Int)
            let momentId = try #require(done["moment_id"] as? Int)

            // The automatic moment is created, then the picture joins it, then it gets its cover.
            let deadline = Date().addingTimeInterval(20)
            while inbox.received.withLock({ $0.count }) < 3 && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
            let received = inbox.received.withLock { $0 }
            #expect(received.map(\.event) == ["moment.created", "picture.added", "moment.cover_changed"])
            for message in received {
                let key = SymmetricKey(data: Array(Self.secret.utf8))
                let mac = HMAC<SHA256>.authenticationCode(for: Array((message.timestamp + ".").utf8) + message.body, using: key)
                #expect(message.signature == "sha256=" + mac.map { String(format: "%02x", $0) }.joined())
            }
            let added = try #require(received.first { $0.event == "picture.added" })
            let object = try #require(try JSONSerialization.jsonObject(with: Data(added.body)) as? [String: Any])
            let payload = try #require(object["payload"] as? [String: Any])
            #expect(payload["picture_id"] as? Int == pictureId && payload["moment_id"] as? Int == momentId)
            // Delivered to every endpoint: the outbox says so once the answers are recorded.
            var pending = try service.catalog().counts().outboxPending
            while pending > 0 && Date() < deadline {
                try await Task.sleep(for: .milliseconds(50))
                pending = try service.catalog().counts().outboxPending
            }
            #expect(pending == 0)
            #expect(inbox.received.withLock { $0.count } == 3, "each event once")
        }
    }

    @Test func webhookURLsWithoutASecretStopServeInOneLine() throws {
        var configuration = Pipeline.Configuration.defaults
        let root = NSTemporaryDirectory() + "darkroom-hooks-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        configuration.spoolRoot = root + "/spool"
        configuration.libraryRoot = root + "/library"
        configuration.catalogPath = root + "/catalog.sqlite"
        configuration.server.token = "t"
        configuration.webhooks.urls = ["http://127.0.0.1:9/hook"]
        #expect {
            _ = try APIServer(configuration: configuration, runWorkers: false, logger: Logger(label: "t"), environment: [:])
        } throws: { error in
            "\(error)".hasPrefix("webhooks: ") && "\(error)".contains("DARKROOM_WEBHOOK_SECRET") && !"\(error)".contains("\n")
        }
    }
}
