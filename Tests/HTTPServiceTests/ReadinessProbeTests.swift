import Foundation
import NIOPosix
import Synchronization
import Testing
@testable import HTTPService
@testable import ServiceObservability

/// `/healthz/ready`'s checks run on threads of their own, bounded in time, one of a kind at once.
@Suite("Readiness probes")
struct ReadinessProbeTests {
    struct Refused: Error {}

    /// A check that blocks until released, as a stat on a hung network mount does, and counts its runs.
    final class StuckCheck: Sendable {
        let release = DispatchSemaphore(value: 0)
        let runs = Atomic(0)

        func body() {
            runs.add(1, ordering: .relaxed)
            release.wait()
        }
    }

    @Test("a stuck check is answered within the bound, joined rather than queued again, and other kinds go on")
    func stuckCheck() async throws {
        // On an event loop of its own, as the admin listener runs it: the test run's busy
        // concurrency pool would otherwise add its own delays to the bounded waits.
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { loops.shutdownGracefully { _ in } }
        let executor = EventLoopTaskExecutor(loops.next())
        try await Task(executorPreference: executor) { try await Self.stuckCheck(on: executor) }.value
    }

    static func stuckCheck(on executor: EventLoopTaskExecutor) async throws {
        let probes = ReadinessProbes()
        probes.pool.start()
        defer { probes.pool.shutdownGracefully { _ in } }
        let stuck = StuckCheck()

        let start = Date()
        let first = await probes.check("spool", within: 0.3, on: executor) { stuck.body() }
        #expect(first == nil, "a check that has not ended has no outcome")
        let second = await probes.check("spool", within: 0.3, on: executor) { stuck.body() }
        #expect(second == nil)
        let waited = Date().timeIntervalSince(start)
        #expect(waited < 3, "two bounded waits of 0.3 s took \(waited) s")
        #expect(stuck.runs.load(ordering: .relaxed) == 1, "the second request joined the check in flight")
        #expect(probes.isRunning("spool"))

        // The other kinds have threads of their own.
        let library = await probes.check("library", within: 2, on: executor) {}
        #expect(library.map { (try? $0.get()) != nil } == true)
        let catalog = await probes.check("catalog", within: 2, on: executor) { throw Refused() }
        switch catalog {
        case .failure(let error)?: #expect(error is Refused)
        default: Issue.record("a failing check reports its error, got \(String(describing: catalog))")
        }

        // Released, the stuck check ends, and the next request runs a new one.
        stuck.release.signal()
        let deadline = Date().addingTimeInterval(5)
        while probes.isRunning("spool"), Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!probes.isRunning("spool"))
        let again = await probes.check("spool", within: 2, on: executor) { stuck.runs.add(1, ordering: .relaxed) }
        #expect(again.map { (try? $0.get()) != nil } == true)
        #expect(stuck.runs.load(ordering: .relaxed) == 2)
    }
}
