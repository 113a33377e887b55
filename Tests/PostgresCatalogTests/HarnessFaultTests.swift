import Foundation
import PostgresHarness
import PostgresNIO
import PostgresStore
import Testing

/// The harness's faults do what the fault tests rely on, checked with real connections: the
/// proxy forwards, goes silent without closing anything, resets, and fails over; the cluster
/// restarts, stops and starts, dies and recovers, ends sessions, and has a standby that follows
/// it and takes over. Each test has clusters of its own (it restarts them) and stops them.
@Suite("Faults inflicted on a PostgreSQL server", .serialized,
       .enabled(if: SharedCluster.available, Comment(rawValue: SharedCluster.skipReason)))
struct HarnessFaultTests {
    // MARK: Helpers

    static func pool(port: Int, database: String = "postgres") throws -> PostgresPool {
        try PostgresPool(location: try PostgresLocation("postgres://postgres@127.0.0.1:\(port)/\(database)"), maximumConnections: 1)
    }

    static func value(_ pool: PostgresPool, _ sql: String) throws -> Int64? {
        try pool.withSession { session in try session.value(PostgresQuery(unsafeSQL: sql), as: Int64.self) }
    }

    /// Whether a new connection to `port` answers a query.
    static func answers(port: Int, database: String = "postgres") -> Bool {
        guard let pool = try? pool(port: port, database: database) else { return false }
        defer { pool.close() }
        return (try? value(pool, "SELECT 1")) == 1
    }

    /// The port of the server a pool's connection reached (through the proxy or not).
    static func serverPort(_ pool: PostgresPool) throws -> Int? {
        try pool.withSession { session in try session.value("SELECT current_setting('port')", as: String.self) }.flatMap(Int.init)
    }

    /// Polls `condition` every 100 ms, at most `seconds`; whether it held.
    static func eventually(within seconds: Double, _ condition: () throws -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            if (try? condition()) == true { return true }
            usleep(100_000)
        } while Date() < deadline
        return false
    }

    /// Whether process `pid` is gone (or a zombie nobody has reaped).
    static func isGone(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
    }

    /// A table `notes` with one row (id 1) in a new database of `cluster`, written with
    /// synchronous commit so that it is in the WAL when the call returns; the database's name.
    static func notes(in cluster: TemporaryCluster) throws -> String {
        let location = try cluster.freshDatabase(prefix: "faults")
        let pool = try PostgresPool(location: location, maximumConnections: 1)
        defer { pool.close() }
        try pool.withSession { session in
            try session.execute("SET synchronous_commit = on")
            try session.execute("CREATE TABLE notes (id bigint PRIMARY KEY)")
            try session.execute("INSERT INTO notes (id) VALUES (1)")
        }
        return location.database
    }

    static func count(port: Int, database: String, id: Int64) throws -> Int64? {
        let pool = try pool(port: port, database: database)
        defer { pool.close() }
        return try value(pool, "SELECT COUNT(*) FROM notes WHERE id = \(id)")
    }

    static func insert(port: Int, database: String, id: Int64) throws {
        let pool = try pool(port: port, database: database)
        defer { pool.close() }
        try pool.withSession { session in try session.execute(PostgresQuery(unsafeSQL: "INSERT INTO notes (id) VALUES (\(id))")) }
    }

    // MARK: The proxy

    @Test("a blackholed proxy lets no query through, open connection or new; cut, they fail; restored, new ones work")
    func blackholeThenCutThenRestore() throws {
        let cluster = try TemporaryCluster.start()
        defer { cluster.stop() }
        let proxy = try FaultProxy(target: cluster.port)
        defer { proxy.close() }
        let open = try Self.pool(port: proxy.port)
        defer { open.close() }
        #expect(try Self.value(open, "SELECT 41 + 1") == 42)
        #expect(try Self.serverPort(open) == cluster.port)
        #expect(proxy.connectionCount == 1)

        proxy.blackhole()
        let onOpen = Background { try Self.value(open, "SELECT 1") }
        let fresh = try Self.pool(port: proxy.port)
        defer { fresh.close() }
        let onNew = Background { try Self.value(fresh, "SELECT 1") }
        #expect(onOpen.wait(2) == nil, "a query on an open connection came back through a blackholed proxy")
        #expect(onNew.wait(0.2) == nil, "a new connection was served through a blackholed proxy")
        #expect(proxy.connectionCount == 2, "the new connection is accepted and held, the open one kept")

        proxy.cutAll()
        #expect(Self.failed(onOpen.wait(10)), "the query on the cut connection fails, and does so at once")
        #expect(Self.failed(onNew.wait(10)), "the held new connection fails too")
        #expect(proxy.connectionCount == 0)

        proxy.restore()
        let after = try Self.pool(port: proxy.port)
        defer { after.close() }
        #expect(try Self.value(after, "SELECT 7") == 7)
        #expect(proxy.connectionCount == 1)
    }

    @Test("the proxy carries megabytes both ways intact; closed, it refuses connections and cuts the open ones")
    func largeMessagesThenClose() throws {
        let cluster = try TemporaryCluster.start()
        defer { cluster.stop() }
        let proxy = try FaultProxy(target: cluster.port)
        defer { proxy.close() }
        let pool = try Self.pool(port: proxy.port)
        defer { pool.close() }
        let big = String(repeating: "ab", count: 2_000_000)
        let (sentIntact, received) = try pool.withSession { session in
            (try session.value("SELECT \(big) = repeat('ab', 2000000)", as: Bool.self),
             try session.value("SELECT repeat('ab', 2000000)", as: String.self))
        }
        #expect(sentIntact == true, "4 MB sent through the proxy arrive as they were")
        #expect(received == big, "4 MB received through the proxy arrive as they were")

        // Nothing listens on a port just found free: a new connection fails at once, not by a deadline.
        proxy.retarget(try TemporaryCluster.freePort())
        let refused = Background { try Self.value(try Self.pool(port: proxy.port), "SELECT 1") }
        #expect(Self.failed(refused.wait(3)), "a connection the target refuses is closed")
        proxy.retarget(cluster.port)

        #expect(Self.threads(named: "proxy \(proxy.port)") == 1)
        proxy.close()
        #expect(Self.failed(Background { try Self.value(pool, "SELECT 1") }.wait(5)), "the open connection is cut")
        #expect(!Self.answers(port: proxy.port), "nothing listens once closed")
        #expect(proxy.connectionCount == 0)
        #expect(Self.eventually(within: 2) { Self.threads(named: "proxy \(proxy.port)") == 0 }, "the proxy's thread has ended")
        proxy.close()  // a second close does nothing

        var dropped: FaultProxy? = try FaultProxy(target: cluster.port)
        let droppedPort = dropped?.port ?? 0
        #expect(Self.answers(port: droppedPort))
        dropped = nil
        #expect(Self.eventually(within: 2) { Self.threads(named: "proxy \(droppedPort)") == 0 && !Self.answers(port: droppedPort) },
                "a proxy let go of stops as if closed")
    }

    /// This process's threads called `name` (/proc/self/task/*/comm).
    static func threads(named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) == name
        }.count
    }

    @Test("restored, a blackholed proxy finishes the query that waited on an open connection and serves the held one")
    func restoreResumesOpenConnections() throws {
        let cluster = try TemporaryCluster.start()
        defer { cluster.stop() }
        let proxy = try FaultProxy(target: cluster.port)
        defer { proxy.close() }
        let open = try Self.pool(port: proxy.port)
        defer { open.close() }
        #expect(try Self.value(open, "SELECT 1") == 1)

        proxy.blackhole()
        let waiting = Background { try Self.value(open, "SELECT 2") }
        let fresh = try Self.pool(port: proxy.port)
        defer { fresh.close() }
        let held = Background { try Self.value(fresh, "SELECT 3") }
        #expect(waiting.wait(1) == nil)
        #expect(held.wait(0.1) == nil)
        proxy.restore()
        #expect(Self.answer(waiting.wait(5)) == 2, "the waiting query completes on its same connection")
        #expect(Self.answer(held.wait(5)) == 3, "the connection accepted meanwhile is served")
        #expect(proxy.connectionCount == 2)
        proxy.cutAll()
    }

    @Test("retargeted, the proxy sends new connections to the standby and keeps open ones on the primary")
    func retargetFailsOverBehindTheSameAddress() throws {
        let primary = try TemporaryCluster.start()
        defer { primary.stop() }
        let database = try Self.notes(in: primary)
        let standby = try primary.startStandby()
        defer { standby.stop() }
        let proxy = try FaultProxy(target: primary.port)
        defer { proxy.close() }

        let before = try Self.pool(port: proxy.port)
        defer { before.close() }
        #expect(try Self.serverPort(before) == primary.port)
        proxy.retarget(standby.port)
        let after = try Self.pool(port: proxy.port)
        defer { after.close() }
        #expect(try Self.serverPort(after) == standby.port, "a new connection reaches the standby")
        #expect(try Self.value(after, "SELECT pg_is_in_recovery()::int") == 1)
        #expect(try Self.serverPort(before) == primary.port, "an open connection keeps its server")

        // The failover completes: the old primary goes, the standby takes over, old connections are cut.
        try primary.stopServer()
        try standby.promote()
        proxy.cutAll()
        try Self.insert(port: proxy.port, database: database, id: 2)
        #expect(try Self.count(port: standby.port, database: database, id: 2) == 1, "the write went to the promoted standby")
    }

    // MARK: The server

    @Test("a cluster whose owner dies without stopping it is killed and removed by its watchdog")
    func watchdogCleansUpAfterADeadOwner() throws {
        let cluster = try TemporaryCluster.start()
        defer { cluster.stop() }
        let server = try #require(cluster.serverPID, "the server runs")
        #expect(Self.isRunning(server))
        cluster.simulateOwnerDeath()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, Self.isRunning(server) || FileManager.default.fileExists(atPath: cluster.directory.path) {
            usleep(50_000)
        }
        #expect(!Self.isRunning(server), "the server \(server) was killed")
        #expect(!FileManager.default.fileExists(atPath: cluster.directory.path), "its directory was removed")
    }

    /// Whether process `pid` exists and is not a zombie waiting to be reaped.
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first != "Z"
    }

    @Test("after a fast restart the server answers again on its port, its data kept, and open sessions were ended")
    func restartFast() throws {
        let cluster = try TemporaryCluster.start()
        defer { cluster.stop() }
        let database = try Self.notes(in: cluster)
        let pool = try Self.pool(port: cluster.port, database: database)
        defer { pool.close() }
        try pool.withSession { session in
            _ = try session.value("SELECT 1", as: Int32.self)
            try cluster.restartFast()
            #expect(throws: (any Error).self, "a session open across the restart is ended") {
                try session.value("SELECT 1", as: Int32.self)
            }
        }
        #expect(Self.answers(port: cluster.port))
        #expect(try Self.count(port: cluster.port, database: database, id: 1) == 1)
    }

    @Test("a stopped server refuses connections and, started again, answers on the same port with its data")
    func stopThenStart() throws {
        let cluster = try TemporaryCluster.start()
        defer { cluster.stop() }
        let database = try Self.notes(in: cluster)
        try cluster.stopServer()
        #expect(!Self.answers(port: cluster.port))
        #expect(FileManager.default.fileExists(atPath: cluster.directory.appendingPathComponent("data/PG_VERSION").path), "the directory is kept")
        try cluster.startServer()
        #expect(Self.answers(port: cluster.port))
        #expect(try Self.count(port: cluster.port, database: database, id: 1) == 1)
    }

    @Test("a killed server leaves no process behind, refuses connections, and recovers from its WAL")
    func killThenRecover() throws {
        let cluster = try TemporaryCluster.start()
        defer { cluster.stop() }
        let database = try Self.notes(in: cluster)
        // A session open at the kill, so that a backend is among the processes killed.
        let pool = try Self.pool(port: cluster.port, database: database)
        defer { pool.close() }
        let backend = try Self.value(pool, "SELECT pg_backend_pid()")

        let killed = try cluster.killPostmaster()
        #expect(killed.count >= 5, "the postmaster and its background processes: \(killed)")
        #expect(backend.map { killed.contains(Int32($0)) } == true, "the open session's backend was killed too")
        #expect(killed.allSatisfy(Self.isGone), "every killed process is gone")
        #expect(!Self.answers(port: cluster.port))

        try cluster.recoverAfterKill()
        #expect(Self.answers(port: cluster.port))
        #expect(try Self.count(port: cluster.port, database: database, id: 1) == 1, "the committed row is replayed")
        let log = try String(contentsOf: cluster.directory.appendingPathComponent("server.log"), encoding: .utf8)
        #expect(log.contains("automatic recovery in progress"), "the server ran crash recovery")
    }

    @Test("terminateBackends ends the sessions of one database, then of all; their next statement fails")
    func terminateBackends() throws {
        let cluster = try TemporaryCluster.start()
        defer { cluster.stop() }
        let victim = try cluster.freshDatabase(prefix: "victim")
        let bystander = try cluster.freshDatabase(prefix: "bystander")
        let victims = try PostgresPool(location: victim, maximumConnections: 1)
        defer { victims.close() }
        let bystanders = try PostgresPool(location: bystander, maximumConnections: 1)
        defer { bystanders.close() }

        try bystanders.withSession { standing in
            let pid = try standing.value("SELECT pg_backend_pid()", as: Int32.self)
            try victims.withSession { session in
                _ = try session.value("SELECT 1", as: Int32.self)
                #expect(try cluster.terminateBackends(database: victim.database) == 1)
                #expect(throws: (any Error).self, "the ended session's next statement fails") {
                    try session.value("SELECT 1", as: Int32.self)
                }
            }
            #expect(try standing.value("SELECT pg_backend_pid()", as: Int32.self) == pid, "another database's session is untouched")
            #expect(try cluster.terminateBackends() >= 1)
            #expect(throws: (any Error).self, "without a database, every session ends") {
                try standing.value("SELECT 1", as: Int32.self)
            }
        }
        #expect(Self.answers(port: cluster.port, database: victim.database), "the server itself goes on")
    }

    @Test("a standby follows the primary's writes, is read-only, and once promoted takes writes")
    func standbyFollowsAndIsPromoted() throws {
        let primary = try TemporaryCluster.start()
        defer { primary.stop() }
        let database = try Self.notes(in: primary)
        let standby = try primary.startStandby()
        defer { standby.stop() }
        #expect(standby.port != primary.port)
        #expect(try standby.isInRecovery())
        #expect(try !primary.isInRecovery())
        #expect(try Self.count(port: standby.port, database: database, id: 1) == 1, "the base backup holds what was there")

        try Self.insert(port: primary.port, database: database, id: 2)
        #expect(Self.eventually(within: 10) { try Self.count(port: standby.port, database: database, id: 2) == 1 },
                "the primary's write reaches the standby within 10 s")
        #expect(throws: (any Error).self, "a standby refuses writes") {
            try Self.insert(port: standby.port, database: database, id: 3)
        }

        try primary.stopServer()
        try standby.promote()
        #expect(try !standby.isInRecovery())
        try Self.insert(port: standby.port, database: database, id: 3)
        #expect(try Self.count(port: standby.port, database: database, id: 3) == 1)

        standby.stop()
        #expect(!FileManager.default.fileExists(atPath: standby.directory.path), "stop() removes the standby's directory")
        #expect(!Self.answers(port: standby.port))
    }

    // MARK: Outcomes

    static func failed<T>(_ outcome: Result<T, any Error>?) -> Bool {
        if case .failure = outcome { return true }
        return false
    }

    static func answer(_ outcome: Result<Int64?, any Error>?) -> Int64? {
        if case .success(let value) = outcome { return value }
        return nil
    }
}

/// A call run on a thread of its own, so that a test can wait for it with a bound (a call
/// through a blackholed proxy does not return until the connection is cut).
final class Background<T: Sendable>: @unchecked Sendable {  // safe: `outcome` is written once before `done` is signalled, and read only after a wait on `done` succeeded
    private var outcome: Result<T, any Error>?
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () throws -> T) {
        Thread { [self] in
            outcome = Result { try body() }
            done.signal()
        }.start()
    }

    /// The call's outcome, or nil when it has not ended within `seconds`.
    func wait(_ seconds: Double) -> Result<T, any Error>? {
        guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        done.signal()  // for a later wait
        return outcome
    }
}
