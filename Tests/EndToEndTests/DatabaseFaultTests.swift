import ChildProcesses
import Foundation
import PostgresHarness
import PostgresNIO
import PostgresStore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Two machines on one PostgreSQL catalog under a steady stream of uploads and drop-folder
/// photos, while the database goes away in each of the ways production databases do: a fast
/// restart, a stop of 20 s, a crash of the server (`kill -9` of the postmaster), every session
/// terminated, a network path that stops answering for 20 s without a reset, and a failover to a
/// promoted standby behind the same address. The machines reach the database through a TCP
/// proxy of the test's (`FaultProxy`), as they would through a load balancer or a virtual IP.
///
/// For each fault: readiness turns 503 within a second of an outage that lasts, every upload is
/// answered 202 or 503 within 2 s, processing resumes within 5 s of the database's return, and
/// SIGTERM ends a machine during an outage. At the end every accepted photo is a picture exactly
/// once, none failed, nothing is left in the spool, and `moments rebuild --check` is clean.
@Suite("The catalog's database goes away and comes back",
       .enabled(if: SharedCluster.available, Comment(rawValue: SharedCluster.skipReason)),
       .enabled(if: Machine.canNameHosts, "this machine cannot make UTS namespaces (unshare -u)"))
struct DatabaseFaultTests {
    /// What the test measured of one fault.
    struct FaultFigures: CustomStringConvertible {
        var name: String
        /// Seconds from the fault to the first 503 of readiness (nil: it never showed 503).
        var unready: Double?
        /// Seconds from the database's return to the next picture committed.
        var resumed: Double?
        /// Uploads sent from the fault until 5 s after the return, and the slowest answer.
        var uploads: Int
        var slowest: Double
        var answers: [Int: Int]

        var description: String {
            "\(name): readiness 503 after \(unready.map { String(format: "%.2f s", $0) } ?? "-"), "
                + "resumed \(resumed.map { String(format: "%.2f s", $0) } ?? "never") after the return, "
                + "\(uploads) uploads (\(answers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))), "
                + "slowest answer \(String(format: "%.2f s", slowest))"
        }
    }

    @Test func twoMachinesKeepEveryPhotoThroughRestartsStopsCrashesTerminationsABlackholeAndAFailover() throws {
        // Durable, as production is: with fsync or synchronous_commit off, a crash of the server
        // loses commits it had acknowledged, and no client can keep what the server forgot.
        let primary = try TemporaryCluster.start(durable: true)
        defer { primary.stop() }
        let direct = try primary.freshDatabase(prefix: "faults")
        let proxy = try FaultProxy(target: primary.port)
        defer { proxy.close() }
        var viaProxy = direct
        viaProxy.port = proxy.port
        let token = "faults-\(UUID().uuidString)"
        let environment = ["DARKROOM_CATALOG_URL": viaProxy.description, "DARKROOM_API_TOKEN": token]
        // The default lease: 30 s, renewed every 10 s.
        let space = try Workspace(leaseSeconds: 30, concurrency: 1, scanInterval: 0.2)
        let ports = [try TemporaryCluster.freePort(), try TemporaryCluster.freePort()]
        let machines = [
            Machine(name: "f1", space: space, environment: environment, commands: [["serve", "--port", "\(ports[0])"]]),
            Machine(name: "f2", space: space, environment: environment, commands: [["serve", "--port", "\(ports[1])"]]),
        ]
        for machine in machines { try machine.start() }
        defer { for machine in machines { machine.kill() } }
        for port in ports { #expect(Machine.waitForHTTP(port: port, token: token), "the server on port \(port) answers") }

        // A first scrape, so that the metrics have catalog figures to show when it is out.
        let metricsHead = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n"
        #expect(Machine.exchange(port: ports[0], head: metricsHead, timeout: 10)?.body.contains("darkroom_catalog_up 1") == true)
        let traffic = Traffic(space: space, ports: ports, token: token)
        let readiness = ReadinessWatch(ports: ports, token: token)
        traffic.start()
        readiness.start()
        defer {
            traffic.stop()
            readiness.stop()
        }
        var database = direct
        var figures: [FaultFigures] = []

        /// Runs one fault: waits for processing to be under way, injects it, and measures.
        func exercise(_ name: String, lasting: Bool, during: (() throws -> Void)? = nil,
                      _ inject: () throws -> Void, _ restore: () throws -> Void) throws {
            try Self.waitForProgress(database)
            let start = Date()
            try inject()
            try during?()
            try restore()
            let back = Date()
            let before = try Self.pictures(database)
            var resumed: Double?
            while Date().timeIntervalSince(back) < 30 {
                if try Self.pictures(database) > before {
                    resumed = Date().timeIntervalSince(back)
                    break
                }
                usleep(50_000)
            }
            Thread.sleep(forTimeInterval: 5)
            let sent = traffic.uploads(from: start, to: back.addingTimeInterval(5))
            let report = FaultFigures(name: name, unready: readiness.firstUnready(after: start).map { $0.timeIntervalSince(start) },
                                      resumed: resumed, uploads: sent.count, slowest: sent.map(\.seconds).max() ?? 0,
                                      answers: Dictionary(grouping: sent, by: { $0.status ?? 0 }).mapValues(\.count))
            print("database fault: \(report)")
            figures.append(report)
            if lasting {
                #expect(report.unready.map { $0 <= 1.0 } == true, "readiness is 503 within a second: \(report)")
            }
            #expect(resumed.map { $0 <= 5 } == true, "processing resumed within 5 s of the return: \(report)")
            #expect(sent.allSatisfy { [202, 503].contains($0.status ?? 0) && $0.seconds <= 2 }, """
                every upload answered 202 or 503 within 2 s: \(sent.filter { ![202, 503].contains($0.status ?? 0) || $0.seconds > 2 }.prefix(5))
                """)
        }

        /// SIGTERM to a machine while the database is out: it ends within its grace period.
        func stopDuringOutage(_ machine: Machine, port: Int) {
            traffic.disable(port)
            let started = Date()
            machine.stop()
            let seconds = Date().timeIntervalSince(started)
            print("database fault: SIGTERM during the outage ended machine \(machine.name) in \(String(format: "%.2f", seconds)) s")
            #expect(seconds < 30, "SIGTERM ended the machine within its grace period (\(seconds) s)")
        }
        func restart(_ machine: Machine, port: Int) throws {
            try machine.start()
            #expect(Machine.waitForHTTP(port: port, token: token), "machine \(machine.name) is back")
            traffic.enable(port)
        }

        try exercise("fast restart", lasting: false, { try primary.restartFast() }, {})
        try exercise("stopped for 20 s", lasting: true, during: {
            Thread.sleep(forTimeInterval: 3)
            stopDuringOutage(machines[1], port: ports[1])
            // The metrics answer at once, from what the process knows, the catalog marked down;
            // `darkroom status` says the database cannot be reached.
            let asked = Date()
            let metrics = Machine.exchange(port: ports[0], head: metricsHead, timeout: 5)
            #expect(metrics?.status == 200 && Date().timeIntervalSince(asked) < 2, "metrics answered at once during the outage")
            #expect(metrics?.body.contains("darkroom_catalog_up 0") == true && metrics?.body.contains("darkroom_catalog_figures_age_seconds") == true,
                    "\(metrics?.body.prefix(300) ?? "no answer")")
            let status = try space.run(["status"], environment: environment)
            #expect(status.status == 69 && status.stderr.contains("cannot connect to PostgreSQL"), "\(status.stderr)")
            Thread.sleep(forTimeInterval: max(0, 17 - Date().timeIntervalSince(asked)))
        }, { try primary.stopServer() }, { try primary.startServer() })
        try restart(machines[1], port: ports[1])
        try exercise("kill -9 of the postmaster", lasting: true, during: { Thread.sleep(forTimeInterval: 2) },
                     { try primary.killPostmaster() }, { try primary.recoverAfterKill() })
        try exercise("every session terminated", lasting: false, { _ = try primary.terminateBackends(database: direct.database) }, {})
        try exercise("a path that stops answering for 20 s", lasting: true, during: {
            Thread.sleep(forTimeInterval: 3)
            stopDuringOutage(machines[0], port: ports[0])
            Thread.sleep(forTimeInterval: 17)
        }, { proxy.blackhole() }, { proxy.restore() })
        try restart(machines[0], port: ports[0])
        let standby = try primary.startStandby()
        defer { standby.stop() }
        try exercise("failover to a promoted standby", lasting: true, during: { Thread.sleep(forTimeInterval: 1) }, {
            try primary.stopServer()
        }, {
            try standby.promote()
            proxy.retarget(standby.port)
            proxy.cutAll()
            database.port = standby.port
        })

        // Every accepted photo is a picture exactly once, none failed, nothing left behind.
        traffic.stop()
        let accepted = traffic.accepted
        let drained = Date().addingTimeInterval(240)
        var states: [String: Int] = [:]
        // A done photo whose removal an outage or a stop cut short stays under queued/ until a
        // reconciliation (every half lease, for files quiet for a lease) removes it: waited for too.
        while Date() < drained {
            states = try Self.queueStates(database)
            if try Self.pictures(database) >= accepted, states["queued", default: 0] == 0, states["running", default: 0] == 0,
               space.files(under: space.incoming).isEmpty, space.files(under: space.spool + "/queued").isEmpty { break }
            usleep(250_000)
        }
        readiness.stop()
        for machine in machines { machine.stop() }
        print("database fault: \(accepted) photos accepted, queue \(states)")
        #expect(try Self.pictures(database) == accepted, "every accepted photo is a picture")
        #expect(try Self.count("SELECT count(*) FROM jobs WHERE outcome = 'duplicate'", database) == 0, "no photo committed twice")
        let failures = try Self.failures(database)
        #expect(failures.isEmpty, "no photo failed for an outage: \(failures)")
        #expect(states["failed", default: 0] == 0 && states["queued", default: 0] == 0 && states["running", default: 0] == 0, "\(states)")
        #expect(space.files(under: space.incoming).isEmpty)
        #expect(space.files(under: space.spool + "/queued").isEmpty)
        #expect(space.files(under: space.spool + "/failed").isEmpty)
        var checkEnvironment = environment
        checkEnvironment["DARKROOM_CATALOG_URL"] = database.description
        let rebuild = try space.run(["moments", "rebuild", "--check"], environment: checkEnvironment)
        #expect(rebuild.status == 0, "moments rebuild --check: \(rebuild.stdout) \(rebuild.stderr)")
        #expect(figures.count == 6)
    }

    /// Waits until pictures are being committed (at most a minute).
    static func waitForProgress(_ location: PostgresLocation) throws {
        let before = try pictures(location)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if try pictures(location) > before { return }
            usleep(100_000)
        }
        Issue.record("no picture was committed for a minute before a fault")
    }

    /// The failed jobs: their photo, worker, tries and reason.
    static func failures(_ location: PostgresLocation) throws -> [String] {
        let pool = try PostgresPool(location: location, maximumConnections: 1)
        defer { pool.close() }
        return try pool.withSession { session in
            try session.rows("SELECT source_name, worker, attempts, coalesce(error, '') FROM jobs WHERE outcome = 'failed'").map { row in
                let (name, worker, attempts, error) = try row.decode((String, String, Int64, String).self)
                return "\(name) on \(worker) after \(attempts) tries: \(error)"
            }
        }
    }

    static func pictures(_ location: PostgresLocation) throws -> Int {
        try count("SELECT count(*) FROM pictures", location)
    }

    static func count(_ sql: String, _ location: PostgresLocation) throws -> Int {
        try SeveralMachinesTests.count(sql, location)
    }

    static func queueStates(_ location: PostgresLocation) throws -> [String: Int] {
        try SeveralMachinesTests.queueStates(location)
    }
}

/// The photos arriving during the test: an upload every half second, to each server in turn,
/// and a drop-folder photo every second, each with bytes of its own.
final class Traffic: @unchecked Sendable {
    // @unchecked: every mutable property is guarded by `lock`.
    struct Upload {
        var sent: Date
        var seconds: Double
        /// The HTTP status, nil when the server did not answer.
        var status: Int?
    }

    let space: Workspace
    let ports: [Int]
    let token: String
    private let lock = NSLock()
    private var sent: [Upload] = []
    private var dropped = 0
    private var disabled: Set<Int> = []
    private var index = 0
    private let sender = RepeatingThread()
    private static let base = LibraryTree.sample("Landscape_6.jpg")

    init(space: Workspace, ports: [Int], token: String) {
        self.space = space
        self.ports = ports
        self.token = token
    }

    func start() { sender.start(every: 0.5) { [self] in sendNext() } }

    /// Stops sending and waits for the last request to be answered.
    func stop() { sender.stop() }

    /// A server about to be stopped gets no more uploads until `enable`.
    func disable(_ port: Int) { lock.withLock { _ = disabled.insert(port) } }
    func enable(_ port: Int) { lock.withLock { _ = disabled.remove(port) } }

    /// Photos accepted: uploads answered 202, and every photo dropped.
    var accepted: Int { lock.withLock { sent.filter { $0.status == 202 }.count + dropped } }

    func uploads(from start: Date, to end: Date) -> [Upload] {
        lock.withLock { sent.filter { $0.sent >= start && $0.sent <= end } }
    }

    private func sendNext() {
        let tick = Date()
        index += 1
        let port = ports[index % ports.count]
        if !lock.withLock({ disabled.contains(port) }) {
            let photo = Self.base + Array("upload-\(index)".utf8)
            let head = "POST /v1/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                + "Content-Type: image/jpeg\r\nContent-Length: \(photo.count)\r\nConnection: close\r\n\r\n"
            let answer = Machine.exchange(port: port, head: head, body: photo, timeout: 10)
            let upload = Upload(sent: tick, seconds: Date().timeIntervalSince(tick), status: answer?.status)
            lock.withLock { sent.append(upload) }
        }
        if index % 2 == 0, (try? space.drop(bytes: Self.base + Array("drop-\(index)".utf8), as: "drop-\(index).jpg")) != nil {
            lock.withLock { dropped += 1 }
        }
    }
}

/// Asks every server's readiness twenty times a second and remembers when one was not ready
/// (the asking's own granularity counts against the one second readiness is held to).
final class ReadinessWatch: @unchecked Sendable {
    // @unchecked: every mutable property is guarded by `lock`.
    let ports: [Int]
    let token: String
    private let lock = NSLock()
    private var unready: [Date] = []
    private let asker = RepeatingThread()

    init(ports: [Int], token: String) {
        self.ports = ports
        self.token = token
    }

    func start() { asker.start(every: 0.05) { [self] in askEach() } }

    func stop() { asker.stop() }

    /// The first moment after `start` at which a server answered readiness with 503.
    func firstUnready(after start: Date) -> Date? {
        lock.withLock { unready.first { $0 >= start } }
    }

    private func askEach() {
        for port in ports {
            let asked = Date()
            let head = "GET /healthz/ready HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n"
            // A server that is stopped refuses the connection: that is no answer, not a 503.
            if Machine.exchange(port: port, head: head, timeout: 5)?.status == 503 { lock.withLock { unready.append(asked) } }
        }
    }
}

/// A thread that runs a step at most every `interval` seconds until stopped.
final class RepeatingThread: @unchecked Sendable {
    // @unchecked: `running` and `thread` are guarded by `lock`; the step runs on the thread alone.
    private let lock = NSLock()
    private var running = false
    private var thread: Thread?

    func start(every interval: Double, _ step: @escaping @Sendable () -> Void) {
        lock.withLock { running = true }
        let thread = Thread { [self] in
            while lock.withLock({ running }) {
                let tick = Date()
                step()
                let pause = interval - Date().timeIntervalSince(tick)
                if pause > 0 { usleep(UInt32(pause * 1_000_000)) }
            }
        }
        lock.withLock { self.thread = thread }
        thread.start()
    }

    /// Stops, and waits for the step in progress to end.
    func stop() {
        lock.withLock { running = false }
        while lock.withLock({ thread })?.isFinished == false { usleep(20_000) }
    }
}
