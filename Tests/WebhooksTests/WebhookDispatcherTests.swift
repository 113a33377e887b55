import Catalog
import Crypto
import Foundation
import GRDB
import Logging
import Testing
@testable import Webhooks
import ServiceSettings

/// Delivery of outbox events to real HTTP receivers on loopback, from a real SQLite catalog.
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

    /// Writes outbox events through the catalog's own record type, as the moment engine would.
    @discardableResult
    func addEvents(_ catalog: Catalog, _ events: [(OutboxEvent.Name, Int64?)]) throws -> [Int64] {
        try catalog.write { db in
            try events.map { name, moment in
                let payload = moment.map { #"{"moment_id":\#($0),"picture_id":7}"# } ?? #"{"moment_id":null,"picture_id":7}"#
                var event = OutboxEvent(event: name, momentId: moment, pictureId: 7, payload: payload, createdAt: Date().timeIntervalSince1970)
                try event.insert(db)
                guard let id = event.id else { throw CatalogError.other("no id") }
                return id
            }
        }
    }

    func withDispatcher<T>(_ settings: WebhookSettings, _ catalog: Catalog,
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

    func undelivered(_ catalog: Catalog) throws -> [Int64] {
        try catalog.read { db in try OutboxEvent.filter(Column("delivered_at") == nil).order(Column("id")).fetchAll(db).compactMap(\.id) }
    }

    /// The statistics counted from the deliveries table itself, to check the running totals.
    func recount(_ catalog: Catalog) throws -> (delivered: Int, failedAttempts: Int, pending: Int) {
        try catalog.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT COUNT(delivered_at) AS d, COALESCE(SUM(attempts), 0) AS a, COUNT(*) AS n FROM webhook_deliveries")
            let delivered: Int = row?["d"] ?? 0
            let attempts: Int = row?["a"] ?? 0
            let total: Int = row?["n"] ?? 0
            return (delivered, attempts - delivered, total - delivered)
        }
    }

    /// Whether the statistics `/metrics` reads agree with a count of the table.
    func statisticsAgree(_ catalog: Catalog) throws -> Bool {
        let stats = try WebhookDispatcher.statistics(catalog: catalog)
        let counted = try recount(catalog)
        return (stats.delivered, stats.failedAttempts, stats.pending) == counted
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

    @Test func eachEventArrivesOnceInOrderWithAValidSignature() async throws {
        let catalog = try Catalog(path: path)
        let receiver = try await Receiver.start()
        let ids = try addEvents(catalog, [(.momentCreated, 1), (.pictureAdded, 1), (.pictureAdded, nil), (.momentCreated, 2),
                                          (.momentCoverChanged, 1), (.pictureAdded, 2), (.momentUpdated, 1)])
        let pass = try await withDispatcher(settings([receiver.url]), catalog) { dispatcher in
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
        #expect(try undelivered(catalog).isEmpty, "delivered_at set on every outbox row")
    }

    @Test func aReceiverThatFailsThenRecoversGetsEverythingOnceInOrder() async throws {
        let catalog = try Catalog(path: path)
        // The first three requests for moment 1 get a 500; moment 2 is always accepted.
        let receiver = try await Receiver.start { request, before in
            request.momentId == 1 && before.filter { $0.momentId == 1 }.count < 3 ? 500 : 200
        }
        let ids = try addEvents(catalog, [(.momentCreated, 1), (.pictureAdded, 1), (.momentCreated, 2), (.pictureAdded, 1),
                                          (.pictureAdded, 2), (.momentUpdated, 2)])
        try await withDispatcher(settings([receiver.url]), catalog) { dispatcher in
            let running = Task { await dispatcher.run() }
            let done = await eventually { receiver.accepted.count == ids.count }
            // The receiver counts a request before its answer reaches the dispatcher: stop only
            // once the last answers are recorded, or a cancelled request would stay pending.
            let recorded = try await eventually { try undelivered(catalog).isEmpty }
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
        // Moment 2 was not held up by moment 1's failures.
        let firstOfMoment1 = try #require(accepted.firstIndex { $0.momentId == 1 })
        #expect(accepted.prefix(firstOfMoment1).filter { $0.momentId == 2 }.count == 3)
        let row = try #require(try catalog.webhookDeliveries(endpoint: receiver.url).first { $0.outboxId == ids[0] })
        #expect(row.attempts == 4 && row.lastStatus == 200 && row.deliveredAt != nil && row.lastError == nil)
        #expect(try undelivered(catalog).isEmpty)
    }

    @Test func aDeadEndpointDoesNotHoldUpALiveOne() async throws {
        let catalog = try Catalog(path: path)
        let live = try await Receiver.start()
        let gone = try await Receiver.start()
        let deadPort = gone.port
        await gone.stop()
        let dead = "http://127.0.0.1:\(deadPort)/hook"
        let ids = try addEvents(catalog, [(.momentCreated, 1), (.pictureAdded, 1), (.pictureAdded, nil), (.momentCreated, 2)])
        let settings = settings([live.url, dead])

        try await withDispatcher(settings, catalog) { dispatcher in
            let pass = await dispatcher.deliverDue()
            // Heads only reach the dead endpoint: the first event of each moment and the one without.
            #expect(pass == WebhookPass(delivered: 4, failed: 3))
            try await Task.sleep(for: .seconds(settings.retryBaseSeconds * 2))
            _ = await dispatcher.deliverDue()
        }
        #expect(live.all.map(\.delivery).sorted() == ids)
        let deadRows = try catalog.webhookDeliveries(endpoint: dead)
        #expect(deadRows.map(\.outboxId) == ids)
        #expect(deadRows.allSatisfy { $0.deliveredAt == nil })
        #expect(deadRows.filter { $0.attempts > 0 }.map(\.outboxId) == [ids[0], ids[2], ids[3]])
        #expect(deadRows.filter { $0.attempts > 0 }.allSatisfy { $0.attempts == 2 && $0.lastError != nil && $0.lastStatus == nil })
        #expect(try undelivered(catalog) == ids, "not delivered until both endpoints have it")
        let stats = try WebhookDispatcher.statistics(catalog: catalog)
        #expect(stats.delivered == 4 && stats.pending == 4 && stats.failedAttempts == 6)
        #expect((stats.oldestPendingAge ?? -1) >= 0)

        // The endpoint comes back on the same port: it gets everything, and the outbox is done.
        let back = try await Receiver.start(port: deadPort)
        try await Task.sleep(for: .seconds(settings.retryMaxSeconds))
        try await withDispatcher(settings, catalog) { dispatcher in
            _ = await dispatcher.deliverDue()
        }
        await back.stop()
        await live.stop()
        #expect(back.all.map(\.delivery).sorted() == ids)
        #expect(back.all.filter { $0.momentId == 1 }.map(\.delivery) == [ids[0], ids[1]])
        #expect(live.all.count == ids.count, "the live endpoint got nothing twice")
        #expect(try undelivered(catalog).isEmpty)
        #expect(try statisticsAgree(catalog))
        #expect(try WebhookDispatcher.statistics(catalog: catalog).pending == 0)

        // Events removed from the outbox take their deliveries, and the totals, with them.
        try catalog.write { db in try db.execute(sql: "DELETE FROM outbox WHERE id IN (?, ?)", arguments: [ids[0], ids[1]]) }
        #expect(try statisticsAgree(catalog))
        #expect(try WebhookDispatcher.statistics(catalog: catalog).delivered == 4)
    }

    @Test func aRestartDoesNotResendDeliveredEvents() async throws {
        let receiver = try await Receiver.start()
        let first = try addEvents(try Catalog(path: path), [(.momentCreated, 1), (.pictureAdded, 1), (.pictureAdded, nil)])
        try await withDispatcher(settings([receiver.url]), try Catalog(path: path)) { dispatcher in
            _ = await dispatcher.deliverDue()
        }
        let reopened = try Catalog(path: path)
        let later = try addEvents(reopened, [(.pictureAdded, 1)])
        let pass = try await withDispatcher(settings([receiver.url]), reopened) { dispatcher in
            await dispatcher.deliverDue()
        }
        await receiver.stop()
        #expect(pass == WebhookPass(delivered: 1, failed: 0))
        #expect(receiver.all.map(\.delivery).sorted() == first + later)
    }

    @Test func twoDispatchersOnOneCatalogSendEachEventOnce() async throws {
        let receiver = try await Receiver.start()
        let ids = try addEvents(try Catalog(path: path), (0..<24).map { i in (OutboxEvent.Name.pictureAdded, i % 3 == 0 ? nil : Int64(i % 4)) })
        let settings = settings([receiver.url])
        let one = try Catalog(path: path)
        let two = try Catalog(path: path)
        try await withDispatcher(settings, one) { first in
            try await withDispatcher(settings, two) { second in
                async let a = first.deliverDue()
                async let b = second.deliverDue()
                let total = await a.delivered + b.delivered
                #expect(total == ids.count)
            }
        }
        await receiver.stop()
        #expect(receiver.all.map(\.delivery).sorted() == ids)
        #expect(try statisticsAgree(one))
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
