import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

#if canImport(Glibc)
import Glibc
#endif

/// One connection of a `PostgresPool`, with every wait for an answer bounded.
///
/// The driver answers a statement by completing a promise that its channel handler holds. A
/// statement written to a channel that has already closed (the server restarted, or terminated
/// the session, while the connection sat idle in the pool) never reaches that handler, so its
/// promise is never completed and a thread waiting on it waits for ever. Here every answer is
/// awaited through a `Pending` that the connection's close also completes, and that gives up
/// at its deadline (closing the connection, which the pool then drops).
final class WatchedConnection: @unchecked Sendable {
    // @unchecked: `pending`, `closedReason` and `lastUsed` are guarded by `lock`.
    let connection: PostgresConnection
    let location: String
    private let lock = NSLock()
    private var pending: [ObjectIdentifier: Pending] = [:]
    private var closedReason: String?
    private var lastUsed = Date()

    init(_ connection: PostgresConnection, location: String) {
        self.connection = connection
        self.location = location
        // Registered once for the connection's life: a close fails every answer still awaited.
        connection.closeFuture.whenComplete { [weak self] _ in self?.closed("the connection was closed") }
    }

    var id: Int { connection.id }

    /// Whether the connection can still carry a statement.
    var isUsable: Bool {
        lock.lock()
        defer { lock.unlock() }
        return closedReason == nil && !connection.isClosed
    }

    /// Seconds since the connection last answered.
    var idleSeconds: Double {
        lock.lock()
        defer { lock.unlock() }
        return Date().timeIntervalSince(lastUsed)
    }

    /// Sends a statement; its answer is awaited with `wait`. Nothing is written to a connection
    /// known to be closed: the driver would leave the statement's promise unanswered.
    func send(_ query: PostgresQuery, logger: Logger) -> Answer {
        guard isUsable else {
            return Answer(future: connection.eventLoop.makeFailedFuture(Closed(reason: "the connection was closed")))
        }
        return Answer(future: connection.query(query, logger: logger))
    }

    /// A statement's future answer.
    struct Answer {
        let future: EventLoopFuture<PostgresQueryResult>
    }

    /// The answer, or a `PostgresError.unreachable` when the connection closes first or nothing
    /// comes by `deadline` (the connection is then closed: what it was doing is unknown).
    func wait(_ answer: Answer, deadline: Date) throws(PostgresError) -> PostgresQueryResult {
        let waited = max(0, deadline.timeIntervalSinceNow)
        let waiter = Pending()
        lock.lock()
        if let reason = closedReason {
            lock.unlock()
            throw .unreachable(location, reason: reason)
        }
        pending[ObjectIdentifier(waiter)] = waiter
        lock.unlock()
        answer.future.whenComplete { waiter.complete($0.map { $0 as Any }.mapError { $0 as any Error }) }
        // The channel may have closed before the hook above was registered for this waiter.
        if connection.isClosed { waiter.complete(.failure(Closed(reason: "the connection was closed"))) }
        let result = waiter.wait(until: deadline)
        lock.lock()
        pending[ObjectIdentifier(waiter)] = nil
        if result != nil { lastUsed = Date() }
        lock.unlock()
        guard let result else {
            closed("no answer within the deadline")
            connection.closeKeepingAlive()
            throw .unreachable(location, reason: "PostgreSQL did not answer within its deadline (\(Self.format(waited))); the connection was dropped")
        }
        switch result {
        case .success(let value):
            guard let value = value as? PostgresQueryResult else {
                throw .statement("the driver answered with an unexpected value", sqlState: nil)
            }
            return value
        case .failure(let error as Closed):
            throw .unreachable(location, reason: error.reason)
        case .failure(let error):
            throw Self.failure(error, location: location)
        }
    }

    /// The driver's error for a statement: a failure without the server's word is a lost connection.
    /// The server's own word that it is going away or cannot take writes (a shutdown, a
    /// terminated session, a crash, a start-up, a standby) is one too: the same statement
    /// succeeds once the database is back.
    static func failure(_ error: any Error, location: String) -> PostgresError {
        guard let error = error as? PSQLError else { return PostgresError(error) }
        guard let serverInfo = error.serverInfo else {
            return .unreachable(location, reason: "\(error.code): \(error.underlying.map { "\($0)" } ?? "no detail")")
        }
        if let state = serverInfo[.sqlState], isOutage(sqlState: state) {
            return .unreachable(location, reason: "\(serverInfo[.message] ?? state) (SQLSTATE \(state))")
        }
        return PostgresError(error)
    }

    /// SQLSTATEs of a database that is going away or not taking writes: connection exceptions
    /// (class 08), admin, crash and start-up shutdowns (57P01 to 57P03), too many connections
    /// (53300), and a read-only transaction on a standby (25006).
    static func isOutage(sqlState: String) -> Bool {
        sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03", "53300", "25006"].contains(sqlState)
    }

    private static func format(_ seconds: Double) -> String {
        String(format: "%.1f s", seconds)
    }

    /// Marks the connection closed and fails every answer still awaited.
    private func closed(_ reason: String) {
        lock.lock()
        if closedReason == nil { closedReason = reason }
        let waiting = Array(pending.values)
        lock.unlock()
        for waiter in waiting { waiter.complete(.failure(Closed(reason: reason))) }
    }

    /// Closes the connection, waiting at most `seconds` for the driver to finish.
    func close(within seconds: Double = 2) {
        closed("the connection was closed")
        let done = Pending()
        connection.closeKeepingAlive().whenComplete { _ in done.complete(.success(() as Any)) }
        _ = done.wait(until: Date().addingTimeInterval(seconds))
    }

    /// Why a connection ended while an answer was awaited.
    struct Closed: Error {
        let reason: String
    }

    /// One awaited answer: completed once, by the driver or by the connection's close.
    final class Pending: @unchecked Sendable {
        // @unchecked: `result` is guarded by `condition`.
        private let condition = NSCondition()
        private var result: Result<Any, any Error>?

        func complete(_ outcome: Result<Any, any Error>) {
            condition.lock()
            if result == nil {
                result = outcome
                condition.broadcast()
            }
            condition.unlock()
        }

        /// The result, or nil when `deadline` passed first.
        func wait(until deadline: Date) -> Result<Any, any Error>? {
            condition.lock()
            defer { condition.unlock() }
            while result == nil {
                if !condition.wait(until: deadline) { return result }
            }
            return result
        }
    }
}

extension WatchedConnection {
    /// Connects to `location`, with TCP keepalive (a path that stops answering is noticed by the
    /// kernel), `TCP_USER_TIMEOUT` (data unacknowledged for the statement deadline ends the
    /// connection), and the whole of it, handshake included, within `deadlines.connect`.
    static func connect(_ location: PostgresLocation, deadlines: PostgresDeadlines, settings: [(String, String)],
                        id: Int, logger: Logger) throws(PostgresError) -> WatchedConnection {
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let connectTimeout = TimeAmount.milliseconds(Int64(deadlines.connect * 1000))
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.so_keepalive), value: 1)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelOption(ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: TCP_KEEPIDLE)),
                           value: SocketOptionValue(max(1, deadlines.keepaliveIdle)))
            .channelOption(ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: TCP_KEEPINTVL)), value: 1)
            .channelOption(ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: TCP_KEEPCNT)), value: 3)
            .channelOption(ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: Self.tcpUserTimeout)),
                           value: SocketOptionValue(max(1000, deadlines.statement * 1000)))
        let deadline = Date().addingTimeInterval(deadlines.connect)
        let waiter = Pending()
        let channelFuture = bootstrap.connect(host: location.host, port: location.port)
        channelFuture.whenComplete { waiter.complete($0.map { $0 as Any }.mapError { $0 as any Error }) }
        let channel: any Channel
        switch waiter.wait(until: deadline) {
        case nil:
            channelFuture.whenSuccess { $0.close(promise: nil) }
            throw .unreachable(location.description, reason: "no connection within \(format(deadlines.connect)) (\(location.host):\(location.port) does not answer)")
        case .failure(let error)?:
            throw PostgresError.connectionFailure(error, location: location)
        case .success(let value)?:
            guard let value = value as? any Channel else { throw .unreachable(location.description, reason: "no channel") }
            channel = value
        }
        let settled = try location.connectionConfiguration()
        var configuration = PostgresConnection.Configuration(establishedChannel: channel, tls: settled.tls, username: settled.username,
                                                             password: settled.password, database: settled.database)
        if settled.tls.isAllowed, !location.host.contains(where: { $0 == ":" }), location.host.contains(where: \.isLetter) {
            configuration.options.tlsServerName = location.host
        }
        configuration.options.connectTimeout = .milliseconds(Int64(max(0.1, deadline.timeIntervalSinceNow) * 1000))
        configuration.options.additionalStartupParameters = settings
        let handshake = Pending()
        let connectionFuture = PostgresConnection.connect(on: eventLoop, configuration: configuration, id: id, logger: logger)
        connectionFuture.whenComplete { handshake.complete($0.map { $0 as Any }.mapError { $0 as any Error }) }
        switch handshake.wait(until: deadline.addingTimeInterval(0.2)) {
        case nil:
            channel.close(promise: nil)
            connectionFuture.whenSuccess { $0.closeKeepingAlive() }
            throw .unreachable(location.description, reason: "the server accepted the connection but did not finish its start-up within \(format(deadlines.connect))")
        case .failure(let error)?:
            channel.close(promise: nil)
            throw PostgresError.connectionFailure(error, location: location)
        case .success(let value)?:
            guard let connection = value as? PostgresConnection else { throw .unreachable(location.description, reason: "no connection") }
            return WatchedConnection(connection, location: location.description)
        }
    }

    /// Linux's TCP_USER_TIMEOUT (not exported by Glibc's module map).
    static let tcpUserTimeout: Int32 = 18
}

extension PostgresConnection {
    /// Closes the connection and holds it until the close has finished. The driver asserts (in
    /// debug builds) that a connection is closed when it is released; a close still in flight
    /// when the last reference goes (a listener stopped while it connects) would trip it.
    @discardableResult
    func closeKeepingAlive() -> EventLoopFuture<Void> {
        let closing: EventLoopFuture<Void> = close()
        closing.whenComplete { _ in withExtendedLifetime(self) {} }
        return closing
    }
}
