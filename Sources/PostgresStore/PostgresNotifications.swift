import Foundation
import Logging
import PostgresNIO
import Synchronization

/// A connection of its own that `LISTEN`s on one channel and hands each notification's payload
/// to `received`, for as long as it runs: through a restart, a terminated session, a failover
/// or a path that stops answering (TCP keepalive and `TCP_USER_TIMEOUT` end such a connection,
/// as they do the pool's), it connects again a second later and listens again.
///
/// `isListening` says whether notifications can arrive now; while it is false a caller that
/// waits for them should look for itself. A notification sent while no connection listened is
/// lost (PostgreSQL keeps none for a listener that is not there).
public final class PostgresNotifications: Sendable {
    public let channel: String
    private let shared = Shared()
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// What the listening task and `stop` share.
    private final class Shared: Sendable {
        let listening = Atomic<Bool>(false)
        /// The connection listening now, closed by `stop` (a wait for the next notification
        /// may not end on cancellation alone).
        let current = Mutex<PostgresConnection?>(nil)
    }

    /// Starts listening on `channel` (an SQL identifier: letters, digits and underscores).
    public init(location: PostgresLocation, channel: String, deadlines: PostgresDeadlines = .standard,
                logger: Logger, received: @escaping @Sendable (String) -> Void) {
        precondition(!channel.isEmpty && channel.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
        self.channel = channel
        let shared = shared
        let loop = Task.detached {
            var reported = false
            while !Task.isCancelled {
                do {
                    let watched = try await Self.connect(location, deadlines: deadlines, logger: logger)
                    let connection = watched.connection
                    shared.current.withLock { $0 = connection }
                    defer { shared.current.withLock { $0 = nil } }
                    if Task.isCancelled { try? await connection.close(); break }
                    do {
                        let notifications = try await connection.listen(channel)
                        shared.listening.store(true, ordering: .sequentiallyConsistent)
                        if reported { logger.info("listening for notifications again", metadata: ["channel": "\(channel)"]) }
                        reported = false
                        for try await notification in notifications { received(notification.payload) }
                    } catch {
                        shared.listening.store(false, ordering: .sequentiallyConsistent)
                        try? await connection.close()
                        throw error
                    }
                    shared.listening.store(false, ordering: .sequentiallyConsistent)
                    try? await connection.close()
                } catch {
                    shared.listening.store(false, ordering: .sequentiallyConsistent)
                    if !reported && !Task.isCancelled {
                        logger.info("not listening for notifications; trying again every second",
                                    metadata: ["channel": "\(channel)", "reason": "\(error)"])
                        reported = true
                    }
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
        task.withLock { $0 = loop }
    }

    deinit { stop() }

    /// Whether a connection listens now.
    public var isListening: Bool { shared.listening.load(ordering: .sequentiallyConsistent) }

    /// Stops listening and closes the connection.
    public func stop() {
        task.withLock { task in
            task?.cancel()
            task = nil
        }
        shared.current.withLock { $0 }?.close().whenComplete { _ in }
        shared.listening.store(false, ordering: .sequentiallyConsistent)
    }

    /// The connection, made off the event loops (`WatchedConnection.connect` blocks its thread).
    private static func connect(_ location: PostgresLocation, deadlines: PostgresDeadlines, logger: Logger) async throws -> WatchedConnection {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { () throws -> WatchedConnection in
                    try WatchedConnection.connect(location, deadlines: deadlines, settings: [], id: 0, logger: logger)
                })
            }
        }
    }
}
