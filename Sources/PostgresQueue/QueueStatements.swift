import PostgresNIO

/// The queue's three hot statements, prepared once per connection: the server plans each once,
/// not at every claim, renewal and completion.
enum QueueStatements {
    /// Takes the next job: first one whose lease lapsed, else the oldest ready one of the most
    /// urgent lane; rows another claimer has locked are skipped, never waited on.
    struct Claim: PostgresPreparedStatement {
        static let sql = """
            WITH lapsed AS (
                SELECT id, lease_owner AS previous FROM queue_jobs
                WHERE state = 'running' AND lease_expires_at < now() - make_interval(secs => $3)
                ORDER BY lease_expires_at LIMIT 1 FOR UPDATE SKIP LOCKED
            ), ready AS (
                SELECT id FROM queue_jobs WHERE state = 'queued' AND run_after <= now() AND NOT EXISTS (SELECT 1 FROM lapsed)
                ORDER BY lane, run_after, id LIMIT 1 FOR UPDATE SKIP LOCKED
            ), next AS (
                SELECT id, previous FROM lapsed UNION ALL SELECT id, NULL::text FROM ready
            )
            UPDATE queue_jobs AS job
            SET state = 'running', attempts = job.attempts + 1, lease_owner = $1,
                lease_expires_at = now() + make_interval(secs => $2)
            FROM next WHERE job.id = next.id
            RETURNING job.id, job.kind, job.payload, job.attempts, next.previous
            """
        /// The job, and the owner whose lapsed lease it was taken from (nil for a waiting job).
        typealias Row = (Int64, String, String, Int32, String?)
        let owner: String
        let lease: Double
        /// How long ago a lease must have lapsed to be taken over.
        var lapsedFor: Double = 0

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(owner)
            bindings.append(lease)
            bindings.append(lapsedFor)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// Moves a held job's lease on; no row when it is no longer this owner's.
    struct Renew: PostgresPreparedStatement {
        static let sql = """
            UPDATE queue_jobs SET lease_expires_at = now() + make_interval(secs => $1)
            WHERE id = $2 AND state = 'running' AND lease_owner = $3 RETURNING id
            """
        typealias Row = Int64
        let lease: Double
        let id: Int64
        let owner: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(lease)
            bindings.append(id)
            bindings.append(owner)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int64.self) }
    }

    /// Marks a held job done; no row when it is no longer this owner's.
    struct Complete: PostgresPreparedStatement {
        static let sql = """
            UPDATE queue_jobs SET state = 'done', finished_at = now(), lease_owner = NULL, lease_expires_at = NULL
            WHERE id = $1 AND state = 'running' AND lease_owner = $2 RETURNING id
            """
        typealias Row = Int64
        let id: Int64
        let owner: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(id)
            bindings.append(owner)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int64.self) }
    }
}

/// The queue's statements as text, for callers that run them on connections of their own (the
/// catalog's workers, through its blocking pool): the same claim, renewal and completion.
/// Parameters: claim ($1 owner, $2 lease seconds, $3 seconds a lease must have lapsed; rows: id, kind, payload, attempts, the
/// previous owner when a lapsed lease was taken over); renew ($1 lease seconds, $2 id, $3 owner);
/// complete ($1 id, $2 owner).
public enum QueueSQL {
    public static let claim = QueueStatements.Claim.sql
    public static let renew = QueueStatements.Renew.sql
    public static let complete = QueueStatements.Complete.sql
}
