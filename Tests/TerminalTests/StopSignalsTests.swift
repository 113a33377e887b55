import Foundation
import Synchronization
import Terminal
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The daemons' stop signals, on SIGUSR2 (which nothing else in the test process uses) so
/// that the test runner's own SIGTERM and SIGINT stay as they are.
@Suite("Stop signals", .serialized)
struct StopSignalsTests {
    /// A service manager may stop a daemon the moment it says READY=1: a signal sent at once
    /// after the handler is set up must reach `stop`, every time.
    @Test func aSignalSentTheMomentAfterSetUpIsNeverLost() throws {
        for round in 0..<200 {
            let calls = Atomic<Int>(0)
            let signals = StopSignals([SIGUSR2]) { calls.add(1, ordering: .relaxed) }
            kill(getpid(), SIGUSR2)
            let deadline = Date().addingTimeInterval(5)
            while calls.load(ordering: .relaxed) == 0 && Date() < deadline { usleep(1_000) }
            signals.cancel()
            try #require(calls.load(ordering: .relaxed) == 1, "round \(round): the signal did not reach stop")
        }
        signal(SIGUSR2, SIG_DFL)
    }

    @Test func eachSignalCallsStopAndNoneDoesOnceCancelled() throws {
        let calls = Atomic<Int>(0)
        let signals = StopSignals([SIGUSR2]) { calls.add(1, ordering: .relaxed) }
        for expected in 1...3 {
            kill(getpid(), SIGUSR2)
            let deadline = Date().addingTimeInterval(5)
            while calls.load(ordering: .relaxed) < expected && Date() < deadline { usleep(1_000) }
            #expect(calls.load(ordering: .relaxed) == expected)
        }
        signals.cancel()
        // Ignored from now on: the process lives on and stop is not called.
        kill(getpid(), SIGUSR2)
        usleep(100_000)
        #expect(calls.load(ordering: .relaxed) == 3)
        // As it was, for the processes other tests start from here on.
        signal(SIGUSR2, SIG_DFL)
    }
}
