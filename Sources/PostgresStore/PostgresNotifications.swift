import Foundation
import Logging
import PostgresNIO
import Synchronization

/// A connection of its own that `LISTEN`s on one channel and hands each notification's payload
/// to `received`, for as long as it runs: through a restart, a terminated session, a failover
/// or a path that stops answering (TCP keepalive and `TCP_USER_TIMEOUT` end such a connection,
/// as they do the pool's), it connects again a second later and listens again.
///
/// It runs on a thread of its own and the driver's event loop, never on the concurrency pool:
/// a pool whose few threads are all busy (a server's handlers, a test run's synchronous tests)
/// cannot keep it from listening. `received` is called on the event loop: keep it short.
///
/// `isListening` says whether notifications can arrive now; while it is false a caller that
/// waits for them should look for itself. A notification sent while no connection listened is
/// lost (PostgreSQL keeps none for a listener that is not there).
public final class PostgresNotifications: Sendable {
    public let channel: String
    private let state = Mutex(State())

    private struct State {
        var listening = false
        var stopped = false
        /// The connection listening now, closed by `stop`.
        var connection: PostgresConnection?
    }

    /// Starts listening on `channel` (an SQL identifier: letters, digits and underscores).
    public init(location: PostgresLocation, channel: String, deadlines: PostgresDeadlines = .standard,
                logger: Logger, received: @escaping @Sendable (String) -> Void) {
        precondition(!channel.isEmpty && channel.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
        self.channel = channel
        let thread = Thread { [weak self] in
            var reported = false
            while let self, !self.isStopped {
                do {
                    try self.listenOnce(location: location, deadlines: deadlines, logger: logger, received: received)
                    if reported { logger.info("listening for notifications again", metadata: ["channel": "\(channel)"]) }
                    reported = false
                    self.waitForClose()
                } catch {
                    if !reported && !self.isStopped {
                        logger.info("not listening for notifications; trying again every second",
                                    metadata: ["channel": "\(channel)", "reason": "\(error)"])
                        reported = true
                    }
                }
                self.state.withLock { $0.listening = false }
                Thread.sleep(forTimeInterval: 1)
            }
        }
        thread.name = "postgres-notifications"
        thread.start()
    }

    /// Whether a connection listens now.
    public var isListening: Bool { state.withLock { $0.listening } }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    /// Stops listening and closes the connection. Call it once done: the listening thread holds
    /// this value until then.
    public func stop() {
        let connection = state.withLock { state -> PostgresConnection? in
            state.stopped = true
            state.listening = false
            return state.connection
        }
        connection?.closeKeepingAlive()
    }

    /// Connects, adds the listener and sends `LISTEN`; returns once the server has taken it.
    private func listenOnce(location: PostgresLocation, deadlines: PostgresDeadlines, logger: Logger,
                            received: @escaping @Sendable (String) -> Void) throws {
        let watched = try WatchedConnection.connect(location, deadlines: deadlines, settings: [], id: 0, logger: logger)
        let connection = watched.connection
        let stopped = state.withLock { state -> Bool in
            if !state.stopped { state.connection = connection }
            return state.stopped
        }
        guard !stopped else {
            connection.closeKeepingAlive()
            return
        }
        connection.addListener(channel: channel) { _, notification in received(notification.payload) }
        do {
            _ = try watched.wait(watched.send(PostgresQuery(unsafeSQL: "LISTEN \(channel)"), logger: logger),
                                 deadline: Date().addingTimeInterval(deadlines.statement))
        } catch {
            connection.closeKeepingAlive()
            throw error
        }
        state.withLock { state in
            if !state.stopped { state.listening = true }
        }
    }

    /// Waits until the listening connection closes (the server ended it, the path broke, `stop`).
    private func waitForClose() {
        guard let connection = state.withLock({ $0.connection }) else { return }
        let closed = DispatchSemaphore(value: 0)
        connection.closeFuture.whenComplete { _ in closed.signal() }
        closed.wait()
        state.withLock { state in
            state.listening = false
            if state.connection === connection { state.connection = nil }
        }
    }
}
