import Foundation
import Logging
import PostgresHarness
import PostgresNIO
import PostgresStore
import Testing

/// Passwords in `postgres://` addresses: reserved characters refused, never shown.
@Suite("PostgreSQL locations: passwords")
struct PostgresLocationPasswordTests {
    /// The error `PostgresLocation(text)` throws; nil when it reads the address.
    func refusal(_ text: String) -> PostgresStore.PostgresError? {
        do {
            _ = try PostgresLocation(text, environment: [:])
            return nil
        } catch {
            return error
        }
    }

    @Test("a raw reserved character in the password is refused with the address masked", arguments: [
        ("postgres://darkroom:Sec#ret9@db.internal:6543/photos", "'#'", ["Sec", "ret9"]),
        ("postgres://darkroom:Sec/ret9@db.internal:6543/photos", "'/'", ["Sec", "ret9"]),
        ("postgres://darkroom:Sec?ret9@db.internal/photos", "'?'", ["Sec", "ret9"]),
        ("postgres://darkroom:Sec@ret9@db.internal/photos?sslmode=require", "'@'", ["Sec", "ret9"]),
        ("postgresql://darkroom:Sec%zzret9@db.internal/photos", "'%' not followed by two hex digits", ["Sec", "zzret9"]),
        ("postgres://darkroom:Sec ret9@db.internal/photos", "' '", ["Sec", "ret9"]),
        ("postgres://darkroom:S:e/c#r?e@t9@db.internal/photos", "'/'", ["S:e", "c#r", "e@t9"]),
    ])
    func refusesReservedCharacters(_ text: String, _ named: String, _ secrets: [String]) throws {
        let error = try #require(refusal(text))
        guard case .badLocation(let shown, let reason) = error else {
            Issue.record("not a bad location: \(error)")
            return
        }
        #expect(shown.hasSuffix(":***@db.internal:6543/photos") || shown.hasPrefix("postgres://darkroom:***@db.internal/photos")
                || shown.hasPrefix("postgresql://darkroom:***@db.internal/photos"))
        #expect(reason.hasPrefix("its password holds a reserved character (\(named)); percent-encode it"))
        #expect(reason.hasSuffix("or leave the password out of the address and set PGPASSWORD"))
        #expect(error.category == .configuration && error.exitCode == 78)
        #expect(!error.description.contains("\n"))
        for secret in secrets { #expect(!error.description.contains(secret), "\(secret) shown in: \(error.description)") }
    }

    @Test("other refusals mask the password too, however broken the address", arguments: [
        "postgres://darkroom:Secret9@db.internal:99999/photos",
        "postgres://darkroom:Secret9@db.internal:port/photos",
        "postgres://darkroom:Secret9@db.internal",
        "postgres://darkroom:Secret9@db.internal/photos?sslmode=sometimes",
        "postgres://darkroom:Secret9@db.internal/photos?password=Secret9",
        "mysql://darkroom:Secret9@db.internal/photos",
        "darkroom:Secret9@db.internal/photos",
        "postgres://darkroom:Secret9@/photos",
        "postgres://darkroom:Secret9%FF@db.internal/photos",
    ])
    func masksEveryRefusal(_ text: String) throws {
        let error = try #require(refusal(text))
        #expect(error.category == .configuration)
        #expect(!error.description.contains("Secret9"), "the password shown in: \(error.description)")
        #expect(error.description.contains("***"))
    }

    @Test("a percent-encoded password is accepted and decoded")
    func decodesPercentEncoding() throws {
        let location = try PostgresLocation("postgres://darkroom:Sec%23r%2Fe%3Ft%40%25x@db.internal/photos", environment: ["PGPASSWORD": "env"])
        #expect(location.password == "Sec#r/e?t@%x")
        #expect(location.user == "darkroom" && location.host == "db.internal" && location.port == 5432 && location.database == "photos")
        #expect(!location.description.contains("Sec"))
        let encodedUser = try PostgresLocation("postgres://dark%40room@db.internal/photos", environment: [:])
        #expect(encodedUser.user == "dark@room" && encodedUser.password == nil)
    }

    @Test("PGPASSWORD is the password when the address holds none")
    func passwordFromTheEnvironment() throws {
        let location = try PostgresLocation("postgres://darkroom@db.internal/photos", environment: ["PGPASSWORD": "S#c/r@t"])
        #expect(location.password == "S#c/r@t")
        #expect(try PostgresLocation("postgres://darkroom@db.internal/photos", environment: [:]).password == nil)
        // One in the address wins.
        #expect(try PostgresLocation("postgres://darkroom:mine@db.internal/photos", environment: ["PGPASSWORD": "env"]).password == "mine")
    }
}

/// `PostgresError.connectionFailure`: the real reason a connection failed.
@Suite("PostgreSQL connection failures")
struct PostgresConnectionFailureTests {
    /// The error of one connection attempt to `location`, as `connectionFailure` words it.
    static func failure(_ location: PostgresLocation) async throws -> PostgresStore.PostgresError? {
        do {
            let connection = try await PostgresConnection.connect(configuration: try location.connectionConfiguration(), id: 1,
                                                                  logger: Logger(label: "test"))
            try await connection.close()
            return nil
        } catch {
            return PostgresStore.PostgresError.connectionFailure(error, location: location)
        }
    }

    @Test("a closed port: connection refused, with the address tried")
    func connectionRefused() async throws {
        let port = try TemporaryCluster.freePort()
        let location = try PostgresLocation("postgres://darkroom:Secret9@127.0.0.1:\(port)/x?sslmode=disable", environment: [:])
        let error = try #require(try await Self.failure(location))
        #expect(error == .unreachable("postgres://darkroom@127.0.0.1:\(port)/x", reason: "connection refused (127.0.0.1:\(port))"))
        #expect(error.exitCode == 69 && error.category == .catalog)
        #expect(error.description.hasPrefix("cannot connect to PostgreSQL at postgres://darkroom@127.0.0.1:\(port)/x: connection refused"))
        #expect(!error.description.contains("Secret9") && !error.description.contains("PSQLError"))
    }

    @Test("an unknown host is named")
    func unknownHost() async throws {
        let location = try PostgresLocation("postgres://darkroom@no-such-host.invalid/x?sslmode=disable", environment: [:])
        let error = try #require(try await Self.failure(location))
        guard case .unreachable(_, let reason) = error else { throw error }
        #expect(reason.contains("no-such-host.invalid"), "\(reason)")
        #expect(!reason.contains("PSQLError") && !reason.contains("\n"))
    }

    @Test("a PostgresError is kept as it is; other errors keep their own words")
    func keepsOtherErrors() throws {
        let location = try PostgresLocation("postgres://darkroom@127.0.0.1/x", environment: [:])
        let bad = PostgresStore.PostgresError.badLocation("x", reason: "y")
        #expect(PostgresStore.PostgresError.connectionFailure(bad, location: location) == bad)
        struct Odd: Error, CustomStringConvertible { var description: String { "odd\nthing" } }
        #expect(PostgresStore.PostgresError.connectionFailure(Odd(), location: location) == .unreachable(location.description, reason: "odd thing"))
    }

    @Test("a server that wants a password: the wrong one, or none given, is said so",
          .enabled(if: SharedCluster.available, QueueCluster.skipReason))
    func passwordRefusals() async throws {
        let cluster = try SharedCluster.cluster.get()
        let role = "pw_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(10).lowercased()
        let pool = try PostgresPool(location: try PostgresLocation(cluster.url()), maximumConnections: 1)
        defer { pool.close() }
        try pool.withSession { session in
            try session.execute(PostgresQuery(unsafeSQL: "CREATE ROLE \(role) LOGIN PASSWORD 'right-one'"))
        }
        // Only this role must give a password (the cluster trusts everyone else).
        let hba = cluster.directory.appendingPathComponent("data/pg_hba.conf")
        let rules = try String(contentsOf: hba, encoding: .utf8)
        try ("host all \(role) 127.0.0.1/32 scram-sha-256\n" + rules).write(to: hba, atomically: false, encoding: .utf8)
        try pool.withSession { session in try session.execute("SELECT pg_reload_conf()") }
        try await Task.sleep(for: .milliseconds(300))

        let base = "postgres://\(role)%@127.0.0.1:\(cluster.port)/postgres?sslmode=disable"
        let wrong = try #require(try await Self.failure(try PostgresLocation(base.replacingOccurrences(of: "%", with: ":wrong-one"), environment: [:])))
        guard case .unreachable(_, let wrongReason) = wrong else { throw wrong }
        #expect(wrongReason == "password authentication failed for user \"\(role)\"")
        #expect(!wrong.description.contains("wrong-one"))

        let none = try #require(try await Self.failure(try PostgresLocation(base.replacingOccurrences(of: "%", with: ""), environment: [:])))
        #expect(none == .unreachable("postgres://\(role)@127.0.0.1:\(cluster.port)/postgres",
                                     reason: "the server asked for a password and none was given (put it in the address or PGPASSWORD)"))

        let right = try PostgresLocation(base.replacingOccurrences(of: "%", with: ""), environment: ["PGPASSWORD": "right-one"])
        #expect(try await Self.failure(right) == nil)
    }
}
