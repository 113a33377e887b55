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

    // MARK: Held writes

    static func body(_ session: PostgresSession, _ id: Int64) throws -> String? {
        try session.value("SELECT body FROM notes WHERE id = \(id)", as: String.self)
    }

    @Test("a held write runs before the next statement, unless that statement is declared not to read its row")
    func aHeldWriteRunsBeforeWhatFollowsIt() throws {
        let pool = try Self.pool()
        defer { pool.close() }
        try pool.transaction { session in
            try session.send("INSERT INTO notes (id, body) VALUES (1, 'one'), (2, 'two')")
            session.hold("UPDATE notes SET body = 'one, held' WHERE id = 1", key: 1)
            // A read that does not touch row 1 passes it: it still sees the row as it was.
            let passing = try session.rows("SELECT body FROM notes WHERE id = 1", unaffectedBy: 1).map { try $0.decode(String.self) }
            #expect(passing == ["one"])
            // Declared unaffected by another row, a read sends the held write first.
            let after = try session.rows("SELECT body FROM notes WHERE id = 1", unaffectedBy: 2).map { try $0.decode(String.self) }
            #expect(after == ["one, held"])
            #expect(!session.takeHeld(key: 1), "it was sent, so there is nothing left to take")

            // A write sent after a held one runs after it.
            session.hold("UPDATE notes SET body = 'two, held' WHERE id = 2", key: 2)
            try session.send("UPDATE notes SET body = body || ', then sent' WHERE id = 2")
            #expect(try Self.body(session, 2) == "two, held, then sent")

            // A second hold sends the first.
            session.hold("UPDATE notes SET body = 'first hold' WHERE id = 1", key: 1)
            session.hold("UPDATE notes SET body = 'second hold' WHERE id = 2", key: 2)
            #expect(!session.takeHeld(key: 1))
            #expect(try Self.body(session, 1) == "first hold")

            // The COMMIT sends what is still held.
        }
        #expect(try pool.withSession { try Self.body($0, 2) } == "second hold")
    }

    @Test("a taken held write never runs; one held at a failure is dropped with the transaction; one that fails is thrown at the commit")
    func aHeldWriteIsTakenDroppedOrThrown() throws {
        let pool = try Self.pool()
        defer { pool.close() }
        try pool.transaction { session in
            try session.send("INSERT INTO notes (id, body) VALUES (1, 'one')")
            session.hold("UPDATE notes SET body = 'held' WHERE id = 1", key: 1)
            #expect(!session.takeHeld(key: 2), "only the write of its own row is taken")
            #expect(session.takeHeld(key: 1))
            try session.send("UPDATE notes SET body = 'instead' WHERE id = 1")
        }
        #expect(try pool.withSession { try Self.body($0, 1) } == "instead")

        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try pool.transaction { session in
                session.hold("UPDATE notes SET body = 'never' WHERE id = 1", key: 1)
                throw Stop()
            }
        }
        #expect(try pool.withSession { try Self.body($0, 1) } == "instead")

        let thrown = #expect(throws: PostgresStore.PostgresError.self) {
            try pool.transaction { session in
                session.hold("UPDATE notes SET body = NULL WHERE id = 1", key: 1)
            }
        }
        #expect(thrown.map { "\($0)" }?.contains("23502") == true, "a not-null violation: \(String(describing: thrown))")
        #expect(try pool.withSession { try Self.body($0, 1) } == "instead")
    }

    // MARK: A record with the rows that refer to it, in one statement

    struct Parent: Encodable {
        var key: String
        var title: String
    }

    struct Child: Encodable {
        var parentId: Int64
        var name: String
        var size: Int64?
    }

    static let naming: @Sendable (String) -> String = { name in
        name.reduce(into: "") { out, character in
            if character.isUppercase { out += "_" + character.lowercased() } else { out.append(character) }
        }
    }

    @Test("a record's insert with the rows that refer to it: all of them with its id, or none when it conflicts")
    func aRecordWithItsDependentsInOneStatement() throws {
        let pool = try PostgresPool(location: try SharedCluster.freshDatabase(), maximumConnections: 1)
        defer { pool.close() }
        try pool.withSession { session in
            try session.execute("CREATE TABLE parents (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, key text UNIQUE NOT NULL, title text NOT NULL)")
            try session.execute("CREATE TABLE children (parent_id bigint NOT NULL REFERENCES parents (id), name text NOT NULL, size bigint)")
            try session.execute("CREATE TABLE others (parent_id bigint NOT NULL REFERENCES parents (id), name text NOT NULL)")
        }
        func insert(_ parent: Parent, _ children: [Child]) throws -> Int64? {
            let query = try PostgresRowCoding.insert(
                parent, into: "parents", suffix: "ON CONFLICT (key) DO NOTHING", returning: "id",
                with: children.map { PostgresRowCoding.Dependent($0, into: "children", reference: "parent_id") }
                    + [PostgresRowCoding.Dependent(Child(parentId: 0, name: "other of \(parent.key)"), into: "others", reference: "parent_id")],
                naming: Self.naming)
            return try pool.withSession { session in try session.value(query, as: Int64.self) }
        }
        let first = try insert(Parent(key: "a", title: "first"), [Child(parentId: 0, name: "x", size: 3), Child(parentId: -5, name: "y")])
        let second = try insert(Parent(key: "b", title: "second"), [])
        let conflict = try insert(Parent(key: "a", title: "again"), [Child(parentId: 0, name: "z", size: 1)])
        #expect(first != nil && second != nil && first != second)
        #expect(conflict == nil, "a parent that is not inserted returns no id")
        let children = try pool.withSession { session in
            try session.rows("SELECT parent_id, name, size FROM children ORDER BY name").map {
                try $0.decode((Int64, String, Int64?).self)
            }
        }
        #expect(children.map(\.0) == [first, first].compactMap { $0 }, "the parent's id replaces whatever the row held")
        #expect(children.map(\.1) == ["x", "y"])
        #expect(children.map(\.2) == [3, nil], "a column left out takes its default")
        let others = try pool.withSession { session in
            try session.rows("SELECT parent_id, name FROM others ORDER BY name").map { try $0.decode((Int64, String).self) }
        }
        #expect(others.map(\.1) == ["other of a", "other of b"], "none for the conflicting parent")
        #expect(others.map(\.0) == [first, second].compactMap { $0 })

        struct Loose: Encodable { var name: String }
        #expect(throws: EncodingError.self, "a dependent without the reference column is refused") {
            _ = try PostgresRowCoding.insert(Parent(key: "c", title: "t"), into: "parents", returning: "id",
                                             with: [PostgresRowCoding.Dependent(Loose(name: "n"), into: "children", reference: "parent_id")],
                                             naming: Self.naming)
        }
    }
}
