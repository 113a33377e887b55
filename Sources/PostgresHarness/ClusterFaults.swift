import Foundation
import PostgresStore

#if canImport(Glibc)
import Glibc
#endif

/// Faults a test inflicts on its own cluster while Darkroom runs against it: restarts, stops,
/// a killed server, ended sessions, and a standby to fail over to. Each call returns once the
/// fault is in place (or the server is back), and none waits without a bound.
extension TemporaryCluster {
    /// Restarts the server with a fast shutdown (open sessions are ended, nothing else lost)
    /// and its same options; returns once it accepts connections again.
    public func restartFast() throws {
        try requireDirectory()
        try run("pg_ctl", ["-D", data, "-l", logFile, "-o", serverOptions, "-m", "fast", "-w", "-t", "60", "restart"])
        try waitUntilAccepting()
    }

    /// Stops the server with a fast shutdown, keeping its directory for `startServer()`.
    public func stopServer() throws {
        try requireDirectory()
        try run("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"])
    }

    /// Starts the stopped server again, on the same port with the same options; returns once
    /// it accepts connections.
    public func startServer() throws {
        try requireDirectory()
        try launch()
        try waitUntilAccepting()
    }

    /// Kills the server as a crash would: SIGKILL to the postmaster, then to every process it
    /// had started (the backends, which would otherwise keep the port and the shared memory).
    /// Returns the killed processes' ids once all are gone and a new start is possible
    /// (`recoverAfterKill()`).
    @discardableResult
    public func killPostmaster() throws -> [Int32] {
        try requireDirectory()
        let pidFile = directory.appendingPathComponent("data/postmaster.pid").path
        guard let postmaster = Self.lockHolder(pidFile), Self.isAlive(postmaster) else {
            throw Unavailable(description: "the server on port \(port) is not running: there is no live postmaster to kill")
        }
        // Stopped first, so that it starts no process while its children are listed.
        kill(postmaster, SIGSTOP)
        let children = Self.processes(withParent: postmaster)
        kill(postmaster, SIGKILL)
        for child in children { kill(child, SIGKILL) }
        let killed = [postmaster] + children
        try Self.waitFor(seconds: 30, "the killed server's processes \(killed) to end") {
            !killed.contains(where: Self.isAlive)
        }
        // A postmaster nobody has reaped yet (here the init process reaps orphans late) is a
        // zombie whose id still answers kill(pid, 0): the next postmaster would take its lock
        // files (the data directory's and the socket's) for a live server's, and refuse to start.
        try? Self.waitFor(seconds: 0.5, "the killed postmaster to be reaped") { !Self.exists(postmaster) }
        if Self.exists(postmaster) {
            let socketLock = directory.appendingPathComponent(".s.PGSQL.\(port).lock").path
            for lockFile in [pidFile, socketLock] where Self.lockHolder(lockFile) == postmaster {
                try? FileManager.default.removeItem(atPath: lockFile)
            }
        }
        try Self.waitFor(seconds: 30, "port \(port) to be free after the kill") { Self.canBind(port: port) }
        return killed
    }

    /// Starts the server again after `killPostmaster()`: it runs crash recovery from its WAL;
    /// returns once it accepts connections.
    public func recoverAfterKill() throws {
        try startServer()
    }

    /// Ends every client session (of `database` only, when given) as an administrator would,
    /// with `pg_terminate_backend`, waiting up to 5 s for each to end; returns how many ended.
    /// The caller's next statement on such a session fails.
    @discardableResult
    public func terminateBackends(database: String? = nil) throws -> Int {
        try requireDirectory()
        let pool = try PostgresPool(location: try PostgresLocation(url()), maximumConnections: 1)
        defer { pool.close() }
        return try pool.withSession { session in
            let ended: [Bool]
            if let database {
                ended = try session.values("""
                    SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
                    WHERE pid <> pg_backend_pid() AND backend_type = 'client backend' AND datname = \(database)
                    """, as: Bool.self)
            } else {
                ended = try session.values("""
                    SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
                    WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'
                    """, as: Bool.self)
            }
            return ended.filter { $0 }.count
        }
    }

    /// A streaming standby of this cluster (`pg_basebackup -R -X stream`) in a directory of its
    /// own, started on its own free port with this cluster's settings; returns once it accepts
    /// (read-only) connections. It is a `TemporaryCluster` too: `stop()` removes it.
    public func startStandby() throws -> TemporaryCluster {
        try requireDirectory()
        let directory = try Self.makeDirectory(runAsPostgres: runAsPostgres)
        let port: Int
        do {
            port = try Self.freePort()
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        let standby = TemporaryCluster(port: port, directory: directory, binaries: binaries, runAsPostgres: runAsPostgres,
                                       settings: settings, durable: durable)
        do {
            // A fast checkpoint: the default spreads it out, and the copy waits for it.
            var arguments = ["-h", "127.0.0.1", "-p", "\(self.port)", "-U", user, "-D", standby.data,
                             "-R", "-X", "stream", "-c", "fast"]
            if !durable { arguments.append("--no-sync") }
            try standby.run("pg_basebackup", arguments)
            try standby.launch()
            try standby.waitUntilAccepting()
        } catch {
            standby.stop()
            throw error
        }
        return standby
    }

    /// Promotes this standby to a primary; returns once it accepts writes.
    public func promote() throws {
        try requireDirectory()
        try run("pg_ctl", ["-D", data, "-w", "-t", "60", "promote"])
        try Self.waitFor(seconds: 30, "the promoted server on port \(port) to leave recovery") {
            (try? !isInRecovery()) ?? false
        }
    }

    /// Whether the server is a standby (`pg_is_in_recovery()`).
    public func isInRecovery() throws -> Bool {
        try requireDirectory()
        let pool = try PostgresPool(location: try PostgresLocation(url()), maximumConnections: 1)
        defer { pool.close() }
        guard let recovering = try pool.withSession({ session in try session.value("SELECT pg_is_in_recovery()", as: Bool.self) }) else {
            throw Unavailable(description: "pg_is_in_recovery() answered nothing on port \(port)")
        }
        return recovering
    }

    /// Waits until the server answers a query on a new connection, at most `seconds`.
    public func waitUntilAccepting(within seconds: Double = 30) throws {
        let deadline = Date().addingTimeInterval(seconds)
        var lastError: (any Error)?
        repeat {
            do {
                let pool = try PostgresPool(location: try PostgresLocation(url()), maximumConnections: 1)
                defer { pool.close() }
                _ = try pool.withSession { session in try session.value("SELECT 1", as: Int32.self) }
                return
            } catch {
                lastError = error
                usleep(100_000)
            }
        } while Date() < deadline
        throw Unavailable(description: "the server on port \(port) did not accept connections within \(Int(seconds)) s: "
                          + (lastError.map { "\($0)" } ?? "no attempt"))
    }

    private func requireDirectory() throws {
        guard !isRemoved else {
            throw Unavailable(description: "the cluster on port \(port) was stopped and removed: start a new one")
        }
    }

    /// The process id on the first line of a PostgreSQL lock file.
    private static func lockHolder(_ path: String) -> Int32? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first.flatMap { Int32($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// Whether process `pid` exists and is not a zombie.
    static func isAlive(_ pid: Int32) -> Bool {
        guard let state = processState(pid) else { return false }
        return state != "Z" && state != "X"
    }

    /// Whether process `pid` exists at all (a zombie included).
    static func exists(_ pid: Int32) -> Bool { processState(pid) != nil }

    /// The state letter of /proc/PID/stat, nil when there is no such process.
    private static func processState(_ pid: Int32) -> Character? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ").first?.first
    }

    /// The live processes whose parent is `parent`, from /proc.
    private static func processes(withParent parent: Int32) -> [Int32] {
        var found: [Int32] = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry),
                  let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            // After the command: state, then the parent's id.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, Int32(fields[1]) == parent { found.append(pid) }
        }
        return found
    }

    /// Whether a listening socket could bind 127.0.0.1:`port` now, as the postmaster does
    /// (with SO_REUSEADDR, so connections of the old server in TIME_WAIT do not count).
    private static func canBind(port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { Glibc.close(socket) }
        var one: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// Polls `condition` every 50 ms until it holds, at most `seconds`; then throws naming `what`.
    private static func waitFor(seconds: Double, _ what: String, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else {
                throw Unavailable(description: "gave up after \(Int(seconds)) s waiting for \(what)")
            }
            usleep(50_000)
        }
    }
}
