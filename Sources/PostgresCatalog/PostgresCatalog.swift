import Catalog
import Foundation
import Logging
import Moments
import PostgresNIO
import PostgresStore

/// The catalog in PostgreSQL, for workers on several machines sharing one database: the same
/// records, moments and outbox as the SQLite `Catalog`, behind the same `PictureCatalog` seam.
///
/// Moments stay right under concurrency by running every write as a SERIALIZABLE transaction:
/// the server lets through only what some one-at-a-time order would have produced, and a
/// transaction that lost a race is run again from the start, alone (see `write`). Photos far
/// apart in space or time touch different index pages and commit side by side; photos of one
/// event collide, and their retries queue one at a time instead of colliding again. The
/// moments engine is the same code as on SQLite.
public final class PostgresCatalog: Sendable {
    /// Where the catalog lives (without its password).
    public let location: PostgresLocation
    /// The moment rules applied when pictures arrive and moments are declared.
    public let momentRules: MomentRules
    let pool: PostgresPool
    /// Connections whose commits do not wait for the disk (`synchronous_commit` off), for the
    /// shared queue's admissions, claims and renewals: should the server crash and lose one, a
    /// lapsed lease or the reconciliation of `queued/` covers it. A photo's commit never runs here.
    let leasePool: PostgresPool
    /// Whether the database answers, probed once a process asks (`availability`).
    let monitor: PostgresAvailability

    /// The advisory lock every write holds: shared on its first try, exclusive on a retry.
    static let assignerLock: Int64 = 7_261_900_914
    /// How many times a write is tried before it is reported as busy (a retry runs alone, so
    /// a second try fails only when the server itself fails).
    static let writeTries = 4

    /// Connects (at most `maximumConnections` at once) and migrates the catalog at `location`.
    /// `deadlines`: how long a connection, a statement and a transaction may take before the
    /// database is given up as unreachable for that call.
    public init(location: PostgresLocation, momentRules: MomentRules = .default, maximumConnections: Int = 8,
                deadlines: PostgresDeadlines = .standard, logger: Logger = Logger(label: "darkroom.catalog")) throws(CatalogError) {
        self.location = location
        self.momentRules = momentRules
        do {
            // A commit is durable before it is acknowledged, whatever the server's default: the
            // worker removes a photo from the spool once its commit is acknowledged.
            pool = try PostgresPool(location: location, maximumConnections: maximumConnections,
                                    settings: [("synchronous_commit", "on")], deadlines: deadlines, logger: logger)
            leasePool = try PostgresPool(location: location, maximumConnections: max(2, maximumConnections / 4),
                                         settings: [("synchronous_commit", "off")], deadlines: deadlines, logger: logger)
            monitor = try PostgresAvailability(location: location, logger: logger)
        } catch {
            throw CatalogError.refused(error.description)
        }
        do {
            try PostgresCatalogSchema.migrations.apply(to: pool)
        } catch {
            throw Self.catalogError(error, location: location)
        }
    }

    /// Opens the catalog at a `postgres://` address.
    public convenience init(url: String, momentRules: MomentRules = .default, maximumConnections: Int = 8,
                            deadlines: PostgresDeadlines = .standard) throws(CatalogError) {
        let location: PostgresLocation
        do {
            location = try PostgresLocation(url)
        } catch {
            throw CatalogError.refused(error.description)
        }
        try self.init(location: location, momentRules: momentRules, maximumConnections: maximumConnections, deadlines: deadlines)
    }

    /// Closes the connections.
    public func close() {
        monitor.stop()
        pool.close()
        leasePool.close()
    }

    /// The names of the migrations applied, oldest first.
    public func appliedMigrations() throws(CatalogError) -> [String] {
        do {
            return try PostgresMigrations.applied(in: pool)
        } catch {
            throw Self.catalogError(error, location: location)
        }
    }

    /// Runs `body` in one SERIALIZABLE write transaction; with `commit` false it is rolled back
    /// (a dry run).
    ///
    /// A first try holds the assigner's lock shared, beside every other first try, until its
    /// transaction ends. A transaction that lost a race is run again holding it exclusively: it
    /// waits for the shared holders to finish, new first tries wait behind it, and alone it
    /// cannot lose again. The exclusive lock is taken before BEGIN, so the retry's snapshot is
    /// taken after everything it waited for has committed. Under heavy contention the catalog thus degrades to one writer
    /// at a time, as SQLite is, and never fails a photo for contention alone.
    func write<T>(commit: Bool = true, deadlines: PostgresDeadlines? = nil, _ body: (PostgresSession) throws -> T) throws(CatalogError) -> T {
        var attempt = 1
        while true {
            let exclusive = attempt > 1
            do {
                return try pool.withSession(deadlines: deadlines) { session in
                    guard exclusive else {
                        // Held until the transaction ends: no statement to give it back.
                        return try session.transaction(.serializable, commit: commit) { session in
                            try session.send("SELECT pg_advisory_xact_lock_shared(\(Self.assignerLock))")
                            return try body(session)
                        }
                    }
                    try session.execute("SELECT pg_advisory_lock(\(Self.assignerLock))")
                    defer { try? session.execute("SELECT pg_advisory_unlock(\(Self.assignerLock))") }
                    return try session.transaction(.serializable, commit: commit) { try body($0) }
                }
            } catch {
                let failure = PostgresError(error)
                let lostARace = (failure.isRetryable || failure.isUniqueViolation) && !(error is CatalogError) && !(error is MomentError)
                guard lostARace, attempt < Self.writeTries else { throw Self.catalogError(error, location: location) }
                attempt += 1
            }
        }
    }

    /// Runs `body`, one statement (consistent by itself), outside any transaction: one round
    /// trip instead of three.
    func readOne<T>(_ body: (PostgresSession) throws -> T) throws(CatalogError) -> T {
        do {
            return try pool.withSession { session in try body(session) }
        } catch {
            throw Self.catalogError(error, location: location)
        }
    }

    /// Runs `body`, one statement, on a connection of the lease pool (commits that do not wait
    /// for the disk).
    func leased<T>(_ body: (PostgresSession) throws -> T) throws(CatalogError) -> T {
        do {
            return try leasePool.withSession { session in try body(session) }
        } catch {
            throw Self.catalogError(error, location: location)
        }
    }

    /// Runs `body` on one consistent snapshot (a read-only REPEATABLE READ transaction).
    func read<T>(_ body: (PostgresSession) throws -> T) throws(CatalogError) -> T {
        do {
            return try pool.transaction(.repeatableRead) { session in try body(session) }
        } catch {
            throw Self.catalogError(error, location: location)
        }
    }

    /// Any error of a catalog call as the `CatalogError` the worker classifies.
    public static func catalogError(_ error: any Error, location: PostgresLocation) -> CatalogError {
        if let error = error as? CatalogError { return error }
        if let error = error as? MomentError { return .rule(error) }
        let failure = PostgresError(error)
        switch failure {
        case .badLocation: return .refused(failure.description)
        case .unreachable: return .unavailable(failure.description)
        case .statement where failure.isRetryable: return .busy(path: location.description)
        case .statement: return .other("\(failure.description) in catalog \(location)")
        }
    }

    /// The column of a record's property, as in SQLite.
    static let column: @Sendable (String) -> String = { ColumnName.snakeCase($0) }

    /// A record read from a row of its table.
    static func record<R: Decodable>(_ type: R.Type, _ row: PostgresRow) throws -> R {
        try PostgresRowCoding.decode(type, from: row, naming: column)
    }
}
