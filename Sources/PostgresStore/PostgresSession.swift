import Logging
import PostgresNIO

/// One borrowed connection, used synchronously: each statement is sent and its rows collected
/// before the call returns. Values go to the server as bound parameters (the interpolations of
/// a `PostgresQuery` literal), never spliced into the text.
public struct PostgresSession {
    /// A transaction's isolation level.
    public enum Isolation: String, Sendable {
        case readCommitted = "READ COMMITTED"
        case repeatableRead = "REPEATABLE READ"
        case serializable = "SERIALIZABLE"
    }

    let connection: PostgresConnection
    let logger: Logger

    /// Every row the statement returns.
    @discardableResult
    public func rows(_ query: PostgresQuery) throws(PostgresError) -> [PostgresRow] {
        do {
            return Array(try connection.query(query, logger: logger).wait().rows)
        } catch let error as PSQLError where error.serverInfo == nil {
            throw .unreachable("\(connection.id)", reason: "\(error.code): \(error.underlying.map { "\($0)" } ?? "no detail")")
        } catch {
            throw PostgresError(error)
        }
    }

    /// Runs a statement whose rows, if any, are not wanted.
    public func execute(_ query: PostgresQuery) throws(PostgresError) {
        try rows(query)
    }

    /// The first column of the first row, nil when there is no row (or the value is null).
    public func value<T: PostgresDecodable>(_ query: PostgresQuery, as type: T.Type = T.self) throws(PostgresError) -> T? {
        guard let row = try rows(query).first, let cell = row.first(where: { _ in true }), cell.bytes != nil else { return nil }
        do {
            return try cell.decode(T.self)
        } catch {
            throw PostgresError(error)
        }
    }

    /// The first column of every row.
    public func values<T: PostgresDecodable>(_ query: PostgresQuery, as type: T.Type = T.self) throws(PostgresError) -> [T] {
        do {
            return try rows(query).compactMap { row in try row.first(where: { _ in true })?.decode(T.self) }
        } catch let error as PostgresError {
            throw error
        } catch {
            throw PostgresError(error)
        }
    }

    /// Runs `body` between BEGIN and COMMIT (ROLLBACK when it throws, or always with `commit`
    /// false) at `isolation`.
    public func transaction<T>(_ isolation: Isolation, commit: Bool = true, _ body: (PostgresSession) throws -> T) throws -> T {
        try execute(PostgresQuery(unsafeSQL: "BEGIN ISOLATION LEVEL \(isolation.rawValue)"))
        let result: T
        do {
            result = try body(self)
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        do {
            try execute(commit ? "COMMIT" : "ROLLBACK")
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        return result
    }
}
