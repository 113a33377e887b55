import Foundation
import Logging
import PostgresNIO
import PostgresStore

/// A job as a worker holds it: what to do, and the lease it holds it under.
public struct ClaimedJob: Sendable, Equatable {
    public let id: Int64
    public let kind: String
    public let payload: String
    /// 1 on the first claim; a job taken back from a dead worker's lapsed lease counts again.
    public let attempts: Int
    /// Who holds the lease: renewals and completion must come from the same owner.
    public let owner: String
}

/// Which lane a job waits in: urgent jobs (uploads) are claimed before bulk ones (imports).
public enum QueueLane: Int16, Sendable {
    case urgent = 0
    case bulk = 1
}

/// The job queue in PostgreSQL, as the well-known PostgreSQL queues keep one:
/// - a job exists only if the transaction that inserts it commits (`enqueue(on:)` takes the
///   caller's connection, inside the transaction that records the photo);
/// - a claim is exclusive: `FOR UPDATE SKIP LOCKED`, so claimers on any number of machines
///   never wait on each other's rows nor take the same job;
/// - a claim is a lease: the worker renews it while it works; a lease that lapses (its machine
///   died) makes the job claimable again, its attempts counted;
/// - a failed job waits out a backoff before its next claim, and stays failed after
///   `maximumAttempts`, its reason kept.
public final class JobQueue: Sendable {
    public let location: PostgresLocation
    public let maximumAttempts: Int
    let client: PostgresClient
    /// Connections whose commits do not wait for the disk (`synchronous_commit` off): claims and
    /// renewals, whose loss in a server crash a lapsed lease covers anyway.
    let leaseClient: PostgresClient
    private let runner: Task<Void, Never>
    public let logger: Logger

    /// The migrations, applied in order, each once, by name (the PostgreSQL catalog applies
    /// them too, so that its workers share this table).
    public static let migrations: [(name: String, statements: [String])] = [
        ("v1-queue-jobs", [
            """
            CREATE TABLE queue_jobs (
                id bigserial PRIMARY KEY,
                kind text NOT NULL,
                payload text NOT NULL,
                lane smallint NOT NULL DEFAULT 1,
                state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed')),
                attempts integer NOT NULL DEFAULT 0,
                run_after timestamptz NOT NULL DEFAULT now(),
                lease_owner text,
                lease_expires_at timestamptz,
                last_error text,
                created_at timestamptz NOT NULL DEFAULT now(),
                finished_at timestamptz
            )
            """,
            "CREATE INDEX queue_jobs_ready ON queue_jobs (lane, run_after, id) WHERE state = 'queued'",
            "CREATE INDEX queue_jobs_leases ON queue_jobs (lease_expires_at) WHERE state = 'running'",
        ]),
        // A photo's job is keyed by its file under the spool's `queued/`: recording the same
        // file again (a reconciliation after a crash) adds nothing.
        ("v2-queue-photo-files", [
            "CREATE UNIQUE INDEX queue_jobs_photo_files ON queue_jobs (payload) WHERE kind = 'photo'",
        ]),
        // Done jobs by age, for their removal once nothing needs them.
        ("v3-queue-done-by-age", [
            "CREATE INDEX queue_jobs_done ON queue_jobs (finished_at) WHERE state = 'done'",
        ]),
        // A photo's job that ends notifies `photoOutcomesChannel` with its file, when its
        // transaction commits: a status request waiting for that outcome, on any machine, is
        // woken by it rather than by asking again and again.
        ("v4-queue-photo-outcome-notices", [
            """
            CREATE FUNCTION darkroom_notify_photo_outcome() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_notify('\(photoOutcomesChannel)', NEW.payload);
                RETURN NULL;
            END
            $$
            """,
            """
            CREATE TRIGGER queue_jobs_photo_outcome AFTER UPDATE OF state ON queue_jobs FOR EACH ROW
            WHEN (NEW.kind = 'photo' AND NEW.state IN ('done', 'failed') AND OLD.state IS DISTINCT FROM NEW.state)
            EXECUTE FUNCTION darkroom_notify_photo_outcome()
            """,
        ]),
    ]

    /// The channel a photo's job notifies with its file when it ends (done, or failed for good).
    public static let photoOutcomesChannel = "darkroom_photo_outcomes"

    /// Connects (a pool of at most `maximumConnections`) and keeps the pool running until `close()`.
    public init(location: PostgresLocation, maximumConnections: Int = 20, maximumAttempts: Int = 5,
                logger: Logger = Logger(label: "darkroom.queue")) {
        var configuration = location.clientConfiguration
        configuration.options.maximumConnections = maximumConnections
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        configuration.options.additionalStartupParameters = [("synchronous_commit", "off")]
        let leaseClient = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.location = location
        self.maximumAttempts = maximumAttempts
        self.client = client
        self.leaseClient = leaseClient
        self.logger = logger
        runner = Task {
            await withDiscardingTaskGroup { group in
                group.addTask { await client.run() }
                group.addTask { await leaseClient.run() }
            }
        }
    }

    deinit { runner.cancel() }

    /// Stops the connection pool.
    public func close() { runner.cancel() }

    /// Applies the migrations not yet applied, in one transaction each, recorded by name in
    /// `darkroom_migrations`. Several processes may call it at once: an advisory lock makes
    /// them take turns.
    public func migrate() async throws {
        // One plain connection first: the pool retries a server that is not there for a minute
        // or more, where a worker starting up should say at once what is wrong.
        do {
            let probe = try await PostgresConnection.connect(configuration: try location.connectionConfiguration(), id: 0, logger: logger)
            try await probe.close()
        } catch {
            throw PostgresError.connectionFailure(error, location: location)
        }
        try await wrapped {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(7261900913)", logger: logger)
                try await connection.query(
                    "CREATE TABLE IF NOT EXISTS darkroom_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
                    logger: logger)
                var applied = Set<String>()
                for try await name in try await connection.query("SELECT name FROM darkroom_migrations", logger: logger).decode(String.self) {
                    applied.insert(name)
                }
                for migration in Self.migrations where !applied.contains(migration.name) {
                    for statement in migration.statements { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
                    try await connection.query("INSERT INTO darkroom_migrations (name) VALUES (\(migration.name))", logger: logger)
                }
            }
        }
    }

    /// The names of the applied migrations, in order.
    public func appliedMigrations() async throws -> [String] {
        try await wrapped {
            var names: [String] = []
            for try await name in try await client.query("SELECT name FROM darkroom_migrations ORDER BY applied_at, name", logger: logger)
                .decode(String.self) { names.append(name) }
            return names
        }
    }

    /// Inserts a job on `connection`, inside the caller's transaction: it exists only if that commits.
    @discardableResult
    public static func enqueue(on connection: PostgresConnection, kind: String, payload: String, lane: QueueLane = .bulk,
                               logger: Logger) async throws -> Int64 {
        try await wrapped {
            let rows = try await connection.query(
                "INSERT INTO queue_jobs (kind, payload, lane) VALUES (\(kind), \(payload), \(lane.rawValue)) RETURNING id", logger: logger)
            for try await id in rows.decode(Int64.self) { return id }
            throw PostgresError.statement("the insert returned no id", sqlState: nil)
        }
    }

    /// Inserts a job in a transaction of its own.
    @discardableResult
    public func enqueue(kind: String, payload: String, lane: QueueLane = .bulk) async throws -> Int64 {
        try await client.withTransaction(logger: logger) { connection in
            try await Self.enqueue(on: connection, kind: kind, payload: payload, lane: lane, logger: logger)
        }
    }

    /// Runs `body` in one transaction (to insert jobs beside other rows).
    public func withTransaction<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        do {
            return try await client.withTransaction(logger: logger) { connection in try await body(connection) }
        } catch let error as PostgresTransactionError {
            // The caller's own error, when its body threw (and the rollback went through).
            if let thrown = error.closureError, error.rollbackError == nil { throw thrown }
            throw PostgresError(error.beginError ?? error.commitError ?? error.rollbackError ?? error)
        } catch {
            throw PostgresError(error)
        }
    }

    /// Takes the next job for `owner` under a lease of `lease` seconds: first a job whose lease
    /// lapsed, else the oldest ready one of the most urgent lane; nil when there is none. Rows
    /// another claimer has locked are skipped, never waited on.
    ///
    /// A claim and a renewal commit without waiting for the disk (on the lease client's
    /// connections, `synchronous_commit` off): should the server crash and lose one, the job is claimable
    /// again and the holder's next renewal or completion fails, which is what a lapsed lease
    /// does anyway. Completions, failures and enqueues wait for the disk.
    public func claim(owner: String, lease: Double) async throws -> ClaimedJob? {
        try await wrapped {
            for try await (id, kind, payload, attempts, _) in try await leaseClient.execute(QueueStatements.Claim(owner: owner, lease: lease)) {
                return ClaimedJob(id: id, kind: kind, payload: payload, attempts: Int(attempts), owner: owner)
            }
            return nil
        }
    }

    /// Moves the lease of a held job on to `lease` seconds from now; false when the job is no
    /// longer this owner's (its lease lapsed and another worker took it).
    public func renew(_ job: ClaimedJob, lease: Double) async throws -> Bool {
        try await wrapped {
            for try await _ in try await leaseClient.execute(QueueStatements.Renew(lease: lease, id: job.id, owner: job.owner)) { return true }
            return false
        }
    }

    /// Marks a held job done; false when it is no longer this owner's.
    public func complete(_ job: ClaimedJob) async throws -> Bool {
        try await wrapped {
            for try await _ in try await client.execute(QueueStatements.Complete(id: job.id, owner: job.owner)) { return true }
            return false
        }
    }

    /// Gives a held job back after a failure: claimable again after `retryAfter` seconds, or
    /// failed for good once it has had `maximumAttempts`; false when it is no longer this owner's.
    public func fail(_ job: ClaimedJob, reason: String, retryAfter: Double) async throws -> Bool {
        let finalState = job.attempts >= maximumAttempts ? "failed" : "queued"
        return try await changed(
            """
            UPDATE queue_jobs SET state = \(finalState), last_error = \(reason), lease_owner = NULL, lease_expires_at = NULL,
                run_after = now() + make_interval(secs => \(retryAfter)),
                finished_at = CASE WHEN \(finalState) = 'failed' THEN now() END
            WHERE id = \(job.id) AND state = 'running' AND lease_owner = \(job.owner) RETURNING id
            """)
    }

    /// How many jobs are in each state.
    public func counts() async throws -> [String: Int] {
        try await wrapped {
            var counts: [String: Int] = [:]
            for try await (state, count) in try await client.query("SELECT state, count(*) FROM queue_jobs GROUP BY state", logger: logger)
                .decode((String, Int64).self) { counts[state] = Int(count) }
            return counts
        }
    }

    /// A job's state and last error, for checks and reports.
    public func state(of id: Int64) async throws -> (state: String, attempts: Int, lastError: String?)? {
        try await wrapped {
            let rows = try await client.query("SELECT state, attempts, last_error FROM queue_jobs WHERE id = \(id)", logger: logger)
            for try await (state, attempts, error) in rows.decode((String, Int32, String?).self) { return (state, Int(attempts), error) }
            return nil
        }
    }

    /// Runs an UPDATE ... RETURNING and says whether it touched a row.
    private func changed(_ query: PostgresQuery) async throws -> Bool {
        try await wrapped {
            for try await _ in try await client.query(query, logger: logger).decode(Int64.self) { return true }
            return false
        }
    }

    /// `body`, with the driver's errors turned into `PostgresError` (category `catalog`).
    func wrapped<Result>(_ body: () async throws -> Result) async throws -> Result {
        try await Self.wrapped(body)
    }

    static func wrapped<Result>(_ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch {
            throw PostgresError(error)
        }
    }
}
