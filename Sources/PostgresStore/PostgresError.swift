import Failures
import PostgresNIO

/// Why PostgreSQL could not do what was asked; each case carries its category where it is made.
public enum PostgresError: Error, CategorizedError, CustomStringConvertible, Sendable, Equatable {
    /// The `postgres://` address cannot be used (what is wrong with it).
    case badLocation(String, reason: String)
    /// No connection could be made (the server is down, refuses, or the password is wrong).
    case unreachable(String, reason: String)
    /// The server refused or failed a statement: its message and SQLSTATE code.
    case statement(String, sqlState: String?)

    public var category: FailureCategory {
        switch self {
        case .badLocation: .configuration
        case .unreachable, .statement: .catalog
        }
    }

    /// A failure that the same work may not meet again: a serializable transaction that lost a
    /// race (40001), a deadlock (40P01), or a server that could not be reached.
    public var isRetryable: Bool {
        switch self {
        case .badLocation: false
        case .unreachable: true
        case .statement(_, let state): state == "40001" || state == "40P01"
        }
    }

    /// A unique constraint refused a row (23505): another transaction wrote the same key first.
    public var isUniqueViolation: Bool {
        if case .statement(_, "23505") = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .badLocation(let text, let reason):
            "the PostgreSQL address '\(text)' cannot be used: \(reason) (expected postgres://user[:password]@host[:port]/database)"
        case .unreachable(let location, let reason):
            "cannot connect to PostgreSQL at \(location): \(reason); check that the server runs and the address, user and password"
        case .statement(let message, let state): "PostgreSQL: \(message)" + (state.map { " (SQLSTATE \($0))" } ?? "")
        }
    }

    /// The driver's error in one line, with the server's message and code where it sent them.
    public init(_ error: any Error) {
        if let error = error as? PostgresError {
            self = error
        } else if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                self = .statement(message, sqlState: error.serverInfo?[.sqlState])
            } else {
                self = .statement("\(error.code)", sqlState: nil)
            }
        } else {
            self = .statement(String(describing: error), sqlState: nil)
        }
    }
}
