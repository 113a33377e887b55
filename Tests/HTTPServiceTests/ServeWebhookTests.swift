import Crypto
import Foundation
import Hummingbird
import Logging
import Synchronization
import Testing
@testable import HTTPService
import Settings

@Suite("Serve with webhooks")
struct ServeWebhookTests {
    static let secret = "hook-secret"

    @Test(arguments: TestStore.available) func anUploadsEventsReachTheBackendSignedAndInOrder(store: TestStore) async throws {
        try await HookReceiver.with { hook in
            try await TestService.with(store: store, configure: { configuration in
                configuration.webhooks.urls = [hook.url]
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
                let received = try await hook.messages(atLeast: 3, within: 20)
                #expect(received.map(\.event) == ["moment.created", "picture.added", "moment.cover_changed"])
                #expect(received.allSatisfy { HookReceiver.isSigned($0, secret: Self.secret) })
                let added = try #require(received.first { $0.event == "picture.added" })
                let object = try #require(try JSONSerialization.jsonObject(with: Data(added.body)) as? [String: Any])
                let payload = try #require(object["payload"] as? [String: Any])
                #expect(payload["picture_id"] as? Int == pictureId && payload["moment_id"] as? Int == momentId)
                // The placeholder travels with the event, so an app paints the picture at once.
                let thumbHash = try #require(payload["thumb_hash"] as? String)
                #expect((Data(base64Encoded: thumbHash)?.count ?? 0) >= 5)
                // Delivered to every endpoint: the outbox says so once the answers are recorded.
                var pending = try service.catalog().counts(now: Date()).outboxPending
                while pending > 0 && Date() < deadline {
                    try await Task.sleep(for: .milliseconds(50))
                    pending = try service.catalog().counts(now: Date()).outboxPending
                }
                #expect(pending == 0)
                #expect(hook.messages.count == 3, "each event once")
            }
        }
    }

    @Test func webhookURLsWithoutASecretStopServeInOneLine() throws {
        var configuration = Settings.Configuration.defaults
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
