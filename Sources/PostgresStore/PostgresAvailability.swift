import Foundation
import Logging

/// Whether a PostgreSQL database can be reached now, as one process sees it: a thread of its own
/// asks the server a trivial question five times a second on a connection of its own, each
/// answer due within `PostgresDeadlines.probe` (under a second), so that an outage (a restart,
/// a stop, a crash, sessions terminated, a failover, a network path that stops answering) is
/// known here within a second of its start and its end within a probe of the server's return.
///
/// While the database is out, what depends on it pauses instead of failing: the workers stop
/// claiming and wait (`waitUntilReachable`), readiness answers 503, uploads are refused with a
/// `Retry-After`. One line is logged when it is lost and one when it is back, with the
/// outage's length; never one per photo. A standby still in recovery (read-only) counts as out.
public final class PostgresAvailability: @unchecked Sendable {
    // @unchecked: `outage`, `running`, `wakeRequested` and `lastAnswer` are guarded by `condition`.
    /// An outage in progress: since when, and the last reason a probe met.
    public struct Outage: Sendable, Equatable {
        public var since: Date
        public var reason: String
    }

    public let location: PostgresLocation
    private let logger: Logger
    private let pool: PostgresPool
    private let condition = NSCondition()
    private var current: Outage?
    private var running = false
    private var stopping = false
    private var wakeRequested = false
    private var lastAnswer = Date()
    private var thread: Thread?

    /// How often the database is asked while it answers. A path that goes silent just after a
    /// probe is known at the next one's deadline: 0.2 + 0.7 s, under a second with room to spare.
    static let interval = 0.2
    /// The longest pause between probes while it does not (backing off from `interval`, with jitter).
    static let longestBackoff = 2.0

    public init(location: PostgresLocation, logger: Logger) throws(PostgresError) {
        self.location = location
        self.logger = logger
        pool = try PostgresPool(location: location, maximumConnections: 1, deadlines: .probe, logger: logger)
    }

    deinit { stop() }

    /// Starts probing, once; the first probe runs before this returns, so that the state is
    /// known from the start.
    public func start() {
        condition.lock()
        guard !running, !stopping else {
            condition.unlock()
            return
        }
        running = true
        condition.unlock()
        probeOnce()
        let thread = Thread { [weak self] in self?.loop() }
        thread.name = "catalog-probe"
        self.thread = thread
        thread.start()
    }

    /// Stops probing and closes the probe's connection.
    public func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
        pool.close()
    }

    /// The outage in progress, nil while the database answers. A probe that has not answered
    /// for longer than a second counts as an outage already, before its deadline has passed.
    public var currentOutage: Outage? {
        condition.lock()
        defer { condition.unlock() }
        if let current { return current }
        let silent = Date().timeIntervalSince(lastAnswer)
        if running, silent > Self.staleAfter {
            return Outage(since: lastAnswer, reason: "PostgreSQL has not answered for \(String(format: "%.1f", silent)) s")
        }
        return nil
    }

    /// How long after its last answer the database counts as out, whatever the probe in flight says.
    static let staleAfter = 1.0

    /// Waits until the database answers again, at most `timeout` seconds; true when it does.
    public func waitUntilReachable(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while current != nil && !stopping {
            if !condition.wait(until: deadline) { return current == nil }
        }
        return current == nil
    }

    /// Tells the probe that a call just failed for want of the database: it asks again at once.
    public func suspect() {
        condition.lock()
        wakeRequested = true
        condition.broadcast()
        condition.unlock()
    }

    private func loop() {
        var pause = Self.interval
        while true {
            condition.lock()
            let deadline = Date().addingTimeInterval(pause)
            while !stopping && !wakeRequested {
                if !condition.wait(until: deadline) { break }
            }
            wakeRequested = false
            let done = stopping
            condition.unlock()
            if done { return }
            if probeOnce() {
                pause = Self.interval
            } else {
                // Backing off, each process at its own pace: machines that lost the database
                // together do not all knock at once when it returns.
                pause = min(Self.longestBackoff, pause * 2) * Double.random(in: 0.5...1.0)
            }
        }
    }

    /// Asks once; records and logs a change of state. True when the database answered.
    @discardableResult
    private func probeOnce() -> Bool {
        let started = Date()
        var failure: String?
        do {
            let inRecovery = try pool.withSession { session in try session.value("SELECT pg_is_in_recovery()", as: Bool.self) }
            if inRecovery == true { failure = "the server at \(location) is a standby in recovery (read-only)" }
        } catch {
            failure = "\(PostgresError(error))"
        }
        condition.lock()
        let previous = current
        if let failure {
            if current == nil { current = Outage(since: started, reason: failure) } else { current?.reason = failure }
        } else {
            current = nil
            lastAnswer = Date()
        }
        condition.broadcast()
        condition.unlock()
        switch (previous, failure) {
        case (nil, let reason?):
            logger.error("lost the catalog database; work pauses until it is back", metadata: [
                "catalog": "\(location)", "reason": "\(reason)"])
        case (let outage?, nil):
            logger.notice("the catalog database is back; work resumes", metadata: [
                "catalog": "\(location)", "outage_seconds": "\(String(format: "%.1f", Date().timeIntervalSince(outage.since)))"])
        default:
            break
        }
        return failure == nil
    }
}
