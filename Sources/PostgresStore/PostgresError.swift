import Failures
import Foundation
import NIOCore
import NIOPosix
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

    /// The exit status of a command that ends on this error (sysexits.h): 78 (EX_CONFIG) for an
    /// address that cannot be used, 69 (EX_UNAVAILABLE) for a server that cannot be reached,
    /// 70 (EX_SOFTWARE) for a statement that failed.
    public var exitCode: Int32 {
        switch self {
        case .badLocation: 78
        case .unreachable: 69
        case .statement: 70
        }
    }

    /// A failure to connect to `location` (an error of `PostgresConnection.connect`), as
    /// `.unreachable` with the real reason in one line: the server's message (a wrong
    /// password, a database that does not exist), what the network said (connection refused,
    /// an unknown host, no answer in time), or a password the server asked for and none was
    /// given. A `PostgresError` is kept as it is.
    public static func connectionFailure(_ error: any Error, location: PostgresLocation) -> PostgresError {
        if let error = error as? PostgresError { return error }
        return .unreachable(location.description, reason: connectionReason(error, location: location))
    }

    /// Why a connection failed, in words, never with the password.
    static func connectionReason(_ error: any Error, location: PostgresLocation) -> String {
        switch error {
        case let error as PSQLError:
            if let message = error.serverInfo?[.message] { return oneLine(message) }
            let underlying = error.underlying.map { connectionReason($0, location: location) }
            switch error.code {
            case .authMechanismRequiresPassword:
                return location.password == nil
                    ? "the server asked for a password and none was given (put it in the address or PGPASSWORD)"
                    : "the server asked for a password and refused the one given"
            case .unsupportedAuthMechanism:
                return "the server asks for an authentication method the driver does not support; "
                    + "allow scram-sha-256, md5 or password for this user in pg_hba.conf"
            case .saslError:
                return "SCRAM authentication failed" + (underlying.map { " (\($0))" } ?? "")
            case .sslUnsupported:
                return "the server does not offer TLS, which sslmode=require asks for"
            case .failedToAddSSLHandler:
                return "TLS could not be set up" + (underlying.map { " (\($0))" } ?? "")
            case .receivedUnencryptedDataAfterSSLRequest, .messageDecodingFailure, .unexpectedBackendMessage:
                return "the answer was not PostgreSQL's; check the host and the port"
            case .serverClosedConnection, .uncleanShutdown:
                return "the server closed the connection" + (underlying.map { " (\($0))" } ?? "")
            case .connectionError:
                return underlying ?? "the connection failed"
            default:
                return "\(error.code)" + (underlying.map { " (\($0))" } ?? "")
            }
        case let error as NIOConnectionError:
            if let failure = error.dnsAError ?? error.dnsAAAAError {
                let detail = (failure as? SocketAddressError.UnknownHost)?.errorDescription.lowercased()
                    ?? connectionReason(failure, location: location)
                return "cannot resolve host '\(error.host)' (\(detail))"
            }
            guard !error.connectionErrors.isEmpty else { return "no address found for host '\(error.host)'" }
            return error.connectionErrors.map { failure in
                let address = failure.target.ipAddress.map { "\($0):\(failure.target.port ?? error.port)" } ?? "\(failure.target)"
                return "\(connectionReason(failure.error, location: location)) (\(address))"
            }.joined(separator: "; ")
        case let error as IOError:
            return errnoText(error.errnoCode)
        case let error as SocketAddressError.UnknownHost:
            return "cannot resolve host '\(error.host)' (\(error.errorDescription.lowercased()))"
        case let error as ChannelError:
            if case .connectTimeout(let limit) = error {
                return "no answer within \(Double(limit.nanoseconds) / 1e9) s"
            }
            return oneLine("\(error)")
        default:
            return oneLine(String(describing: error))
        }
    }

    /// An errno's text with a lower-case start (`connection refused`).
    static func errnoText(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        guard let first = text.first else { return "errno \(code)" }
        return first.lowercased() + text.dropFirst()
    }

    private static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}

