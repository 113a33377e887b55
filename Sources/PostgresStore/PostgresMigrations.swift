import PostgresNIO

/// Migrations registered by name, applied in order, each once, each in its own transaction,
/// and recorded in `darkroom_migrations` (the catalog's and the queue's alike). Several
/// processes may migrate one database at once: an advisory lock makes them take turns, and
/// the later ones find the work done.
public struct PostgresMigrations: Sendable {
    /// One named migration: its statements, run in order.
    public struct Migration: Sendable {
        public let name: String
        public let statements: [String]

        public init(_ name: String, _ statements: [String]) {
            self.name = name
            self.statements = statements
        }
    }

    /// The key of the advisory lock that migrations hold while they run.
    static let lockKey: Int64 = 7_261_900_913
    public let migrations: [Migration]

    public init(_ migrations: [Migration]) {
        self.migrations = migrations
    }

    /// Applies those not yet applied; returns their names.
    @discardableResult
    public func apply(to pool: PostgresPool) throws -> [String] {
        var applied: [String] = []
        for migration in migrations {
            let ran = try pool.transaction(deadlines: .maintenance) { session -> Bool in
                try session.execute("SELECT pg_advisory_xact_lock(\(Self.lockKey))")
                try session.execute("""
                    CREATE TABLE IF NOT EXISTS darkroom_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())
                    """)
                guard try session.value("SELECT 1 FROM darkroom_migrations WHERE name = \(migration.name)", as: Int32.self) == nil else {
                    return false
                }
                for statement in migration.statements { try session.execute(PostgresQuery(unsafeSQL: statement)) }
                try session.execute("INSERT INTO darkroom_migrations (name) VALUES (\(migration.name))")
                return true
            }
            if ran { applied.append(migration.name) }
        }
        return applied
    }

    /// The names of the migrations applied to the database, oldest first.
    public static func applied(in pool: PostgresPool) throws -> [String] {
        try pool.withSession { session in
            guard try session.value("SELECT to_regclass('darkroom_migrations')::text", as: String.self) != nil else { return [] }
            return try session.values("SELECT name FROM darkroom_migrations ORDER BY applied_at, name", as: String.self)
        }
    }
}
