import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM and SIGINT (or the signals given), routed to `stop` for as long as this lives
/// uncancelled: a long command finishes the photos in hand instead of dying mid-photo.
///
/// The handler is a plain `sigaction` one, installed before `init` returns, so a signal that
/// arrives the moment after (a service manager that stops the daemon as soon as it says
/// `READY=1`) is never lost. (A dispatch signal source is armed later, on another thread,
/// while the signal is already ignored: a signal in between would vanish.) The handler only
/// writes the signal's number to a pipe; a thread of this object's reads it and calls `stop`,
/// once per signal. One `StopSignals` is live in a process at a time.
public final class StopSignals: @unchecked Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32
    private let numbers: [Int32]
    private let lock = NSLock()
    private var cancelled = false

    public init(_ numbers: [Int32] = [SIGTERM, SIGINT], _ stop: @escaping @Sendable () -> Void) {
        self.numbers = numbers
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { fatalError("StopSignals: pipe: \(String(cString: strerror(errno)))") }
        readEnd = ends[0]
        writeEnd = ends[1]
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        stopSignalPipe = writeEnd
        let readEnd = readEnd
        let reader = Thread {
            var byte: UInt8 = 0
            while true {
                let count = read(readEnd, &byte, 1)
                if count < 0 && errno == EINTR { continue }
                // 0 is `cancel`'s word to end; end of file or an error ends too.
                guard count == 1, byte != 0 else { break }
                stop()
            }
            close(readEnd)
        }
        reader.name = "stop-signals"
        reader.start()
        for number in numbers {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(stopSignalPipe, &byte, 1)
            }
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(number, &action, nil)
        }
    }

    /// Stops routing the signals: from here on they are ignored, and `stop` is not called again.
    public func cancel() {
        lock.lock()
        defer { lock.unlock() }
        guard !cancelled else { return }
        cancelled = true
        for number in numbers { signal(number, SIG_IGN) }
        var end: UInt8 = 0
        _ = write(writeEnd, &end, 1)
        close(writeEnd)
    }

    deinit { cancel() }
}

/// The pipe's write end for the signal handler, which can capture nothing.
nonisolated(unsafe) private var stopSignalPipe: Int32 = -1
