import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// A bounded pool of PostgreSQL connections for code that blocks: the worker's threads, the
/// import's, and the HTTP server's blocking pool call the catalog synchronously, as they call
/// SQLite. Each call borrows a connection, waits for its statements on this thread (never on
/// an event loop or a thread of Swift's concurrency pool, which the driver itself runs on), and
/// gives it back.
///
/// Nothing here waits without a deadline (`PostgresDeadlines`): connecting, each statement,
/// each session, and a wait for a free connection. A connection is checked before it is handed
/// out (one that closed while idle is dropped) and dropped when a call on it failed for want of
/// the server; a statement on a closed connection fails at once.
public final class PostgresPool: @unchecked Sendable {  // safe: `idle`, `open`, `borrowed` and `closed` are guarded by `condition`
    public let location: PostgresLocation
    /// The most connections this pool holds open at once; a caller beyond it waits for one.
    public let maximumConnections: Int
    /// How long each kind of wait may last.
    public let deadlines: PostgresDeadlines
    public let logger: Logger
    private let settings: [(String, String)]
    private let condition = NSCondition()
    private var idle: [WatchedConnection] = []
    private var borrowed: [Int: WatchedConnection] = [:]
    private var open = 0
    private var closed = false
    /// Set by `dropAll(refusingNewWhile:)`: while it says so, no new connection is made.
    private var refuseNew: (@Sendable () -> Bool)?
    private let connectionIds = ManagedAtomicCounter()

    /// A pool for `location`; connects lazily, so a server that is down is met by the first call.
    /// `settings` are session settings every connection starts with (`synchronous_commit`).
    public init(location: PostgresLocation, maximumConnections: Int = 8, settings: [(String, String)] = [],
                deadlines: PostgresDeadlines = .standard, logger: Logger = Logger(label: "darkroom.postgres")) throws(PostgresError) {
        self.location = location
        self.maximumConnections = max(1, maximumConnections)
        self.logger = logger
        self.deadlines = deadlines
        self.settings = settings
        // An address that cannot make a configuration (TLS required and impossible) is refused now.
        _ = try location.connectionConfiguration()
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
        for connection in connections { connection.close() }
    }

    /// Closes every connection, idle and borrowed: the statements in flight fail at once. For a
    /// database known to be gone (a failover), so that nothing waits out a deadline on it.
    /// With `refusingNewWhile`, a new connection is refused at once for as long as it says so
    /// (a process stopping during an outage: what it still tries fails at once rather than wait
    /// out a connection's deadline on a database that is not there).
    public func dropAll(refusingNewWhile refusing: (@Sendable () -> Bool)? = nil) {
        condition.lock()
        if let refusing { refuseNew = refusing }
        let connections = idle + Array(borrowed.values)
        open -= idle.count
        idle.removeAll()
        condition.broadcast()
        condition.unlock()
        for connection in connections { connection.close(within: 0.5) }
    }

    /// Runs `body` with a connection of its own (its statements in autocommit, unless it opens
    /// a transaction), then gives the connection back.
    /// `deadlines` replaces the pool's for this call (a rebuild or a migration, whose one
    /// transaction may rightly take minutes).
    public func withSession<T>(deadlines: PostgresDeadlines? = nil, _ body: (PostgresSession) throws -> T) throws -> T {
        let connection = try borrow()
        var healthy = true
        defer { giveBack(connection, healthy: healthy && connection.isUsable) }
        do {
            let session = PostgresSession(link: connection, deadlines: deadlines ?? self.deadlines, logger: logger)
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
    public func transaction<T>(_ isolation: PostgresSession.Isolation = .readCommitted, deadlines: PostgresDeadlines? = nil,
                               _ body: (PostgresSession) throws -> T) throws -> T {
        try withSession(deadlines: deadlines) { session in try session.transaction(isolation, body) }
    }

    private func borrow() throws(PostgresError) -> WatchedConnection {
        let waitUntil = Date().addingTimeInterval(deadlines.transaction)
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw PostgresError.unreachable(location.description, reason: "the connection pool is closed")
            }
            if let connection = idle.popLast() {
                guard connection.isUsable else {
                    // Closed while idle (the server restarted, or ended the session): dropped.
                    open -= 1
                    continue
                }
                borrowed[connection.id] = connection
                condition.unlock()
                return connection
            }
            if open < maximumConnections {
                if let refuseNew, refuseNew() {
                    condition.unlock()
                    throw PostgresError.unreachable(location.description, reason: "the process is stopping during an outage of the database")
                }
                break
            }
            guard condition.wait(until: waitUntil) else {
                condition.unlock()
                throw PostgresError.unreachable(location.description,
                                                reason: "all \(maximumConnections) connections stayed busy for \(Int(deadlines.transaction)) s")
            }
        }
        open += 1
        condition.unlock()
        do {
            let connection = try WatchedConnection.connect(location, deadlines: deadlines, settings: settings,
                                                           id: connectionIds.next(), logger: logger)
            condition.lock()
            borrowed[connection.id] = connection
            condition.unlock()
            return connection
        } catch {
            condition.lock()
            open -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func giveBack(_ connection: WatchedConnection, healthy: Bool) {
        condition.lock()
        borrowed[connection.id] = nil
        if healthy && !closed {
            idle.append(connection)
        } else {
            open -= 1
        }
        condition.signal()
        condition.unlock()
        if !healthy || closed { connection.close(within: 0.5) }
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
