import PostgresHarness
import PostgresNIO
import PostgresStore
import Testing

/// A statement sent without waiting (`PostgresSession.send`) must not fail silently: its
/// failure comes with the next statement that waits, as its own error (not the "transaction
/// is aborted" of what followed it), and a transaction whose sent write failed never commits.
@Suite("Statements sent without waiting", .enabled(if: SharedCluster.available, Comment(rawValue: SharedCluster.skipReason)))
struct PostgresSessionTests {
    static func pool() throws -> PostgresPool {
        let pool = try PostgresPool(location: try SharedCluster.freshDatabase(), maximumConnections: 2)
        try pool.withSession { session in
            try session.execute("CREATE TABLE notes (id bigint PRIMARY KEY, body text NOT NULL)")
        }
        return pool
    }

    static func count(_ pool: PostgresPool) throws -> Int64 {
        try pool.withSession { session in try session.value("SELECT COUNT(*) FROM notes", as: Int64.self) ?? -1 }
    }

    @Test("a sent write's failure is thrown by the next statement that waits, with its own code")
    func aSentFailureComesWithTheNextWait() throws {
        let pool = try Self.pool()
        defer { pool.close() }
        let thrown = #expect(throws: PostgresStore.PostgresError.self) {
            try pool.transaction { session in
                try session.send("INSERT INTO notes (id, body) VALUES (1, 'first')")
                try session.send("INSERT INTO notes (id, body) VALUES (1, 'the same key')")
                try session.send("INSERT INTO notes (id, body) VALUES (2, 'after the failure')")
                _ = try session.value("SELECT COUNT(*) FROM notes", as: Int64.self)
            }
        }
        #expect(thrown?.isUniqueViolation == true, "\(String(describing: thrown))")
        #expect(try Self.count(pool) == 0)
    }

    @Test("a transaction whose last statements were only sent commits them, or throws and keeps none")
    func commitWaitsForWhatWasSent() throws {
        let pool = try Self.pool()
        defer { pool.close() }
        // More than the session lets wait unanswered at once.
        try pool.transaction { session in
            for id in 1...600 { try session.send("INSERT INTO notes (id, body) VALUES (\(Int64(id)), 'note')") }
        }
        #expect(try Self.count(pool) == 600)

        let thrown = #expect(throws: PostgresStore.PostgresError.self) {
            try pool.transaction { session in
                try session.send("INSERT INTO notes (id, body) VALUES (601, 'new')")
                try session.send("INSERT INTO notes (id, body) VALUES (602, NULL)")
            }
        }
        #expect(thrown.map { "\($0)" }?.contains("23502") == true, "a not-null violation: \(String(describing: thrown))")
        #expect(try Self.count(pool) == 600)
        // The connection is usable again afterwards.
        try pool.transaction { session in try session.send("INSERT INTO notes (id, body) VALUES (603, 'later')") }
        #expect(try Self.count(pool) == 601)
    }
}
