import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// A bounded pool of PostgreSQL connections for code that blocks: the worker's threads, the
/// import's, and the HTTP server's blocking pool call the catalog synchronously, as they call
/// SQLite. Each call borrows a connection, waits for its statements on this thread (never on
/// an event loop or a thread of Swift's concurrency pool, which the driver itself runs on), and
/// gives it back; a connection the server closed is dropped and a new one made next time.
public final class PostgresPool: @unchecked Sendable {  // safe: `idle`, `open` and `closed` are guarded by `condition`
    public let location: PostgresLocation
    /// The most connections this pool holds open at once; a caller beyond it waits for one.
    public let maximumConnections: Int
    let logger: Logger
    private let configuration: PostgresConnection.Configuration
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var open = 0
    private var closed = false
    private let connectionIds = ManagedAtomicCounter()

    /// A pool for `location`; connects lazily, so a server that is down is met by the first call.
    /// `settings` are session settings every connection starts with (`synchronous_commit`).
    public init(location: PostgresLocation, maximumConnections: Int = 8, settings: [(String, String)] = [],
                logger: Logger = Logger(label: "darkroom.postgres")) throws(PostgresError) {
        self.location = location
        self.maximumConnections = max(1, maximumConnections)
        self.logger = logger
        var configuration = try location.connectionConfiguration()
        configuration.options.additionalStartupParameters = settings
        self.configuration = configuration
    }

    deinit { close() }

    /// Closes every idle connection; borrowed ones close as they come back.
    public func close() {
        condition.lock()
        closed = true
        let connections = idle
        idle.removeAll()
        open -= connections.count
        condition.broadcast()
        condition.unlock()
        for connection in connections { try? connection.close().wait() }
    }

    /// Runs `body` with a connection of its own (its statements in autocommit, unless it opens
    /// a transaction), then gives the connection back.
    public func withSession<T>(_ body: (PostgresSession) throws -> T) throws -> T {
        let connection = try borrow()
        var healthy = true
        defer { giveBack(connection, healthy: healthy && !connection.isClosed) }
        do {
            let session = PostgresSession(connection: connection, logger: logger)
            let result = try body(session)
            try session.settle()
            return result
        } catch {
            // A statement cut short by a lost connection may have left it mid-protocol.
            if case .unreachable = PostgresError(error) { healthy = false }
            throw error
        }
    }

    /// Runs `body` in one transaction at `isolation`: committed when it returns, rolled back
    /// when it throws. (The catalog's writes retry a transaction that lost a race themselves,
    /// under their lock: `PostgresCatalog.write`.)
    public func transaction<T>(_ isolation: PostgresSession.Isolation = .readCommitted, _ body: (PostgresSession) throws -> T) throws -> T {
        try withSession { session in try session.transaction(isolation, body) }
    }

    private func borrow() throws -> PostgresConnection {
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw PostgresError.unreachable(location.description, reason: "the connection pool is closed")
            }
            if let connection = idle.popLast() {
                condition.unlock()
                return connection
            }
            if open < maximumConnections { break }
            condition.wait()
        }
        open += 1
        condition.unlock()
        do {
            let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
            return try PostgresConnection.connect(on: eventLoop, configuration: configuration,
                                                  id: connectionIds.next(), logger: logger).wait()
        } catch {
            condition.lock()
            open -= 1
            condition.signal()
            condition.unlock()
            let reason = (error as? PSQLError)?.serverInfo?[.message] ?? "\((error as? PSQLError)?.underlying ?? error)"
            throw PostgresError.unreachable(location.description, reason: reason)
        }
    }

    private func giveBack(_ connection: PostgresConnection, healthy: Bool) {
        condition.lock()
        if healthy && !closed {
            idle.append(connection)
        } else {
            open -= 1
        }
        condition.signal()
        condition.unlock()
        if !healthy || closed { try? connection.close().wait() }
    }
}

/// Connection ids for the driver's logs.
final class ManagedAtomicCounter: @unchecked Sendable {  // safe: `value` is guarded by `lock`
    private let lock = NSLock()
    private var value = 0

    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}

extension PostgresPool {
    /// Creates database `name` (letters, digits and underscores) on this pool's server, whose
    /// user may create databases; nothing when it exists. For tests, benchmarks and `catalog copy`.
    public func createDatabase(_ name: String) throws {
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
            throw PostgresError.badLocation(name, reason: "a database name here is letters, digits and underscores")
        }
        try withSession { session in
            guard try session.value("SELECT 1 FROM pg_database WHERE datname = \(name)", as: Int32.self) == nil else { return }
            try session.execute(PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(name)\""))
        }
    }
}
