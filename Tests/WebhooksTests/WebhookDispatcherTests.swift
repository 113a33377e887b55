import Catalog
import Crypto
import Dispatch
import Foundation
import Logging
import Synchronization
import Testing
@testable import Webhooks
import ServiceSettings

/// Delivery of outbox events to real HTTP receivers on loopback, from a real catalog: each
/// behaviour runs against SQLite and against PostgreSQL (a temporary cluster, where its server
/// programs are installed), through the same dispatcher.
@Suite("Webhook delivery")
struct WebhookDispatcherTests {
    let path = NSTemporaryDirectory() + "darkroom-webhooks-" + UUID().uuidString + "/catalog.sqlite"
    let secret = "test-secret"
    let logger = Logger(label: "webhooks-test")

    func settings(_ urls: [String]) -> WebhookSettings {
        var settings = WebhookSettings.defaults
        settings.urls = urls
        settings.secret = secret
        // Generous: the receiver runs in this test process, whose threads other suites may keep
        // busy for seconds; an answer that came too late would be sent again and counted twice.
        // (A dead endpoint here is a closed port, refused at once, so no test waits this long.)
        settings.timeoutSeconds = 30
        settings.retryBaseSeconds = 0.05
        settings.retryMaxSeconds = 0.2
        settings.pollIntervalSeconds = 0.02
        return settings
    }

    func withDispatcher<T>(_ settings: WebhookSettings, _ catalog: any WebhookStore,
                           _ body: (WebhookDispatcher) async throws -> T) async throws -> T {
        let dispatcher = try WebhookDispatcher(settings: settings, catalog: catalog, logger: logger, environment: [:])
        do {
            let result = try await body(dispatcher)
            await dispatcher.shutdown()
            return result
        } catch {
            await dispatcher.shutdown()
            throw error
        }
    }

    /// Polls until `condition` holds or `seconds` pass.
    func eventually(within seconds: Double = 60, _ condition: () throws -> Bool) async rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return try condition()
    }

    @Test(arguments: StoreKind.available)
    func eachEventArrivesOnceInOrderWithAValidSignature(_ kind: StoreKind) async throws {
        let hooks = try kind.open()
        let receiver = try await Receiver.start()
        let ids = try hooks.addEvents([(.momentCreated, 1), (.pictureAdded, 1), (.pictureAdded, nil), (.momentCreated, 2),
                                          (.momentCoverChanged, 1), (.pictureAdded, 2), (.momentUpdated, 1)])
        let pass = try await withDispatcher(settings([receiver.url]), hooks.store) { dispatcher in
            let first = await dispatcher.deliverDue()
            #expect(await dispatcher.deliverDue() == WebhookPass(), "nothing is sent twice")
            return first
        }
        await receiver.stop()

        #expect(pass == WebhookPass(delivered: ids.count, failed: 0))
        let got = receiver.all
        #expect(got.map(\.delivery).sorted() == ids, "each event once")
        for moment in [Int64(1), 2] {
            let sent = got.filter { $0.momentId == moment }.map(\.delivery)
            #expect(sent == sent.sorted(), "moment \(moment) in outbox order: \(sent)")
        }
        let key = SymmetricKey(data: Data(secret.utf8))
        for request in got {
            #expect(request.attempt == 1)
            let mac = HMAC<SHA256>.authenticationCode(for: Data("\(request.timestamp).".utf8) + Data(request.body), using: key)
            #expect(request.signature == "sha256=" + mac.map { String(format: "%02x", $0) }.joined())
            let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
            #expect((body["id"] as? NSNumber)?.int64Value == request.delivery)
            #expect(body["event"] as? String == request.event)
            #expect(body["created_at"] is String)
            #expect((body["payload"] as? [String: Any])?["picture_id"] as? Int == 7)
        }
        #expect(try hooks.undelivered().isEmpty, "delivered_at set on every outbox row")
        #expect(try hooks.statisticsAgree())
    }

    @Test(arguments: StoreKind.available)
    func aReceiverThatFailsThenRecoversGetsEverythingOnceInOrder(_ kind: StoreKind) async throws {
        let hooks = try kind.open()
        // The first three requests for moment 1 get a 500; moment 2 is always accepted.
        let receiver = try await Receiver.start { request, before in
            request.momentId == 1 && before.filter { $0.momentId == 1 }.count < 3 ? 500 : 200
        }
        let ids = try hooks.addEvents([(.momentCreated, 1), (.pictureAdded, 1), (.momentCreated, 2), (.pictureAdded, 1),
                                       (.pictureAdded, 2), (.momentUpdated, 2)])
        try await withDispatcher(settings([receiver.url]), hooks.store) { dispatcher in
            let running = Task { await dispatcher.run() }
            let done = await eventually { receiver.accepted.count == ids.count }
            // The receiver counts a request before its answer reaches the dispatcher: stop only
            // once the last answers are recorded, or a cancelled request would stay pending.
            let recorded = try await eventually { try hooks.undelivered().isEmpty }
            running.cancel()
            await running.value
            #expect(done, "got \(receiver.accepted.map(\.delivery)) of \(ids)")
            #expect(recorded, "every delivery recorded in the catalog")
        }
        await receiver.stop()

        let accepted = receiver.accepted
        #expect(accepted.map(\.delivery).sorted() == ids, "everything, once")
        let moment1 = accepted.filter { $0.momentId == 1 }.map(\.delivery)
        let moment2 = accepted.filter { $0.momentId == 2 }.map(\.delivery)
        #expect(moment1 == [ids[0], ids[1], ids[3]])
        #expect(moment2 == [ids[2], ids[4], ids[5]])
        // Only the first event of moment 1 was tried while it failed: the later ones waited.
        let failed = receiver.all.filter { $0.status == 500 }
        #expect(failed.count == 3 && failed.allSatisfy { $0.delivery == ids[0] })
        #expect(failed.map(\.attempt) == [1, 2, 3], "each try says which it is")
        // Moment 2 was not held up by moment 1's failures.
        let firstOfMoment1 = try #require(accepted.firstIndex { $0.momentId == 1 })
        #expect(accepted.prefix(firstOfMoment1).filter { $0.momentId == 2 }.count == 3)
        let row = try #require(try hooks.store.webhookDeliveries(endpoint: receiver.url).first { $0.outboxId == ids[0] })
        #expect(row.attempts == 4 && row.lastStatus == 200 && row.deliveredAt != nil && row.lastError == nil)
        #expect(try hooks.undelivered().isEmpty)
        #expect(try hooks.statisticsAgree())
    }

    @Test(arguments: StoreKind.available)
    func aDeadEndpointDoesNotHoldUpALiveOne(_ kind: StoreKind) async throws {
        let hooks = try kind.open()
        let live = try await Receiver.start()
        let gone = try await Receiver.start()
        let deadPort = gone.port
        await gone.stop()
        let dead = "http://127.0.0.1:\(deadPort)/hook"
        let ids = try hooks.addEvents([(.momentCreated, 1), (.pictureAdded, 1), (.pictureAdded, nil), (.momentCreated, 2)])
        let settings = settings([live.url, dead])

        try await withDispatcher(settings, hooks.store) { dispatcher in
            let pass = await dispatcher.deliverDue()
            // Heads only reach the dead endpoint: the first event of each moment and the one without.
            #expect(pass == WebhookPass(delivered: 4, failed: 3))
            try await Task.sleep(for: .seconds(settings.retryBaseSeconds * 2))
            _ = await dispatcher.deliverDue()
        }
        #expect(live.all.map(\.delivery).sorted() == ids)
        let deadRows = try hooks.store.webhookDeliveries(endpoint: dead)
        #expect(deadRows.map(\.outboxId) == ids)
        #expect(deadRows.allSatisfy { $0.deliveredAt == nil })
        #expect(deadRows.filter { $0.attempts > 0 }.map(\.outboxId) == [ids[0], ids[2], ids[3]])
        #expect(deadRows.filter { $0.attempts > 0 }.allSatisfy { $0.attempts == 2 && $0.lastError != nil && $0.lastStatus == nil })
        #expect(deadRows.filter { $0.attempts == 0 }.allSatisfy { $0.nextAttemptAt == nil }, "moment 1's second event waits")
        #expect(try hooks.undelivered() == ids, "not delivered until both endpoints have it")
        let stats = try WebhookDispatcher.statistics(catalog: hooks.store)
        #expect(stats.delivered == 4 && stats.pending == 4 && stats.failedAttempts == 6)
        #expect((stats.oldestPendingAge ?? -1) >= 0)

        // The endpoint comes back on the same port: it gets everything, and the outbox is done.
        let back = try await Receiver.start(port: deadPort)
        try await Task.sleep(for: .seconds(settings.retryMaxSeconds))
        try await withDispatcher(settings, hooks.store) { dispatcher in
            _ = await dispatcher.deliverDue()
        }
        await back.stop()
        await live.stop()
        #expect(back.all.map(\.delivery).sorted() == ids)
        #expect(back.all.filter { $0.momentId == 1 }.map(\.delivery) == [ids[0], ids[1]])
        #expect(live.all.count == ids.count, "the live endpoint got nothing twice")
        #expect(try hooks.undelivered().isEmpty)
        #expect(try hooks.statisticsAgree())
        let after = try WebhookDispatcher.statistics(catalog: hooks.store)
        #expect(after.pending == 0 && after.oldestPendingAge == nil)

        // Events removed from the outbox take their deliveries, and the totals, with them.
        try hooks.delete(events: [ids[0], ids[1]])
        #expect(try hooks.statisticsAgree())
        #expect(try WebhookDispatcher.statistics(catalog: hooks.store).delivered == 4)
    }

    @Test(arguments: StoreKind.available)
    func aRestartDoesNotResendDeliveredEvents(_ kind: StoreKind) async throws {
        let receiver = try await Receiver.start()
        let hooks = try kind.open()
        let first = try hooks.addEvents([(.momentCreated, 1), (.pictureAdded, 1), (.pictureAdded, nil)])
        try await withDispatcher(settings([receiver.url]), try hooks.another().store) { dispatcher in
            _ = await dispatcher.deliverDue()
        }
        let reopened = try hooks.another()
        let later = try reopened.addEvents([(.pictureAdded, 1)])
        let pass = try await withDispatcher(settings([receiver.url]), reopened.store) { dispatcher in
            await dispatcher.deliverDue()
        }
        await receiver.stop()
        #expect(pass == WebhookPass(delivered: 1, failed: 0))
        #expect(receiver.all.map(\.delivery).sorted() == first + later)
    }

    @Test(arguments: StoreKind.available)
    func twoDispatchersOnOneCatalogSendEachEventOnce(_ kind: StoreKind) async throws {
        let receiver = try await Receiver.start()
        let hooks = try kind.open()
        let ids = try hooks.addEvents((0..<24).map { i in (OutboxEvent.Name.pictureAdded, i % 3 == 0 ? nil : Int64(i % 4)) })
        let settings = settings([receiver.url])
        let one = try hooks.another()
        let two = try hooks.another()
        try await withDispatcher(settings, one.store) { first in
            try await withDispatcher(settings, two.store) { second in
                async let a = first.deliverDue()
                async let b = second.deliverDue()
                let total = await a.delivered + b.delivered
                #expect(total == ids.count)
            }
        }
        await receiver.stop()
        #expect(receiver.all.map(\.delivery).sorted() == ids)
        #expect(try one.statisticsAgree())
    }

    @Test("dispatchers on three handles of one catalog, with events written meanwhile by four writers, send each event once, in order",
          arguments: StoreKind.available)
    func severalDispatchersWithWritersSendEachEventOnce(_ kind: StoreKind) async throws {
        let hooks = try kind.open()
        let receiver = try await Receiver.start()
        let settings = settings([receiver.url])
        let dispatchers = try [hooks, try hooks.another(), try hooks.another()].map { handle in
            try WebhookDispatcher(settings: settings, catalog: handle.store, logger: logger, environment: [:])
        }
        let running = dispatchers.map { dispatcher in Task { await dispatcher.run() } }
        // Four writers at once, each on its own handle, over five moments and none: their
        // commits interleave with the dispatchers' take-ons (and, on PostgreSQL, commit out of
        // the order their ids were drawn in).
        let writers = try (0..<4).map { _ in try hooks.another() }
        let ids = await Self.offThePool {
            let written = Mutex<[Int64]>([])
            DispatchQueue.concurrentPerform(iterations: writers.count) { w in
                for batch in 0..<6 {
                    let events = (0..<4).map { i -> (OutboxEvent.Name, Int64?) in
                        let n = w * 100 + batch * 4 + i
                        return (.pictureAdded, n % 6 == 0 ? nil : Int64(n % 5 + 1))
                    }
                    if let ids = try? writers[w].addEvents(events) { written.withLock { $0 += ids } }
                    usleep(5_000)
                }
            }
            return written.withLock { $0.sorted() }
        }
        #expect(ids.count == 96, "every writer's events written")
        let done = try await eventually { try hooks.undelivered().isEmpty }
        for task in running { task.cancel() }
        for task in running { await task.value }
        for dispatcher in dispatchers { await dispatcher.shutdown() }
        await receiver.stop()

        let left = try hooks.undelivered()
        #expect(done && left.isEmpty, "every event delivered: \(left.count) left")
        let got = receiver.all
        #expect(got.count == ids.count, "no event sent twice, by one dispatcher or two")
        #expect(got.map(\.delivery).sorted() == ids)
        for moment in Int64(1)...5 {
            let order = got.filter { $0.momentId == moment }.map(\.delivery)
            #expect(order == order.sorted(), "moment \(moment) in outbox order: \(order)")
        }
        #expect(try hooks.statisticsAgree())
        #expect(try WebhookDispatcher.statistics(catalog: hooks.store).delivered == ids.count)
    }

    /// Runs blocking work off the concurrency pool's threads, which the receivers and
    /// dispatchers need meanwhile.
    static func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (done: CheckedContinuation<T, Never>) in
            DispatchQueue.global().async { done.resume(returning: work()) }
        }
    }

    @Test func urlsWithoutASecretAreRefusedInOneLine() throws {
        var settings = settings(["http://127.0.0.1:9/hook"])
        settings.secret = nil
        let catalog = try Catalog(path: path)
        #expect(throws: WebhookError.missingSecret(endpoints: 1)) {
            _ = try WebhookDispatcher(settings: settings, catalog: catalog, logger: logger, environment: [:])
        }
        let text = WebhookError.missingSecret(endpoints: 1).description
        #expect(!text.contains("\n") && text.contains("webhooks.secret") && text.contains("DARKROOM_WEBHOOK_SECRET"))
    }

    @Test func theSecretMayComeFromTheEnvironment() async throws {
        var settings = settings(["http://127.0.0.1:9/hook"])
        settings.secret = nil
        let dispatcher = try WebhookDispatcher(settings: settings, catalog: try Catalog(path: path), logger: logger,
                                               environment: ["DARKROOM_WEBHOOK_SECRET": "from-env"])
        #expect(dispatcher.secret == Array("from-env".utf8))
        await dispatcher.shutdown()
    }

    @Test func retriesBackOffExponentiallyUpToTheMaximum() async throws {
        var settings = settings([])
        settings.retryBaseSeconds = 1
        settings.retryMaxSeconds = 300
        try await withDispatcher(settings, try Catalog(path: path)) { dispatcher in
            #expect((1...10).map { dispatcher.retryDelay(afterAttempt: $0) } == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300])
            #expect(dispatcher.retryDelay(afterAttempt: 5000) == 300)
        }
    }

    @Test func logsShowNoCredentialsOfAnEndpoint() {
        let endpoint = WebhookEndpoint(url: "https://user:pass@backend.example.com/hooks/darkroom?token=abc")
        #expect(endpoint.label == "https://backend.example.com/hooks/darkroom")
    }
}
