import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A small bash process that cleans up after a test server (a RADOS Gateway cluster, a
/// PostgreSQL cluster) whose owner died without stopping it (a test process killed, or
/// crashed): it reads a pipe whose only writer is this process, and when the pipe closes (at
/// this process's end, however it ends, or when `close()` is called) it kills every process
/// whose command line names the server's directory and removes the directory. A daemon's
/// "parent death signal" cannot be asked for through posix_spawn, and the daemons outlive a
/// killed test process otherwise.
///
/// It runs in a process group of its own and ignores SIGINT, SIGHUP and SIGQUIT, so that a ^C
/// to the test run (which ends the test process) does not end it before it has cleaned up.
public final class Watchdog: @unchecked Sendable {  // safe: `writer` and `pid` are changed under `lock`
    private let lock = NSLock()
    private var writer: Int32
    private var pid: pid_t?

    /// The script: the directory comes in the environment, not on the command line, so that
    /// the watchdog's own command line never names it.
    private static let script = #"""
        trap '' INT HUP QUIT PIPE
        dir=$DARKROOM_WATCHED_DIRECTORY
        prefix=$DARKROOM_WATCHED_PREFIX
        [[ -n $prefix && $dir == "$prefix"?* && $dir != *..* ]] || { echo "watchdog: refusing directory '$dir'"; exit 1; }
        # Sends signal $1 to every process (but this one) whose command line names the directory;
        # succeeds when there was one.
        sweep() {
            local entry pid hit=1
            local -a args
            for entry in /proc/[0-9]*; do
                pid=${entry#/proc/}
                [[ $pid == "$$" ]] && continue
                mapfile -d '' -t args < "$entry/cmdline" 2>/dev/null || continue
                [[ " ${args[*]} " == *"$dir/"* ]] || continue
                kill "-$1" "$pid" 2>/dev/null && hit=0
            done
            return $hit
        }
        cleanup() {
            if sweep KILL; then
                echo "watchdog: the owner of $dir is gone; killed what was left of its server"
                for _ in {1..100}; do sweep 0 || break; sleep 0.05; done
            fi
            rm -rf -- "$dir"
        }
        trap 'cleanup; exit 0' TERM
        while read -r _; do :; done
        cleanup
        """#

    /// Starts the watchdog of `directory`, which must begin with `prefix` (a guard: the
    /// watchdog removes it) and be longer. It says nothing: its output would have to outlive the
    /// directory. `name` is its process's name.
    public init(directory: String, prefix: String, name: String) throws {
        var ends: [Int32] = [0, 0]
        // A socket pair rather than a pipe, for SOCK_CLOEXEC (Swift does not see pipe2): close
        // on exec from the start, so that no child spawned by another thread meanwhile holds
        // this end, or it would not close when this process ends.
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw ChildSpawning.Failure(description: "cannot make the watchdog's socket pair: \(String(cString: strerror(errno)))")
        }
        writer = ends[1]
        // The watchdog's end goes to its standard input; dup2 clears its close-on-exec flag.
        do {
            pid = try ChildSpawning.start(["/bin/bash", "-c", Self.script, name], output: "/dev/null", stdinDescriptor: ends[0],
                                          environment: ["DARKROOM_WATCHED_DIRECTORY": directory, "DARKROOM_WATCHED_PREFIX": prefix])
        } catch {
            Glibc.close(ends[0])
            Glibc.close(ends[1])
            throw error
        }
        Glibc.close(ends[0])
    }

    deinit { close() }

    /// Closes the pipe: the watchdog kills what is left of the cluster, removes the directory
    /// and ends; returns once it has ended (at most 15 s). Once; later calls do nothing.
    public func close() {
        lock.lock()
        let writer = self.writer
        let pid = self.pid
        self.writer = -1
        self.pid = nil
        lock.unlock()
        if writer >= 0 { Glibc.close(writer) }
        if let pid, ChildSpawning.waitForEnd(pid, seconds: 15) == nil {
            ChildSpawning.end(pid)
        }
    }

    /// Closes the write end without waiting, as this process's death would (for the tests of
    /// the watchdog itself).
    public func closePipeOnly() {
        lock.lock()
        let writer = self.writer
        self.writer = -1
        lock.unlock()
        if writer >= 0 { Glibc.close(writer) }
    }
}
