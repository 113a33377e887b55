import Catalog
import Foundation
import Testing

/// `darkroom run` with `webhooks.urls`: a drop folder's photos reach the backend as uploads do.
@Suite("darkroom run with webhooks")
struct RunWebhookTests {
    static let secret = "run-hook-secret"

    /// A spool holding the GPS sample, and a configuration that delivers to `url`. The
    /// receiver answers from inside this test process, which shares the machine with every other
    /// suite: it gets 30 s (a refused port still fails at once).
    private func workspace(url: String) throws -> (root: String, config: String) {
        let root = NSTemporaryDirectory() + "darkroom-run-hooks-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root + "/spool/incoming", withIntermediateDirectories: true)
        try Data(try Samples.gpsPhoto()).write(to: URL(fileURLWithPath: root + "/spool/incoming/walk.jpg"))
        let config = root + "/pipeline.json"
        let text = """
            {"spool": {"root": "\(root)/spool", "settle_seconds": 0}, "library": {"root": "\(root)/library"},
             "catalog": {"path": "\(root)/catalog.sqlite"}, "worker": {"concurrency": 1},
             "webhooks": {"urls": ["\(url)"], "secret": "\(Self.secret)", "poll_interval_seconds": 0.05, "timeout_seconds": 30}}
            """
        try Data(text.utf8).write(to: URL(fileURLWithPath: config))
        return (root, config)
    }

    /// Runs `darkroom run --once` to its end; returns its exit status and standard error. The
    /// wait does not hold a thread of the concurrency pool, which the receiver needs to answer.
    private func runOnce(config: String, root: String) async throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ServeCommandTests.binary)
        process.arguments = ["run", "--once", "--no-progress", "--config", config]
        let log = root + "/stderr"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: log)
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        try await withCheckedThrowingContinuation { (ended: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in ended.resume() }
            do {
                try process.run()
            } catch {
                ended.resume(throwing: error)
            }
        }
        return (process.terminationStatus, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    @Test func runOnceDeliversItsPhotosEventsSignedAndInOrderBeforeItExits() async throws {
        try await HookReceiver.with { hook in
            let (root, config) = try workspace(url: hook.url)
            defer { try? FileManager.default.removeItem(atPath: root) }
            let (status, log) = try await runOnce(config: config, root: root)
            #expect(status == 0, "\(log)")
            // Delivered before the process exited: nothing to wait for.
            let received = hook.distinctMessages
            #expect(received.map(\.event) == ["moment.created", "picture.added", "moment.cover_changed"], "\(log)")
            #expect(hook.messages.allSatisfy { !$0.delivery.isEmpty })
            #expect(received.allSatisfy { HookReceiver.isSigned($0, secret: Self.secret) })
            #expect(try Catalog(path: root + "/catalog.sqlite").counts().outboxPending == 0)
            #expect(log.contains("every event delivered"))
        }
    }

    @Test func aDeadEndpointLeavesTheEventsPendingAndTheRunSucceeds() async throws {
        // A port nothing listens on: every try is refused at once.
        let (root, config) = try workspace(url: "http://127.0.0.1:9/darkroom")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (status, log) = try await runOnce(config: config, root: root)
        #expect(status == 0, "\(log)")
        let catalog = try Catalog(path: root + "/catalog.sqlite")
        #expect(try catalog.counts().pictures == 1)
        #expect(try catalog.counts().outboxPending == 3)
        #expect(log.contains("pending events go out at the next run or with darkroom serve"), "\(log)")
    }

    @Test func webhookURLsWithoutASecretStopRunInOneLine() async throws {
        let (root, config) = try workspace(url: "http://127.0.0.1:9/darkroom")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let text = try String(contentsOfFile: config, encoding: .utf8).replacingOccurrences(of: "\"secret\": \"\(Self.secret)\", ", with: "")
        try Data(text.utf8).write(to: URL(fileURLWithPath: config))
        let (status, log) = try await runOnce(config: config, root: root)
        #expect(status != 0)
        #expect(log.contains("DARKROOM_WEBHOOK_SECRET"), "\(log)")
        #expect(log.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").count == 1, "one line: \(log)")
        #expect(FileManager.default.fileExists(atPath: root + "/spool/incoming/walk.jpg"), "nothing is taken from the spool")
    }
}
