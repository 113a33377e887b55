import Catalog
import Dispatch
import Foundation
@testable import PostgresCatalog
import PostgresHarness
import PostgresStore
import Testing
@testable import Webhooks

/// What only a PostgreSQL catalog meets: writers on several machines whose outbox ids commit out
/// of the order they were drawn in. (The behaviours both stores share run against each in
/// `WebhookDispatcherTests`, whose settings and helpers these use.)
@Suite("Webhook delivery from PostgreSQL", .enabled(if: SharedCluster.available, Comment(rawValue: SharedCluster.skipReason)))
struct PostgresWebhookTests {
    let shared = WebhookDispatcherTests()

    @Test("an event committed after a later one of its moment is neither passed over nor sent after it")
    func eventCommittedLateIsSentInOrder() async throws {
        let hooks = try StoreKind.openPostgres()
        let receiver = try await Receiver.start()
        let writer = try PostgresPool(location: hooks.catalog.location, maximumConnections: 1)
        defer { writer.close() }
        // A writer draws an outbox id for moment 1 and holds its transaction open ...
        let held = HeldWrite()
        DispatchQueue.global().async {
            held.result = Result {
                try writer.withSession { session in
                    try session.transaction(.readCommitted) { session in
                        let id = try PostgresHooks.insert(.pictureAdded, moment: 1, session)
                        held.drawn.signal()
                        held.release.wait()
                        return id
                    }
                }
            }
            held.drawn.signal()
            held.done.signal()
        }
        await Self.wait(held.drawn)
        // ... while later events, of the same moment and of none, commit.
        let later = try hooks.addEvents([(.pictureAdded, 1), (.pictureAdded, nil)])
        let pass = try await shared.withDispatcher(shared.settings([receiver.url]), hooks.store) { dispatcher in
            let pass = Task { await dispatcher.deliverDue() }
            try await Task.sleep(for: .milliseconds(500))
            #expect(!receiver.all.contains { $0.delivery == later[0] }, "moment 1's later event waits for the earlier one")
            held.release.signal()
            await Self.wait(held.done)
            var total = await pass.value
            total += await dispatcher.deliverDue()
            return total
        }
        await receiver.stop()
        let early = try #require(try held.result?.get())
        #expect(early < later[0])
        #expect(pass == WebhookPass(delivered: 3, failed: 0))
        #expect(receiver.all.map(\.delivery).sorted() == [early] + later, "the late event is not lost")
        #expect(receiver.all.filter { $0.momentId == 1 }.map(\.delivery) == [early, later[0]])
        #expect(try hooks.undelivered().isEmpty)
    }

    @Test("the delivery tables come by a migration of their own, applied once however often the catalog is opened")
    func migrationByName() throws {
        let location = try SharedCluster.freshDatabase()
        let first = try PostgresCatalog(location: location)
        let second = try PostgresCatalog(location: location)
        defer { first.close(); second.close() }
        #expect(try second.appliedMigrations().filter { $0 == "catalog-webhook-deliveries" }.count == 1)
        #expect(try second.webhookStatistics(now: Date())
                == WebhookStatistics(delivered: 0, failedAttempts: 0, pending: 0, oldestPendingAge: nil))
    }

    /// Waits for a semaphore off the concurrency pool's threads.
    static func wait(_ semaphore: DispatchSemaphore) async {
        await WebhookDispatcherTests.offThePool { semaphore.wait() }
    }
}

/// A write held open on its own thread: the id it drew (or why it failed), and the signals
/// between it and the test.
final class HeldWrite: @unchecked Sendable {  // safe: `result` is written before `done` is signalled and read after
    var result: Result<Int64, any Error>?
    let drawn = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
}
