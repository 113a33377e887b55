import Foundation
import NIOSSL
import PostgresNIO

/// Where a PostgreSQL database is: `postgres://user[:password]@host[:port]/database[?sslmode=...]`.
/// The password comes from the address (its reserved characters, `#` `/` `?` `@` `%` ...,
/// percent-encoded), else from `PGPASSWORD`. `sslmode=require` (or
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

    /// Reads an address; a one-line error says what is wrong with it, and never shows the
    /// password (masked as `***`).
    public init(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(PostgresError) {
        let shown = Self.redacted(text)
        guard let scheme = text.range(of: "://"), ["postgres", "postgresql"].contains(text[..<scheme.lowerBound]) else {
            throw .badLocation(shown, reason: "it does not start with postgres://")
        }
        // The user information is what comes before the last '@': a raw '/', '?' or '#' in a
        // password would end it early for a URL parser, which then reads the rest as the host.
        let remainder = text[scheme.upperBound...]
        if let at = remainder.lastIndex(of: "@") {
            let userInfo = remainder[..<at]
            let colon = userInfo.firstIndex(of: ":")
            if let colon, let bad = Self.reservedCharacter(in: userInfo[userInfo.index(after: colon)...]) {
                throw .badLocation(shown, reason: "its password holds a reserved character (\(bad)); percent-encode it "
                    + "(# as %23, / as %2F, @ as %40, ...) or leave the password out of the address and set PGPASSWORD")
            }
            if let bad = Self.reservedCharacter(in: userInfo[..<(colon ?? userInfo.endIndex)]) {
                throw .badLocation(shown, reason: "its user name holds a reserved character (\(bad)); percent-encode it (# as %23, / as %2F, @ as %40, ...)")
            }
        }
        guard let components = URLComponents(string: text) else {
            throw .badLocation(shown, reason: "it cannot be read as an address; check the host and the port")
        }
        guard let host = components.host, !host.isEmpty else { throw .badLocation(shown, reason: "it names no host") }
        guard let user = components.user, !user.isEmpty else { throw .badLocation(shown, reason: "it names no user") }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw .badLocation(shown, reason: "it names no database (the path after the host)")
        }
        let port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw .badLocation(shown, reason: "the port is out of range") }
        var tls = TLSMode.prefer
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode" else {
                throw .badLocation(shown, reason: "'\(item.name)' is not an option Darkroom reads (only sslmode)")
            }
            switch item.value ?? "" {
            case "disable": tls = .disable
            case "require", "verify-ca", "verify-full": tls = .require
            case "allow", "prefer": tls = .prefer
            default: throw .badLocation(shown, reason: "sslmode '\(item.value ?? "")' is not one of disable, prefer, require")
            }
        }
        var password = environment["PGPASSWORD"]
        if let encoded = components.percentEncodedPassword {
            guard let decoded = encoded.removingPercentEncoding else {
                throw .badLocation(shown, reason: "its password's percent-encoding is not UTF-8 text; "
                    + "leave the password out of the address and set PGPASSWORD")
            }
            password = decoded
        }
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.tls = tls
    }

    /// The address without its password: what logs and errors show.
    public var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    /// `text` with anything that may be a password replaced by `***`, however malformed the
    /// text: what follows the first ':' of the user information (up to the last '@'), and the
    /// value of a `password=` option.
    static func redacted(_ text: String) -> String {
        var result = text
        if let at = result.lastIndex(of: "@") {
            let start = result.range(of: "://").flatMap { $0.upperBound <= at ? $0.upperBound : nil } ?? result.startIndex
            if let colon = result[start..<at].firstIndex(of: ":") {
                result.replaceSubrange(result.index(after: colon)..<at, with: "***")
            }
        }
        // libpq also reads a password from the options: `?password=...`.
        if let option = try? NSRegularExpression(pattern: "(password=)[^&#]*", options: .caseInsensitive) {
            result = option.stringByReplacingMatches(in: result, range: NSRange(result.startIndex..., in: result), withTemplate: "$1***")
        }
        return result
    }

    /// The first character of a URL's user information that must be percent-encoded there, as
    /// an error shows it (`'#'`, `'%' not followed by two hex digits`); nil when there is none.
    static func reservedCharacter(in text: Substring) -> String? {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:".unicodeScalars)
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "%" {
                let isHex: (Int) -> Bool = { $0 < scalars.count && scalars[$0].properties.isASCIIHexDigit }
                guard isHex(index + 1), isHex(index + 2) else { return "'%' not followed by two hex digits" }
                index += 3
                continue
            }
            if !allowed.contains(scalar) {
                return (0x20..<0x7F).contains(scalar.value)
                    ? "'\(scalar)'" : String(format: "U+%04X", scalar.value)
            }
            index += 1
        }
        return nil
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
