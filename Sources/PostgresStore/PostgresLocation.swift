import Foundation
import NIOSSL
import PostgresNIO

/// Where a PostgreSQL database is: `postgres://user[:password]@host[:port]/database[?sslmode=...]`.
/// The password comes from the address, else from `PGPASSWORD`. `sslmode=require` (or
/// `verify-ca`, `verify-full`) makes TLS required; `disable` turns it off; `prefer` (the
/// default, as libpq's) uses it when the server offers it.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    public enum TLSMode: String, Sendable, Equatable {
        case disable, prefer, require
    }

    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var tls: TLSMode

    /// Whether `text` is meant as a PostgreSQL address (rather than an SQLite file's path).
    public static func isAddress(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Reads an address; a one-line error says what is wrong with it.
    public init(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(PostgresError) {
        guard let components = URLComponents(string: text), ["postgres", "postgresql"].contains(components.scheme ?? "") else {
            throw .badLocation(Self.redacted(text), reason: "it does not start with postgres://")
        }
        guard let host = components.host, !host.isEmpty else { throw .badLocation(Self.redacted(text), reason: "it names no host") }
        guard let user = components.user, !user.isEmpty else { throw .badLocation(Self.redacted(text), reason: "it names no user") }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw .badLocation(Self.redacted(text), reason: "it names no database (the path after the host)")
        }
        let port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw .badLocation(Self.redacted(text), reason: "the port is out of range") }
        var tls = TLSMode.prefer
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode" else {
                throw .badLocation(Self.redacted(text), reason: "'\(item.name)' is not an option Darkroom reads (only sslmode)")
            }
            switch item.value ?? "" {
            case "disable": tls = .disable
            case "require", "verify-ca", "verify-full": tls = .require
            case "allow", "prefer": tls = .prefer
            default: throw .badLocation(Self.redacted(text), reason: "sslmode '\(item.value ?? "")' is not one of disable, prefer, require")
            }
        }
        self.host = host
        self.port = port
        self.user = user
        self.password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding } ?? environment["PGPASSWORD"]
        self.database = database
        self.tls = tls
    }

    /// The address without its password: what logs and errors show.
    public var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    /// `text` with any password replaced by `***`.
    static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.password != nil else { return text }
        components.password = "***"
        return components.string ?? text
    }

    /// This location with another database name (tests and `catalog copy` make databases).
    public func database(_ name: String) -> PostgresLocation {
        var copy = self
        copy.database = name
        return copy
    }

    /// The pooled client's configuration (the async API: the queue).
    public var clientConfiguration: PostgresClient.Configuration {
        PostgresClient.Configuration(host: host, port: port, username: user, password: password, database: database, tls: clientTLS)
    }

    /// One connection's configuration (the blocking API: the catalog). With `require`, a TLS
    /// context that cannot be made (no system trust store) is an error; `prefer` then goes on
    /// without TLS.
    public func connectionConfiguration() throws(PostgresError) -> PostgresConnection.Configuration {
        let mode: PostgresConnection.Configuration.TLS
        switch tls {
        case .disable:
            mode = .disable
        case .prefer:
            mode = (try? NIOSSLContext(configuration: .makeClientConfiguration())).map { .prefer($0) } ?? .disable
        case .require:
            do {
                mode = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            } catch {
                throw .badLocation(description, reason: "sslmode=require, but no TLS context could be made (\(error))")
            }
        }
        return PostgresConnection.Configuration(host: host, port: port, username: user, password: password, database: database, tls: mode)
    }

    private var clientTLS: PostgresClient.Configuration.TLS {
        switch tls {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
        }
    }
}
