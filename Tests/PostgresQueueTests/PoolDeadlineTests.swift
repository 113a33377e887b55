import Foundation
import Logging
import PostgresHarness
import PostgresNIO
@testable import PostgresStore
import Testing

/// The blocking pool against a real server: nothing it does waits for ever. A connection the
/// server ended (a restart, `pg_terminate_backend`, a failover) fails the statement on it at once
/// or is replaced before it is handed out, and a statement that does not answer fails at its deadline.
@Suite("PostgreSQL pool deadlines", .enabled(if: SharedCluster.available, QueueCluster.skipReason))
struct PoolDeadlineTests {
    /// Ends the server sessions of `pids` from a connection of another pool.
    static func terminate(_ pids: [Int32], at location: PostgresLocation) throws {
        let admin = try PostgresPool(location: location, maximumConnections: 1)
        defer { admin.close() }
        for pid in pids {
            _ = try admin.withSession { session in try session.value("SELECT pg_terminate_backend(\(pid))", as: Bool.self) }
        }
        // The server closes the sessions right after it answers; give its messages a moment to arrive.
        Thread.sleep(forTimeInterval: 0.3)
    }

    /// The cause of the freeze the pool once had: the driver never answers a statement written
    /// to a connection that has already closed (the statement never reaches its handler, so its
    /// promise is never completed). `WatchedConnection` writes nothing to a connection known to be closed and
    /// answers at once; a close while a statement is awaited answers it too.
    @Test func aStatementOnAClosedConnectionIsAnsweredAtOnce() async throws {
        let location = try await QueueCluster.freshDatabase()
        let link = try WatchedConnection.connect(location, deadlines: .standard, settings: [], id: 1, logger: Logger(label: "test"))
        // A statement in flight when the connection closes.
        let slow = link.send("SELECT pg_sleep(5)", logger: Logger(label: "test"))
        let closing = Thread { Thread.sleep(forTimeInterval: 0.3); link.close() }
        closing.start()
        var started = Date()
        #expect(throws: PostgresStore.PostgresError.self) { try link.wait(slow, deadline: Date().addingTimeInterval(10)) }
        #expect(Date().timeIntervalSince(started) < 2, "answered by the close, not at the deadline")
        // A statement after the close.
        let answer = link.send("SELECT 1", logger: Logger(label: "test"))
        started = Date()
        #expect(throws: PostgresStore.PostgresError.self) { try link.wait(answer, deadline: Date().addingTimeInterval(10)) }
        #expect(Date().timeIntervalSince(started) < 1, "answered at once, not at the deadline")
    }

    @Test func aConnectionTheServerEndedWhileIdleIsReplacedBeforeItIsHandedOut() async throws {
        let location = try await QueueCluster.freshDatabase()
        let pool = try PostgresPool(location: location, maximumConnections: 2)
        defer { pool.close() }
        let first = try #require(try pool.withSession { try $0.value("SELECT pg_backend_pid()", as: Int32.self) })
        try Self.terminate([first], at: location)
        let started = Date()
        let second = try pool.withSession { try $0.value("SELECT pg_backend_pid()", as: Int32.self) }
        #expect(Date().timeIntervalSince(started) < 2, "the call neither hangs nor waits out a deadline")
        #expect(second != nil && second != first, "a new session answered")
    }

    @Test func aStatementOnAConnectionEndedMidSessionFailsAtOnceAsUnreachable() async throws {
        let location = try await QueueCluster.freshDatabase()
        let pool = try PostgresPool(location: location, maximumConnections: 1)
        defer { pool.close() }
        let started = Date()
        var thrown: PostgresStore.PostgresError?
        do {
            try pool.withSession { session in
                let pid = try #require(try session.value("SELECT pg_backend_pid()", as: Int32.self))
                try Self.terminate([pid], at: location)
                _ = try session.value("SELECT 1", as: Int32.self)
            }
        } catch {
            thrown = PostgresStore.PostgresError(error)
        }
        #expect(Date().timeIntervalSince(started) < 3)
        guard case .unreachable? = thrown else {
            Issue.record("expected the lost connection as unreachable, got \(String(describing: thrown))")
            return
        }
        #expect(thrown?.isRetryable == true)
        // The pool dropped it: the next call has a new connection.
        #expect(try pool.withSession { try $0.value("SELECT 2", as: Int32.self) } == 2)
    }

    @Test func aStatementThatDoesNotAnswerFailsAtItsDeadlineAndThePoolGoesOn() async throws {
        let location = try await QueueCluster.freshDatabase()
        let deadlines = PostgresDeadlines(connect: 5, statement: 0.5, transaction: 5)
        let pool = try PostgresPool(location: location, maximumConnections: 1, deadlines: deadlines)
        defer { pool.close() }
        let started = Date()
        let error = #expect(throws: PostgresStore.PostgresError.self) {
            try pool.withSession { session in try session.execute("SELECT pg_sleep(30)") }
        }
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 0.45 && waited < 2, "gave up at its deadline (\(waited) s)")
        // The message names how long it waited, not what was left of the deadline (nothing).
        #expect(error.map { "\($0)".contains("did not answer within its deadline (0.5 s)") } == true, "\(String(describing: error))")
        #expect(try pool.withSession { try $0.value("SELECT 3", as: Int32.self) } == 3)
    }

    @Test func aTransactionHasADeadlineOfItsOwn() async throws {
        let location = try await QueueCluster.freshDatabase()
        let deadlines = PostgresDeadlines(connect: 5, statement: 5, transaction: 1)
        let pool = try PostgresPool(location: location, maximumConnections: 1, deadlines: deadlines)
        defer { pool.close() }
        let started = Date()
        #expect(throws: PostgresStore.PostgresError.self) {
            try pool.transaction { session in
                for _ in 0..<10 { try session.execute("SELECT pg_sleep(0.3)") }
            }
        }
        #expect(Date().timeIntervalSince(started) < 2.5)
    }

    @Test func aServerThatDoesNotListenIsReportedAtOnceWithTheSystemsReason() throws {
        let port = try TemporaryCluster.freePort()
        let location = try PostgresLocation("postgres://darkroom@127.0.0.1:\(port)/nothing")
        let pool = try PostgresPool(location: location, maximumConnections: 1)
        defer { pool.close() }
        let started = Date()
        do {
            try pool.withSession { session in try session.execute("SELECT 1") }
            Issue.record("a closed port answered")
        } catch {
            guard case .unreachable(_, let reason) = PostgresStore.PostgresError(error) else {
                Issue.record("expected unreachable, got \(error)")
                return
            }
            #expect(reason.lowercased().contains("refused"), "the system's reason: \(reason)")
        }
        #expect(Date().timeIntervalSince(started) < 2)
    }
}
