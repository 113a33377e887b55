import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A one-way flag that wakes sleepers when raised: set by SIGTERM/SIGINT or by the end of a
/// `--once` run. It also owns a pipe, so that a thread blocked in `poll` wakes at once.
public final class StopSignal: @unchecked Sendable {
    // @unchecked: `raised` is only touched while `condition` is locked; the pipe's descriptors
    // never change after init.
    private let condition = NSCondition()
    private var raised = false
    public let readDescriptor: Int32
    private let writeDescriptor: Int32

    public init() {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) != 0 { fds = [-1, -1] }
        for fd in fds where fd >= 0 {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        readDescriptor = fds[0]
        writeDescriptor = fds[1]
    }

    deinit {
        close(readDescriptor)
        close(writeDescriptor)
    }

    public var isRaised: Bool {
        condition.lock()
        defer { condition.unlock() }
        return raised
    }

    public func raise() {
        condition.lock()
        raised = true
        condition.broadcast()
        condition.unlock()
        var byte: UInt8 = 1
        _ = write(writeDescriptor, &byte, 1)
    }

    /// Sleeps up to `seconds`, returning early when raised.
    public func sleep(_ seconds: Double) {
        condition.lock()
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !raised, condition.wait(until: deadline) {}
        condition.unlock()
    }
}
