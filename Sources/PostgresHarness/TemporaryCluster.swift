import ChildProcesses
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL cluster of its own for a test or a benchmark: `initdb` in a temporary
/// directory, the server on a free loopback port, stopped and removed by `stop()` (or when
/// the value goes away; or by its `Watchdog` when this process dies without stopping it). When this process is root, the cluster's programs run as the
/// `postgres` user, since initdb refuses root. Local connections are trusted: any user name
/// given to `initdb` (`postgres`) and any password connect.
public final class TemporaryCluster: @unchecked Sendable {  // safe: `stopped` is written under `lock`
    /// Why a cluster could not be had: the message says what is missing and what to do.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// The superuser's name.
    public let user = "postgres"
    public let port: Int
    /// The cluster's directory (data, log and socket), removed by `stop()`.
    public let directory: URL
    /// What `pg_ctl -o` starts the server with (port, socket directory, settings); every later
    /// start and restart uses it again.
    public let serverOptions: String
    /// The settings part of `serverOptions` (after the port and socket directory), which a
    /// standby of this cluster starts with too.
    let settings: String
    /// Whether fsync is on (`start(durable:)`).
    let durable: Bool
    let binaries: URL
    let runAsPostgres: Bool
    private let lock = NSLock()
    private var stopped = false
    /// Kills the server and removes the directory should this process end without `stop()`.
    private let watchdog: Watchdog?

    /// `postgres://postgres@127.0.0.1:PORT/DATABASE`
    public func url(database: String = "postgres") -> String { "postgres://\(user)@127.0.0.1:\(port)/\(database)" }

    /// Debian's server programs (`postgresql` package): the highest version under /usr/lib/postgresql.
    public static func binaries() -> URL? {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []).compactMap(Int.init).sorted()
        for version in versions.reversed() {
            let bin = root.appendingPathComponent("\(version)/bin")
            if FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("initdb").path) { return bin }
        }
        return nil
    }

    /// Makes and starts a cluster. `durable: false` turns off fsync (for tests, whose data is
    /// thrown away); the benchmark keeps it on.
    public static func start(durable: Bool = false) throws -> TemporaryCluster {
        guard let binaries = binaries() else {
            throw Unavailable(description: "PostgreSQL's server programs are not installed (/usr/lib/postgresql/*/bin/initdb): run `make deps`")
        }
        let root = geteuid() == 0
        let directory = try makeDirectory(runAsPostgres: root)
        let port: Int
        do {
            port = try freePort()
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        var settings = "-c listen_addresses=127.0.0.1 -c max_connections=500"
        if !durable { settings += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off" }
        // More server settings for profiling a run, e.g. "-c shared_preload_libraries=pg_stat_statements".
        if let extra = ProcessInfo.processInfo.environment["DARKROOM_POSTGRES_SERVER_OPTIONS"], !extra.isEmpty {
            settings += " " + extra
        }
        let cluster = TemporaryCluster(port: port, directory: directory, binaries: binaries, runAsPostgres: root,
                                       settings: settings, durable: durable)
        do {
            try cluster.run("initdb", ["-D", cluster.data, "-U", cluster.user, "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"])
            try cluster.launch()
        } catch {
            cluster.stop()
            throw error
        }
        return cluster
    }

    /// Ends the watchdog's pipe as this process's death would, without stopping anything here:
    /// the watchdog then kills the server and removes the directory on its own. For the tests
    /// of the watchdog itself.
    public func simulateOwnerDeath() {
        watchdog?.closePipeOnly()
    }

    /// The server's process id, from `postmaster.pid`; nil when it is not running.
    public var serverPID: pid_t? {
        guard let text = try? String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first.flatMap { pid_t($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// Where every cluster's directory is made: what its watchdog agrees to remove.
    static let directoryPrefix = NSTemporaryDirectory().hasSuffix("/")
        ? NSTemporaryDirectory() + "darkroom-postgres-" : NSTemporaryDirectory() + "/darkroom-postgres-"

    /// A new empty directory for a cluster under the temporary directory; owned by `postgres`
    /// (mode 0700) when the programs run as that user.
    static func makeDirectory(runAsPostgres: Bool) throws -> URL {
        let directory = URL(fileURLWithPath: directoryPrefix + "\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if runAsPostgres {
            guard let account = getpwnam("postgres") else {
                try? FileManager.default.removeItem(at: directory)
                throw Unavailable(description: "running as root, but there is no `postgres` user to run initdb as: run `make deps`")
            }
            chown(directory.path, account.pointee.pw_uid, account.pointee.pw_gid)
            chmod(directory.path, 0o700)
        }
        return directory
    }

    init(port: Int, directory: URL, binaries: URL, runAsPostgres: Bool, settings: String, durable: Bool) {
        self.port = port
        self.directory = directory
        self.binaries = binaries
        self.runAsPostgres = runAsPostgres
        self.settings = settings
        self.durable = durable
        self.serverOptions = "-p \(port) -k \(directory.path) " + settings
        // Without it (no bash), a killed test process leaves its server running, as before.
        watchdog = try? Watchdog(directory: directory.path, prefix: Self.directoryPrefix, name: "darkroom-postgres-watchdog")
    }

    deinit { stop() }

    /// The data directory.
    var data: String { directory.appendingPathComponent("data").path }
    /// The server's log.
    var logFile: String { directory.appendingPathComponent("server.log").path }
    /// Whether `stop()` has run (the directory is gone).
    var isRemoved: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    /// Starts the server with `serverOptions` and waits (at most 60 s) until it is ready.
    func launch() throws {
        try run("pg_ctl", ["-D", data, "-l", logFile, "-o", serverOptions, "-w", "-t", "60", "start"])
    }

    /// Stops the server (fast shutdown) and removes the directory; once.
    public func stop() {
        lock.lock()
        let already = stopped
        stopped = true
        lock.unlock()
        guard !already else { return }
        if FileManager.default.fileExists(atPath: directory.appendingPathComponent("data/postmaster.pid").path) {
            try? run("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"])
        }
        try? FileManager.default.removeItem(at: directory)
        watchdog?.close()
    }

    /// Runs one of the server's programs (as `postgres` when this process is root) and waits,
    /// at most `timeout` seconds: then the program (its process group) is killed and this throws.
    /// Spawned and reaped directly (posix_spawn, waitpid): Foundation's `Process` can miss the
    /// exit of a program whose child (the server) lives on, and then waits for ever. The server
    /// itself is not in the program's group (pg_ctl starts it in a session of its own).
    func run(_ program: String, _ arguments: [String], timeout: Double = 120) throws {
        let path = binaries.appendingPathComponent(program).path
        let argv = runAsPostgres ? ["/usr/sbin/runuser", "-u", "postgres", "--", path] + arguments : [path] + arguments
        let output = directory.appendingPathComponent("\(program).out").path
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        if runAsPostgres, let account = getpwnam("postgres") { chown(output, account.pointee.pw_uid, account.pointee.pw_gid) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_APPEND, 0)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // pg_ctl starts the server, which lives on: it must not hold this process's descriptors.
        ChildSpawning.closeInheritedDescriptors(&actions)
        // A process group of its own, so that a program that overstays is killed with its children.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, &attributes, &cArguments, environ)
        guard spawned == 0 else {
            throw Unavailable(description: "cannot start \(argv[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(timeout)
        var overstayed = false
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR {
                throw Unavailable(description: "\(program) could not be waited for: \(String(cString: strerror(errno)))")
            }
            if !overstayed && Date() > deadline {
                overstayed = true
                kill(-pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                break
            }
            usleep(10_000)
        }
        if overstayed {
            throw Unavailable(description: "\(program) did not finish within \(Int(timeout)) s and was killed")
        }
        // WIFEXITED and WEXITSTATUS, which Swift does not import: exited when the low 7 bits are 0.
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        guard exited && code == 0 else {
            let said = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            var last = said.split(separator: "\n").last.map(String.init) ?? "no output"
            // pg_ctl only says "Examine the log output": the server's last complaint says why.
            if program == "pg_ctl", let complaint = lastComplaint() { last += " (server.log: \(complaint))" }
            throw Unavailable(description: "\(program) " + (exited ? "exited with status \(code)" : "was killed by signal \(status & 0x7f)") + ": \(last)")
        }
    }

    /// The last FATAL or PANIC line among the server log's last 8 KB, if any.
    private func lastComplaint() -> String? {
        guard let log = FileHandle(forReadingAtPath: logFile) else { return nil }
        defer { try? log.close() }
        let size = (try? log.seekToEnd()) ?? 0
        try? log.seek(toOffset: size > 8192 ? size - 8192 : 0)
        guard let tail = try? log.readToEnd() else { return nil }
        return String(decoding: tail, as: UTF8.self).split(separator: "\n")
            .last { $0.contains("FATAL:") || $0.contains("PANIC:") }.map(String.init)
    }

    /// A loopback port nothing listens on now, outside the kernel's ephemeral range (`LoopbackPort`).
    public static func freePort() throws -> Int {
        do {
            return try LoopbackPort.free()
        } catch {
            throw Unavailable(description: "\(error)")
        }
    }
}

extension TemporaryCluster {
    /// CPU seconds the server has used so far: the postmaster's own, its exited children's
    /// (which it has reaped: backends of closed connections) and its live children's, from
    /// /proc. For benchmarks that must count the database's CPU beside their own.
    public func serverCPUSeconds() -> Double? {
        let pidFile = directory.appendingPathComponent("data/postmaster.pid").path
        guard let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
              let postmaster = text.split(separator: "\n").first.flatMap({ Int32($0) }) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        /// Fields after the command (which may hold spaces): state, ppid, ... utime is the 14th field overall.
        func fields(_ pid: String) -> [Substring]? {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            return stat[stat.index(after: close)...].split(separator: " ")
        }
        guard let own = fields(String(postmaster)), own.count > 14 else { return nil }
        // After ")": [0] state, [1] ppid, ... [11] utime, [12] stime, [13] cutime, [14] cstime.
        var total = (11...14).compactMap { Double(own[$0]) }.reduce(0, +)
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int32(entry) != nil {
            guard let child = fields(entry), child.count > 12, Int32(child[1]) == postmaster else { continue }
            total += (11...12).compactMap { Double(child[$0]) }.reduce(0, +)
        }
        return total / ticks
    }
}
