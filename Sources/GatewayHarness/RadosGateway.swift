import ChildProcesses
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real S3 server for a test or a benchmark: Ceph's RADOS Gateway on a one-node cluster (one
/// monitor, one OSD keeping its objects in memory, no manager) in a temporary directory
/// /tmp/dr-rgw-XXXXXX, every daemon on loopback ports only, with one S3 user.
///
/// Ceph's own authentication between its daemons is off; the gateway still checks the
/// signature of every S3 request (a wrong secret is answered 403 `SignatureDoesNotMatch`).
/// Requests are path-style (`http://127.0.0.1:PORT/bucket/key`): there is no DNS name for
/// virtual-host style. Objects live as long as the OSD runs: `stopGateway()` and
/// `startGateway()` stop and start only the gateway, and every object is still there after.
///
/// The daemons are this process's children, reaped by it. `stop()` (or the value going away)
/// kills them and removes the directory; a watchdog does the same if this process ends
/// without it (killed, or crashed).
///
/// Quirks of Ceph 16.2 that a test must not depend on: a PUT with `If-Match` and the quoted
/// ETag is answered 412 (the unquoted one works); CompleteMultipartUpload answers an empty
/// ETag (a HEAD then gives the right one).
public final class RadosGateway: @unchecked Sendable {  // safe: the mutable state is under `lock`
    /// Why a gateway could not be had, or an operation on it failed: the message says what
    /// failed, with the last lines of the daemon's log when one is to blame.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// The programs the cluster needs, all in /usr/bin: Debian's ceph-mon, ceph-osd and radosgw
    /// packages (with ceph-common and ceph-base, which they depend on), and curl, which signs
    /// the harness's own S3 requests.
    public static let programs = ["ceph", "ceph-authtool", "ceph-mon", "ceph-osd", "monmaptool", "radosgw", "radosgw-admin", "curl"]
    /// What to install when programs are missing.
    public static let installHint = "apt-get install --no-install-recommends ceph-mon ceph-osd radosgw curl (or `make deps`)"

    /// Those of `programs` that are not installed.
    public static func missingPrograms() -> [String] {
        programs.filter { !FileManager.default.isExecutableFile(atPath: "/usr/bin/\($0)") }
    }

    /// `http://127.0.0.1:PORT`, the gateway's S3 endpoint (path-style requests).
    public let endpoint: URL
    /// The gateway's port.
    public let port: Int
    /// The monitor's port.
    public let monitorPort: Int
    /// The S3 user's keys (user id `darkroom`), random for each cluster.
    public let accessKey: String
    public let secretKey: String
    /// The region requests are signed for. The gateway's default zonegroup accepts any region
    /// name in a signature; this is what clients default to.
    public let region = "us-east-1"
    /// The cluster's directory (configuration, logs, the monitor's store), removed by `stop()`.
    public let directory: URL
    /// How long `start()` took, in seconds, and its phases in order.
    public var startupSeconds: Double { startupPhases.reduce(0) { $0 + $1.seconds } }
    public private(set) var startupPhases: [(name: String, seconds: Double)] = []

    private let lock = NSLock()
    private var daemons: [Daemon: pid_t] = [:]
    /// Why a daemon ended by itself, with the end of its log: what later calls report.
    private var deaths: [Daemon: String] = [:]
    /// CPU seconds of the daemons reaped so far (a gateway stopped and started again).
    private var reapedCPUSeconds = 0.0
    private var stopped = false
    private var watchdog: Watchdog?

    /// The cluster's three daemons, by their Ceph names.
    enum Daemon: String, CaseIterable {
        case monitor = "mon.a"
        case osd = "osd.0"
        case gateway = "client.rgw"

        /// The daemon's log (Ceph's `log file`).
        var logName: String { "\(rawValue).log" }
        /// What the daemon wrote to its standard output and error.
        var outputName: String { "\(rawValue).out" }
        var program: String {
            switch self {
            case .monitor: "ceph-mon"
            case .osd: "ceph-osd"
            case .gateway: "radosgw"
            }
        }
    }

    /// Makes a cluster and starts it: a monitor, an OSD with `storeBytes` of memory for objects
    /// (1 GiB by default), the gateway and its S3 user. Returns once a signed request succeeds
    /// (a bucket was created and deleted: the gateway's pools exist), typically 2-5 s after
    /// the call. Throws `Unavailable` when Ceph is not installed or a daemon fails to start.
    public static func start(storeBytes: Int = 1 << 30) throws -> RadosGateway {
        try start(storeBytes: storeBytes, gatewayPort: nil, directoryMade: { _ in })
    }

    /// `start(storeBytes:)` with the gateway on `gatewayPort` (a free one when nil), telling
    /// `directoryMade` the directory as soon as it exists: for the tests of a failed start.
    static func start(storeBytes: Int, gatewayPort: Int?, directoryMade: (String) -> Void) throws -> RadosGateway {
        let missing = missingPrograms()
        guard missing.isEmpty else {
            throw Unavailable(description: "Ceph's RADOS Gateway cannot be started: \(missing.joined(separator: ", ")) missing from /usr/bin; install with \(installHint)")
        }
        // Short: Ceph's Unix sockets (admin sockets under `run dir`) must fit in 107 characters.
        var template = Array("/tmp/dr-rgw-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        guard made else {
            throw Unavailable(description: "cannot make a directory under /tmp for the gateway: \(String(cString: strerror(errno)))")
        }
        let directory = URL(fileURLWithPath: String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        directoryMade(directory.path)
        let gateway: RadosGateway
        do {
            gateway = RadosGateway(directory: directory, monitorPort: try ChildSpawning.freePort(), port: try gatewayPort ?? ChildSpawning.freePort(),
                                   accessKey: "DR" + randomString(18, from: "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"),
                                   secretKey: randomString(40, from: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"))
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw Unavailable(description: "\(error)")
        }
        do {
            try gateway.bootstrap(storeBytes: storeBytes)
        } catch {
            gateway.stop()
            throw error is Unavailable ? error : Unavailable(description: "\(error)")
        }
        return gateway
    }

    private init(directory: URL, monitorPort: Int, port: Int, accessKey: String, secretKey: String) {
        self.directory = directory
        self.monitorPort = monitorPort
        self.port = port
        self.endpoint = URL(string: "http://127.0.0.1:\(port)")!
        self.accessKey = accessKey
        self.secretKey = secretKey
    }

    deinit { stop() }

    /// The configuration file.
    var configuration: String { path("ceph.conf") }
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Every step of `start()`, timed.
    private func bootstrap(storeBytes: Int) throws {
        func phase(_ name: String, _ body: () throws -> Void) rethrows {
            let begin = Date()
            try body()
            startupPhases.append((name, Date().timeIntervalSince(begin)))
        }
        let fsid = UUID().uuidString.lowercased()
        try phase("configuration") {
            watchdog = try Watchdog(directory: directory.path, prefix: "/tmp/dr-rgw-", name: "darkroom-gateway-watchdog")
            for folder in ["mon", "osd", "rgw", "run", "requests"] {
                try FileManager.default.createDirectory(atPath: path(folder), withIntermediateDirectories: true)
            }
            try writeConfiguration(fsid: fsid, storeBytes: storeBytes)
        }
        try phase("monitor") {
            try setUp("/usr/bin/monmaptool", ["--create", "--add", "a", "127.0.0.1:\(monitorPort)", "--fsid", fsid, path("monmap")])
            try setUp("/usr/bin/ceph-authtool", ["--create-keyring", path("keyring"), "--gen-key", "-n", "mon.", "--cap", "mon", "allow *"])
            try setUp("/usr/bin/ceph-mon", ["-c", configuration, "--mkfs", "-i", "a", "--monmap", path("monmap"), "--keyring", path("keyring")])
            try launch(.monitor)
        }
        try phase("osd") {
            let osdUUID = UUID().uuidString.lowercased()
            // The CLI waits for the monitor to answer; given up on at once if the monitor dies.
            try setUp("/usr/bin/ceph", ["-c", configuration, "--connect-timeout", "60", "osd", "new", osdUUID, "0"], timeout: 90,
                      watching: .monitor)
            try setUp("/usr/bin/ceph-osd", ["-c", configuration, "--mkfs", "-i", "0", "--osd-uuid", osdUUID])
            try launch(.osd)
            // A gateway started before the OSD is up sends its first operations into the void
            // and resends them at its next tick, 5 s later: the OSD's log says when it is up
            // (at most 30 s, after which the gateway is started all the same).
            try waitForLine("state: booting -> active", in: .osd, within: 30)
        }
        try phase("gateway") {
            try launch(.gateway)
            try waitUntilAnswering(within: 120)
        }
        try phase("user") {
            try setUp("/usr/bin/radosgw-admin", ["-c", configuration, "user", "create", "--uid=darkroom", "--display-name=Darkroom tests",
                                                 "--access-key=\(accessKey)", "--secret-key=\(secretKey)"], timeout: 120, watching: .gateway)
        }
        try phase("first bucket") {
            // The gateway makes its data and index pools at the first bucket: a signed PUT
            // answers 500 or times out until they exist.
            let probe = "darkroom-probe"
            let deadline = Date().addingTimeInterval(120)
            var last = "no answer"
            while true {
                try requireRunning(Daemon.allCases)
                if let response = try? signedRequest("PUT", "/\(probe)", timeout: 20) {
                    if (200..<300).contains(response.status) { break }
                    last = "\(response.status) \(response.text.prefix(300))"
                    // Refused, not unready: waiting would not help.
                    if response.status == 403 {
                        throw Unavailable(description: "the gateway refused the harness's signed request: \(last)")
                    }
                }
                guard Date() < deadline else {
                    throw Unavailable(description: "the gateway did not create a bucket within 120 s (last answer: \(last)); "
                                      + "\(Daemon.gateway.logName): \(ChildSpawning.lastLines(of: path(Daemon.gateway.logName)))")
                }
                usleep(100_000)
            }
            let deleted = try signedRequest("DELETE", "/\(probe)")
            guard (200..<300).contains(deleted.status) else {
                throw Unavailable(description: "the gateway did not delete its probe bucket: \(deleted.status) \(deleted.text.prefix(300))")
            }
        }
    }

    private func writeConfiguration(fsid: String, storeBytes: Int) throws {
        let directory = self.directory.path
        let text = """
            # A one-node Ceph cluster for Darkroom's tests: loopback only, no authentication between
            # the daemons (the gateway still checks S3 signatures), one OSD in memory, no manager.
            [global]
            fsid = \(fsid)
            mon host = 127.0.0.1:\(monitorPort)
            mon initial members = a
            public network = 127.0.0.0/8
            ms bind ipv6 = false
            auth cluster required = none
            auth service required = none
            auth client required = none
            ms mon client mode = crc
            run dir = \(directory)/run
            log file = \(directory)/$name.log
            keyring = \(directory)/keyring
            osd pool default size = 1
            osd pool default min size = 1
            osd pool default pg num = 8
            osd pool default pgp num = 8
            osd pool default pg autoscale mode = off
            osd crush chooseleaf type = 0
            mon allow pool size one = true
            mon allow pool delete = true
            mon max pg per osd = 1000
            mon warn on pool no redundancy = false
            mon data avail crit = 1
            # Each pool the gateway makes at its first start is a change of the monitor's maps:
            # about 1 s apiece with the defaults, a few milliseconds with these.
            paxos propose interval = 0.01
            paxos min wait = 0.001

            [mon.a]
            mon data = \(directory)/mon

            [osd.0]
            osd data = \(directory)/osd
            osd objectstore = memstore
            memstore device bytes = \(storeBytes)

            [client.rgw]
            rgw frontends = beast endpoint=127.0.0.1:\(port)
            rgw data = \(directory)/rgw
            # radosgw has defaults of its own for these, and without them waits 300 s for the
            # monitor's configuration.
            auth client required = none
            ms mon client mode = crc
            # The tails of deleted objects (past 4 MiB) are freed after 30-60 s rather than 2 h:
            # the OSD keeps every byte in memory.
            rgw gc obj min wait = 30
            rgw gc processor period = 30
            # What each request cost, counted by the server itself (`usage()`), written at once.
            rgw enable usage log = true
            rgw usage log tick interval = 1
            rgw usage log flush threshold = 1

            """
        try text.write(toFile: configuration, atomically: true, encoding: .utf8)
    }

    /// Runs a set-up program to its end, its output in setup.log; a reason to give up early
    /// when `watching` (a daemon it needs) has died.
    private func setUp(_ program: String, _ arguments: [String], timeout: Double = 60, watching: Daemon? = nil) throws {
        do {
            try ChildSpawning.run([program] + arguments, output: path("setup.log"), timeout: timeout) {
                guard let watching else { return nil }
                return (try? requireRunning([watching])) == nil ? "\(watching.program) is not running" : nil
            }
        } catch {
            // A daemon's own complaint, when it died, says more than the program that gave up on it.
            if let watching { try requireRunning([watching]) }
            throw Unavailable(description: "\(error)")
        }
    }

    /// Starts a daemon in the foreground (`-f`), as this process's child.
    private func launch(_ daemon: Daemon) throws {
        let name = daemon == .gateway ? ["-n", "client.rgw"] : ["-i", String(daemon.rawValue.split(separator: ".")[1])]
        let pid: pid_t
        do {
            pid = try ChildSpawning.start(["/usr/bin/\(daemon.program)", "-f", "-c", configuration] + name, output: path(daemon.outputName))
        } catch {
            throw Unavailable(description: "\(error)")
        }
        lock.lock()
        daemons[daemon] = pid
        deaths[daemon] = nil
        lock.unlock()
    }

    /// Throws, with the end of its log, if one of `wanted` has ended (and reaps it).
    private func requireRunning(_ wanted: [Daemon]) throws {
        lock.lock()
        defer { lock.unlock() }
        for daemon in wanted {
            guard let pid = daemons[daemon] else {
                throw Unavailable(description: deaths[daemon] ?? "\(daemon.program) is not running")
            }
            if let ended = ChildSpawning.reapIfEnded(pid) {
                daemons[daemon] = nil
                reapedCPUSeconds += ended.cpuSeconds
                let death = "\(daemon.program) \(ended.summary); \(daemon.logName): "
                    + ChildSpawning.lastLines(of: path(daemon.logName))
                    + "; its output: " + ChildSpawning.lastLines(of: path(daemon.outputName), count: 4)
                deaths[daemon] = death
                throw Unavailable(description: death)
            }
        }
    }

    /// Waits until `daemon`'s log has a line containing `text`, at most `seconds` (then returns
    /// all the same); throws if a daemon dies meanwhile.
    private func waitForLine(_ text: String, in daemon: Daemon, within seconds: Double) throws {
        let deadline = Date().addingTimeInterval(seconds)
        let wanted = Data(text.utf8)
        while Date() < deadline {
            try requireRunning([.monitor, daemon])
            if let log = FileManager.default.contents(atPath: path(daemon.logName)), log.range(of: wanted) != nil { return }
            usleep(10_000)
        }
    }

    /// Waits until the gateway answers a plain HTTP request with any status, at most `seconds`.
    private func waitUntilAnswering(within seconds: Double) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while ChildSpawning.httpStatus(port: port) == nil {
            try requireRunning(Daemon.allCases)
            guard Date() < deadline else {
                throw Unavailable(description: "the gateway did not answer on port \(port) within \(Int(seconds)) s; "
                                  + "\(Daemon.gateway.logName): \(ChildSpawning.lastLines(of: path(Daemon.gateway.logName)))")
            }
            usleep(20_000)
        }
    }

    /// Whether the gateway daemon runs (it may still be starting).
    public var isGatewayRunning: Bool { (try? requireRunning([.gateway])) != nil }

    /// Stops only the gateway, for outage tests: SIGTERM (SIGKILL when `kill`, as a crash),
    /// SIGKILL if it has not ended within 15 s; returns once it has ended and its port refuses
    /// connections. The monitor and the OSD run on, with every object.
    public func stopGateway(kill: Bool = false) throws {
        try requireNotStopped()
        lock.lock()
        let pid = daemons[.gateway]
        lock.unlock()
        guard let pid else { throw Unavailable(description: "the gateway is not running") }
        let ended = ChildSpawning.end(pid, signal: kill ? SIGKILL : SIGTERM, grace: 15)
        lock.lock()
        daemons[.gateway] = nil
        reapedCPUSeconds += ended?.cpuSeconds ?? 0
        lock.unlock()
        guard ended != nil else { throw Unavailable(description: "radosgw (pid \(pid)) did not end even after SIGKILL") }
        let deadline = Date().addingTimeInterval(10)
        while !ChildSpawning.refusesConnections(port: port) {
            guard Date() < deadline else { throw Unavailable(description: "port \(port) still accepts connections 10 s after the gateway ended") }
            usleep(20_000)
        }
    }

    /// Starts the gateway again (after `stopGateway()`) on the same port; returns once it
    /// answers HTTP requests (typically within a second).
    public func startGateway() throws {
        try requireNotStopped()
        lock.lock()
        let running = daemons[.gateway] != nil
        lock.unlock()
        if running, isGatewayRunning { throw Unavailable(description: "the gateway is running already") }
        try launch(.gateway)
        try waitUntilAnswering(within: 60)
    }

    private func requireNotStopped() throws {
        lock.lock()
        defer { lock.unlock() }
        if stopped { throw Unavailable(description: "the gateway's cluster was stopped and removed: start a new one") }
    }

    /// Kills every daemon, removes the directory and ends the watchdog; returns when all are
    /// gone. Once; later calls do nothing. The objects are thrown away (they were in memory).
    public func stop() {
        lock.lock()
        let already = stopped
        stopped = true
        let running = daemons
        daemons = [:]
        lock.unlock()
        guard !already else { return }
        // SIGKILL: nothing is kept, so nothing needs a clean shutdown (SIGTERM takes 2-5 s each).
        for pid in running.values { kill(pid, SIGKILL) }
        for pid in running.values {
            if let ended = ChildSpawning.end(pid) {
                lock.lock()
                reapedCPUSeconds += ended.cpuSeconds
                lock.unlock()
            }
        }
        try? FileManager.default.removeItem(at: directory)
        // The watchdog finds nothing left; it would kill a stray `curl` of a request still
        // under way, and removes the directory again if that request had made a file.
        watchdog?.close()
    }

    /// Ends the watchdog's pipe as this process's death would, without stopping anything
    /// here: the watchdog then kills the daemons and removes the directory on its own. For the
    /// tests of the watchdog itself; `stop()` still reaps the killed daemons.
    func simulateOwnerDeath() {
        watchdog?.closePipeOnly()
    }

    /// CPU seconds the three daemons have used so far (user and system), those of gateways
    /// stopped before included; for benchmarks that count the server's CPU beside their own.
    public func serverCPUSeconds() -> Double {
        lock.lock()
        defer { lock.unlock() }
        return daemons.values.compactMap { ChildSpawning.cpuSeconds(of: $0) }.reduce(reapedCPUSeconds, +)
    }

    /// What the gateway counted of the requests it answered since it started, by S3 operation
    /// category (`put_obj`, `get_obj`, `list_bucket`, ...): its usage log, read with
    /// `radosgw-admin usage show`. The log is flushed every second: wait that long after the
    /// requests before reading.
    public func usage() throws -> [String: GatewayUsage] {
        let output = path("usage-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(atPath: output) }
        do {
            try ChildSpawning.run(["/usr/bin/radosgw-admin", "-c", configuration, "usage", "show", "--uid=darkroom"], output: output, timeout: 60)
        } catch {
            throw Unavailable(description: "radosgw-admin usage show: \(error)")
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: output))
        // The JSON document is the output's last part: radosgw-admin may write a warning first.
        guard let start = data.firstIndex(of: UInt8(ascii: "{")),
              let root = try JSONSerialization.jsonObject(with: data[start...]) as? [String: Any] else {
            throw Unavailable(description: "radosgw-admin usage show printed no JSON object")
        }
        var totals: [String: GatewayUsage] = [:]
        for user in root["summary"] as? [[String: Any]] ?? [] {
            for category in user["categories"] as? [[String: Any]] ?? [] {
                guard let name = category["category"] as? String else { continue }
                let number = { (key: String) in (category[key] as? NSNumber)?.intValue ?? 0 }
                totals[name, default: GatewayUsage()].add(ops: number("ops"), successful: number("successful_ops"),
                                                          sent: number("bytes_sent"), received: number("bytes_received"))
            }
        }
        return totals
    }

    /// Resident memory of the running daemons, in bytes.
    public func residentBytes() -> Int {
        lock.lock()
        defer { lock.unlock() }
        return daemons.values.compactMap { ChildSpawning.residentBytes(of: $0) }.reduce(0, +)
    }

    /// The process ids of the running daemons, by program name (ceph-mon, ceph-osd, radosgw).
    public func daemonProcesses() -> [String: Int32] {
        lock.lock()
        defer { lock.unlock() }
        return Dictionary(uniqueKeysWithValues: daemons.map { ($0.key.program, $0.value) })
    }

    static func randomString(_ count: Int, from alphabet: String) -> String {
        let characters = Array(alphabet)
        var generator = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in characters[Int.random(in: 0..<characters.count, using: &generator)] })
    }
}

/// What the gateway counted of one category of requests.
public struct GatewayUsage: Sendable, Equatable {
    public var ops = 0
    public var successfulOps = 0
    /// Bytes the gateway sent (answers' bodies) and received (requests' bodies).
    public var bytesSent = 0
    public var bytesReceived = 0

    public init() {}

    mutating func add(ops: Int, successful: Int, sent: Int, received: Int) {
        self.ops += ops
        successfulOps += successful
        bytesSent += sent
        bytesReceived += received
    }
}
