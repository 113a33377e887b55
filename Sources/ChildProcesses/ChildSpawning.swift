import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Starting, waiting for and reaping the cluster's programs. posix_spawn and wait4, not
/// Foundation's `Process`: the daemons are long-lived children that this process reaps itself
/// (wait4 also gives the CPU time of the ones it reaps), and a program whose children live on
/// must not make a wait hang.
public enum ChildSpawning {
    /// Why a program could not be started or did not end as it should.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// An ended child: its wait status and the CPU seconds it used.
    public struct Ended {
        public let status: Int32
        public let cpuSeconds: Double

        /// "exited with status N" or "was killed by signal N" (WIFEXITED and friends are macros
        /// that Swift does not import: exited when the low 7 bits are 0).
        public var summary: String {
            status & 0x7f == 0 ? "exited with status \((status >> 8) & 0xff)" : "was killed by signal \(status & 0x7f)"
        }

        public var succeeded: Bool { status & 0x7f == 0 && (status >> 8) & 0xff == 0 }
    }

    /// Starts `argv` (`argv[0]` an absolute path) in a process group of its own, with standard
    /// input from `stdinDescriptor` (or /dev/null) and its output and errors appended to
    /// `output`, with `environment` added to this process's. Signals start with their default
    /// actions and none blocked, whatever this process's threads had set (a test process often
    /// ignores SIGPIPE); descriptors above 2 are not inherited.
    public static func start(_ argv: [String], output: String, stdinDescriptor: Int32? = nil,
                      environment extra: [String: String] = [:]) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdinDescriptor {
            posix_spawn_file_actions_adddup2(&actions, stdinDescriptor, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        closeInheritedDescriptors(&actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        var variables = ProcessInfo.processInfo.environment
        for (name, value) in extra { variables[name] = value }
        var cEnvironment = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for variable in cEnvironment { free(variable) } }
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, &attributes, &cArguments, &cEnvironment)
        guard spawned == 0 else {
            throw Failure(description: "cannot start \(argv[0]): \(String(cString: strerror(spawned)))")
        }
        return pid
    }

    /// glibc's posix_spawn_file_actions_addclosefrom_np (2.34), which Swift does not see
    /// (it is declared for _GNU_SOURCE only): descriptors that another part of this process
    /// opened without close-on-exec are not inherited by the long-lived daemons.
    private static let closeFromAction: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Whether spawned programs inherit no descriptor above 2 (glibc has the action).
    public static var closesInheritedDescriptors: Bool { closeFromAction != nil }

    /// Adds to `actions` the closing of every descriptor above 2, for any spawn of a program that
    /// may outlive the moment: a descriptor this process holds open without close-on-exec (a
    /// file a test is writing) would otherwise stay open in that program, and in the servers it
    /// starts, for their whole life; a photo held open for writing anywhere is never taken.
    public static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        if let closeFrom = closeFromAction { _ = closeFrom(&actions, 3) }
    }

    /// Reaps `pid` if it has ended (without waiting): nil while it runs. A child that someone
    /// else reaped already (ECHILD) counts as ended with an unknown status and no CPU time.
    public static func reapIfEnded(_ pid: pid_t) -> Ended? {
        var status: Int32 = 0
        var usage = rusage()
        while true {
            let reaped = wait4(pid, &status, WNOHANG, &usage)
            if reaped == pid {
                let cpu = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
                    + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
                return Ended(status: status, cpuSeconds: cpu)
            }
            if reaped == 0 { return nil }
            if errno == EINTR { continue }
            return Ended(status: 0x7f00, cpuSeconds: 0)
        }
    }

    /// Waits for `pid` to end, at most `seconds`; nil when it still runs then.
    public static func waitForEnd(_ pid: pid_t, seconds: Double) -> Ended? {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let ended = reapIfEnded(pid) { return ended }
            if Date() > deadline { return nil }
            usleep(10_000)
        }
    }

    /// Ends `pid`: `signal`, then SIGKILL to its process group if it has not ended within
    /// `grace` seconds; returns once it is reaped (or after 10 s more, when even SIGKILL did not
    /// end it, which only a process stuck in the kernel does).
    @discardableResult
    public static func end(_ pid: pid_t, signal: Int32 = SIGKILL, grace: Double = 10) -> Ended? {
        kill(pid, signal)
        if let ended = waitForEnd(pid, seconds: signal == SIGKILL ? 10 : grace) { return ended }
        kill(-pid, SIGKILL)
        kill(pid, SIGKILL)
        return waitForEnd(pid, seconds: 10)
    }

    /// Runs `argv` to its end, at most `timeout` seconds (then its process group is killed), its
    /// output appended to `output`; `abandonIf` is asked every 50 ms and a reason it gives ends
    /// the program early (a daemon it talks to has died). Throws, with the last lines of the
    /// program's output, unless it exits with status 0.
    public static func run(_ argv: [String], output: String, timeout: Double,
                    abandonIf: () -> String? = { nil }) throws {
        let start = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
        let pid = try ChildSpawning.start(argv, output: output)
        let name = (argv[0] as NSString).lastPathComponent
        let deadline = Date().addingTimeInterval(timeout)
        var lastCheck = Date.distantPast
        while true {
            if let ended = reapIfEnded(pid) {
                guard ended.succeeded else {
                    throw Failure(description: "\(name) \(ended.summary): " + lastLines(of: output, from: start))
                }
                return
            }
            if Date() > deadline {
                kill(-pid, SIGKILL)
                _ = waitForEnd(pid, seconds: 10)
                throw Failure(description: "\(name) did not finish within \(Int(timeout)) s and was killed: "
                              + lastLines(of: output, from: start))
            }
            if Date().timeIntervalSince(lastCheck) > 0.05 {
                lastCheck = Date()
                if let reason = abandonIf() {
                    kill(-pid, SIGKILL)
                    _ = waitForEnd(pid, seconds: 10)
                    throw Failure(description: "\(name) was abandoned: \(reason)")
                }
            }
            usleep(5_000)
        }
    }

    /// The last `count` non-empty lines of a file (of what follows byte `offset`), joined
    /// with " | ", at most 16 KB read from its end; "no output" when there are none.
    public static func lastLines(of path: String, from offset: Int = 0, count: Int = 8) -> String {
        guard let file = FileHandle(forReadingAtPath: path) else { return "no output (\((path as NSString).lastPathComponent) missing)" }
        defer { try? file.close() }
        let size = Int((try? file.seekToEnd()) ?? 0)
        let begin = max(offset, size - 16_384)
        try? file.seek(toOffset: UInt64(max(0, begin)))
        let tail = (try? file.readToEnd()) ?? Data()
        let lines = String(decoding: tail, as: UTF8.self).split(separator: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return lines.isEmpty ? "no output" : lines.suffix(count).joined(separator: " | ")
    }

    /// CPU seconds (user and system) that live process `pid` has used, from /proc.
    public static func cpuSeconds(of pid: pid_t) -> Double? {
        guard let fields = statFields(pid), fields.count > 12,
              let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Resident memory of process `pid` in bytes (VmRSS of /proc/PID/status).
    public static func residentBytes(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return nil }
        return kilobytes * 1024
    }

    /// The fields of /proc/PID/stat after the command (which may hold spaces): [0] state,
    /// [1] ppid, ... [11] utime, [12] stime.
    private static func statFields(_ pid: pid_t) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ")
    }

    /// A loopback port nothing listens on now, outside the kernel's ephemeral range (`LoopbackPort`).
    public static func freePort() throws -> Int {
        do {
            return try LoopbackPort.free()
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    public static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// What a plain HTTP request to 127.0.0.1:`port` gets: the response's status code, or nil
    /// when the connection is refused or nothing answers within `timeout` seconds.
    public static func httpStatus(port: Int, timeout: Double = 2) -> Int? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return nil }
        defer { close(socket) }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { return nil }
        let request = "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
        let sent = request.withCString { send(socket, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        guard sent > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64)
        var received = 0
        while received < 12 {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress! + received, $0.count - received, 0) }
            if count <= 0 { break }
            received += count
        }
        // "HTTP/1.1 200 OK"
        let line = String(decoding: buffer[0..<received], as: UTF8.self)
        guard line.hasPrefix("HTTP/"), let code = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return nil }
        return code
    }

    /// Whether a connection to 127.0.0.1:`port` is refused now.
    public static func refusesConnections(port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        return !connected && errno == ECONNREFUSED
    }
}
