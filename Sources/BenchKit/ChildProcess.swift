import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program as a child and reports its exit status, wall and CPU time, and peak memory.
///
/// The peak is the child's VmHWM, polled from /proc/PID/status until it exits, not `ru_maxrss`:
/// glibc's posix_spawn starts the child in the parent's address space (CLONE_VM), and Linux
/// carries that address space's high-water mark into the child's `ru_maxrss` at exec, so
/// `ru_maxrss` reports at least the parent's own peak. VmHWM belongs to the new program's
/// address space alone.
public enum ChildProcess {
    public struct Result {
        /// The exit code, or 128 + the signal that ended it.
        public let status: Int32
        /// Wall time from spawn to exit.
        public let wallSeconds: Double
        /// The child's peak resident set (VmHWM, last read before it exited), in kB.
        public let peakKilobytes: Int
        /// What `wait4` reports as `ru_maxrss` (at least this process's own peak), in kB.
        public let maxRSSKilobytes: Int
        /// CPU time the child spent in user and kernel mode.
        public let cpuSeconds: Double
    }

    /// Runs `executable` with `arguments`, standard output and error to the given files
    /// (or /dev/null), and `environment` added to this process's, and waits for it. Without
    /// `watchMemory` it waits in one blocking call (its wall time exact, its peak not read);
    /// with it, the wait polls VmHWM every `pollMicroseconds`, so its wall time is that coarse.
    public static func run(_ executable: String, _ arguments: [String], stdout: String? = nil, stderr: String? = nil,
                    environment: [String: String] = [:], watchMemory: Bool = true) throws -> Result {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)

        let variables = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let start = Machine.now()
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard spawned == 0 else {
            throw BenchError("cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        var usage = rusage()
        var peak = 0
        while true {
            if watchMemory { peak = max(peak, highWaterMark(of: pid)) }
            let reaped = wait4(pid, &status, watchMemory ? WNOHANG : 0, &usage)
            if reaped == pid { break }
            if reaped < 0, errno != EINTR { throw BenchError("cannot wait for \(executable): \(String(cString: strerror(errno)))") }
            usleep(pollMicroseconds)
        }
        let wall = Machine.now() - start
        let signal = status & 0x7F
        let code = signal == 0 ? (status >> 8) & 0xFF : 128 + signal
        let cpu = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        return Result(status: code, wallSeconds: wall, peakKilobytes: peak, maxRSSKilobytes: Int(usage.ru_maxrss), cpuSeconds: cpu)
    }

    /// How often the child's VmHWM is read: a peak in its last moments before exit may be missed.
    public static let pollMicroseconds: UInt32 = 20_000

    /// VmHWM of a running process, in kB (0 once it has exited).
    public static func highWaterMark(of pid: pid_t) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        }
        return 0
    }
}
