import Catalog
import Foundation
import PostgresNIO
import PostgresStore

extension PostgresCatalogSchema {
    /// Webhook delivery state: SQLite's `v5-webhook-deliveries` and `v7-webhook-delivery-totals`,
    /// with the same tables, columns and meanings, so that `catalog copy` moves the rows as they
    /// are and a dispatcher continues where the SQLite one stopped.
    ///
    /// The running totals are kept by one PL/pgSQL function behind three statement triggers:
    /// one update of the totals row per statement, none when a statement changes no count (a
    /// claim moves `next_attempt_at` only), so that dispatchers do not queue on that row.
    ///
    /// The last trigger is on the outbox: every statement that inserts events holds the outbox
    /// lock shared until its transaction ends, taken before its ids are drawn. Ids are drawn in
    /// order but committed in any order by writers on several machines; a dispatcher waits on
    /// that lock for the inserts in flight (see `outboxHorizon`), so it never takes on an event
    /// past one that is still to commit, which would be lost to its high-water mark or sent
    /// before an earlier event of its moment.
    static let webhookDeliveries = PostgresMigrations.Migration("catalog-webhook-deliveries", [
        """
        CREATE TABLE webhook_deliveries (
            outbox_id bigint NOT NULL REFERENCES outbox ON DELETE CASCADE,
            endpoint text NOT NULL,
            moment_id bigint,
            attempts bigint NOT NULL DEFAULT 0,
            next_attempt_at double precision,
            delivered_at double precision,
            last_status bigint,
            last_error text,
            PRIMARY KEY (endpoint, outbox_id)
        )
        """,
        "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint, next_attempt_at) WHERE delivered_at IS NULL",
        "CREATE INDEX webhook_deliveries_moment_order ON webhook_deliveries (endpoint, moment_id, outbox_id) WHERE delivered_at IS NULL",
        "CREATE INDEX webhook_deliveries_outbox ON webhook_deliveries (outbox_id)",
        "CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (outbox_id) WHERE delivered_at IS NULL",
        """
        CREATE TABLE webhook_delivery_totals (
            id bigint PRIMARY KEY CHECK (id = 1),
            deliveries bigint NOT NULL,
            attempts bigint NOT NULL,
            delivered bigint NOT NULL
        )
        """,
        "INSERT INTO webhook_delivery_totals (id, deliveries, attempts, delivered) VALUES (1, 0, 0, 0)",
        // Each trigger names only the transition tables of its own event; the function reads
        // only those of TG_OP, so the others are never looked up.
        """
        CREATE FUNCTION webhook_delivery_totals_follow() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            added bigint := 0;
            tries bigint := 0;
            done bigint := 0;
        BEGIN
            IF TG_OP IN ('INSERT', 'UPDATE') THEN
                SELECT count(*), COALESCE(sum(attempts), 0), count(delivered_at) INTO added, tries, done FROM new_rows;
            END IF;
            IF TG_OP IN ('UPDATE', 'DELETE') THEN
                SELECT added - count(*), tries - COALESCE(sum(attempts), 0), done - count(delivered_at)
                    INTO added, tries, done FROM old_rows;
            END IF;
            IF added <> 0 OR tries <> 0 OR done <> 0 THEN
                UPDATE webhook_delivery_totals
                SET deliveries = deliveries + added, attempts = attempts + tries, delivered = delivered + done
                WHERE id = 1;
            END IF;
            RETURN NULL;
        END
        $$
        """,
        """
        CREATE TRIGGER webhook_delivery_totals_insert AFTER INSERT ON webhook_deliveries
            REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhook_delivery_totals_follow()
        """,
        """
        CREATE TRIGGER webhook_delivery_totals_update AFTER UPDATE ON webhook_deliveries
            REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhook_delivery_totals_follow()
        """,
        """
        CREATE TRIGGER webhook_delivery_totals_delete AFTER DELETE ON webhook_deliveries
            REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION webhook_delivery_totals_follow()
        """,
        """
        CREATE FUNCTION outbox_insert_in_flight() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_advisory_xact_lock_shared(\(PostgresCatalog.outboxInsertLock));
            RETURN NULL;
        END
        $$
        """,
        """
        CREATE TRIGGER outbox_insert_in_flight BEFORE INSERT ON outbox
            FOR EACH STATEMENT EXECUTE FUNCTION outbox_insert_in_flight()
        """,
    ])
}

/// The webhook dispatcher's state in PostgreSQL, with the meaning it has in SQLite
/// (`WebhookDeliveryRecord`): per endpoint, a high-water mark of the events taken on, due rows
/// claimed under a lease, an event of a moment waiting (no `next_attempt_at`) until the earlier
/// ones of its moment are delivered there.
///
/// These transactions run READ COMMITTED, not through the catalog's SERIALIZABLE `write`: the
/// delivery state is no part of the moments' rules, and its reads of the outbox's newest rows
/// would otherwise join the photo commits' serialization checks and make them retry (alone,
/// holding up every other commit). What SQLite got from one writer at a time comes from locks:
/// an endpoint's take-on, claims, delivered marks and promotions hold that endpoint's advisory
/// lock, so they see each other's work; an event's delivered marks lock its outbox row first.
extension PostgresCatalog: WebhookStore {
    /// The advisory lock every insert into the outbox holds shared (the migration's trigger) and
    /// a dispatcher takes exclusively for a moment to let the inserts in flight commit. (The
    /// catalog's other locks are 7_261_900_913 to 915.)
    static let outboxInsertLock: Int64 = 7_261_900_916
    /// The first key of the per-endpoint advisory locks (the second is the URL's hash): a key
    /// space of its own, apart from the single-key locks.
    static let endpointLockSpace: Int32 = 72_619_009

    public func webhookWorkIsDue(endpoint: String, by instant: Double) throws(CatalogError) -> Bool {
        try readOne { session in
            try session.value("""
                SELECT EXISTS(SELECT 1 FROM webhook_deliveries
                              WHERE endpoint = \(endpoint) AND delivered_at IS NULL AND next_attempt_at <= \(instant))
                    OR EXISTS(SELECT 1 FROM outbox WHERE delivered_at IS NULL AND id >
                              (SELECT COALESCE(MAX(outbox_id), 0) FROM webhook_deliveries WHERE endpoint = \(endpoint)))
                """, as: Bool.self) ?? false
        }
    }

    /// Takes on the events committed up to the outbox's horizon (when any written by `instant`
    /// is new), then claims the due rows under the endpoint's lock. Rows another dispatcher is
    /// recording a result for right now are skipped, not waited for.
    public func claimWebhookDeliveries(endpoint: String, dueBy instant: Double, leaseUntil: Double,
                                       limit: Int) throws(CatalogError) -> [WebhookDeliveryRecord.Claim] {
        try readOne { session in
            let horizon = try Self.outboxHorizon(endpoint: endpoint, dueBy: instant, session)
            return try Self.onEndpoint(endpoint, session) { session in
                if let horizon { try Self.takeOn(endpoint: endpoint, upTo: horizon, session) }
                let rows = try session.rows("""
                    WITH due AS (
                        SELECT outbox_id, next_attempt_at FROM webhook_deliveries
                        WHERE endpoint = \(endpoint) AND delivered_at IS NULL AND next_attempt_at <= \(instant)
                        ORDER BY next_attempt_at, outbox_id LIMIT \(limit) FOR UPDATE SKIP LOCKED
                    ), claimed AS (
                        UPDATE webhook_deliveries d SET next_attempt_at = \(leaseUntil) FROM due
                        WHERE d.endpoint = \(endpoint) AND d.outbox_id = due.outbox_id
                        RETURNING d.outbox_id, d.attempts, due.next_attempt_at AS was_due
                    )
                    SELECT o.*, claimed.attempts AS claim_attempts FROM claimed JOIN outbox o ON o.id = claimed.outbox_id
                    ORDER BY claimed.was_due, claimed.outbox_id
                    """)
                return try rows.map { row in
                    let attempts = try row.makeRandomAccess()["claim_attempts"].decode(Int.self)
                    return WebhookDeliveryRecord.Claim(event: try Self.record(OutboxEvent.self, row), attempts: attempts)
                }
            }
        }
    }

    /// Records a 2xx from `endpoint`: the event is delivered there, the next event of its moment
    /// becomes due, and once every endpoint of `endpoints` has it the outbox row is delivered.
    /// The outbox row is locked before anything is read, so that of two endpoints recorded at
    /// once the later sees the earlier's mark.
    public func recordWebhookDelivered(outboxId: Int64, endpoint: String, status: Int, at instant: Double,
                                       endpoints: [String]) throws(CatalogError) {
        let wanted = Array(Set(endpoints))
        try readOne { session in
            try Self.onEndpoint(endpoint, session) { session in
                try session.execute("SELECT 1 FROM outbox WHERE id = \(outboxId) FOR NO KEY UPDATE")
                let moment = try session.rows("""
                    UPDATE webhook_deliveries
                    SET attempts = attempts + 1, delivered_at = COALESCE(delivered_at, \(instant)), last_status = \(status), last_error = NULL
                    WHERE endpoint = \(endpoint) AND outbox_id = \(outboxId)
                    RETURNING moment_id
                    """).first.flatMap { row in try row.decode(Int64?.self) }
                if let moment {
                    // Only the moment's first pending event can have become due: one index
                    // lookup, however many of its events wait behind it.
                    try session.execute("""
                        UPDATE webhook_deliveries d \(unescaped: Self.dueFromCreation)
                        WHERE d.endpoint = \(endpoint) AND d.next_attempt_at IS NULL AND d.outbox_id =
                              (SELECT MIN(outbox_id) FROM webhook_deliveries
                               WHERE endpoint = \(endpoint) AND moment_id = \(moment) AND delivered_at IS NULL)
                        """)
                }
                try session.execute("""
                    UPDATE outbox SET delivered_at = \(instant)
                    WHERE id = \(outboxId) AND delivered_at IS NULL
                      AND (SELECT COUNT(*) FROM webhook_deliveries
                           WHERE outbox_id = \(outboxId) AND endpoint = ANY(\(wanted)) AND delivered_at IS NOT NULL) = \(wanted.count)
                    """)
            }
        }
    }

    /// Records a failed try: counted, with its status and reason, and due again at `retryAt`.
    /// A row another dispatcher delivered meanwhile is left as it is.
    public func recordWebhookFailure(outboxId: Int64, endpoint: String, status: Int?, reason: String,
                                     retryAt: Double) throws(CatalogError) {
        try readOne { session in
            try session.execute("""
                UPDATE webhook_deliveries
                SET attempts = attempts + 1, next_attempt_at = \(retryAt), last_status = \(status), last_error = \(reason)
                WHERE endpoint = \(endpoint) AND outbox_id = \(outboxId) AND delivered_at IS NULL
                """)
        }
    }

    /// Gives back a claim without counting a try (the dispatcher stopped mid-request).
    public func releaseWebhookClaim(outboxId: Int64, endpoint: String, at instant: Double) throws(CatalogError) {
        try readOne { session in
            try session.execute("""
                UPDATE webhook_deliveries SET next_attempt_at = \(instant)
                WHERE endpoint = \(endpoint) AND outbox_id = \(outboxId) AND delivered_at IS NULL
                """)
        }
    }

    /// Makes due the first waiting event of every moment of `endpoint`: a safety net run when a
    /// dispatcher starts, should a row ever be left waiting on nothing.
    public func promoteWaitingWebhookDeliveries(endpoint: String) throws(CatalogError) {
        try readOne { session in
            try Self.onEndpoint(endpoint, session) { session in try Self.promote(endpoint: endpoint, after: 0, session) }
        }
    }

    /// The delivery rows of one endpoint, in outbox order.
    public func webhookDeliveries(endpoint: String) throws(CatalogError) -> [WebhookDeliveryRecord] {
        try readOne { session in
            try session.rows("SELECT * FROM webhook_deliveries WHERE endpoint = \(endpoint) ORDER BY outbox_id")
                .map { row in try Self.record(WebhookDeliveryRecord.self, row) }
        }
    }

    /// Totals over every endpoint, for metrics: the triggers' running totals (one row, however
    /// many deliveries) and the oldest pending event (one probe of the pending rows' index).
    public func webhookStatistics(now: Date) throws(CatalogError) -> WebhookStatistics {
        let instant = now.timeIntervalSince1970
        return try readOne { session in
            guard let row = try session.rows("""
                SELECT t.delivered, t.attempts, t.deliveries,
                       (SELECT created_at FROM outbox
                        WHERE id = (SELECT MIN(outbox_id) FROM webhook_deliveries WHERE delivered_at IS NULL))
                FROM webhook_delivery_totals t WHERE t.id = 1
                """).first else { throw CatalogError.other("the webhook totals row is missing") }
            let (delivered, attempts, total, oldest) = try row.decode((Int64, Int64, Int64, Double?).self)
            return WebhookStatistics(delivered: Int(delivered), failedAttempts: Int(attempts - delivered),
                                     pending: Int(total - delivered), oldestPendingAge: oldest.map { max(0, instant - $0) })
        }
    }

    // MARK: - Steps

    /// Runs `body` in one READ COMMITTED transaction holding `endpoint`'s advisory lock: each
    /// statement after it sees what the endpoint's previous holders committed.
    private static func onEndpoint<T>(_ endpoint: String, _ session: PostgresSession,
                                      _ body: (PostgresSession) throws -> T) throws -> T {
        try session.transaction(.readCommitted) { session in
            try session.execute("SELECT pg_advisory_xact_lock(\(endpointLockSpace), hashtext(\(endpoint)))")
            return try body(session)
        }
    }

    /// The newest outbox id at or below which every event is committed (or never will be), when
    /// `endpoint` has an event written by `instant` past its high-water mark; nil when it has none
    /// (then no one waits: a pass's later rounds find only newer events, which it would not send).
    ///
    /// Runs outside a transaction, before the take-on's: the lock is taken after this statement's
    /// snapshot and given back at its end. Every id at or below the newest one that snapshot sees
    /// was drawn before it, by an insert that held the lock shared from before drawing it; once
    /// the lock is had, each such insert has committed or rolled back, and the take-on's later
    /// statements see it. (Ids given explicitly, as `catalog copy` gives them into an empty
    /// catalog, are not drawn and not covered.)
    private static func outboxHorizon(endpoint: String, dueBy instant: Double, _ session: PostgresSession) throws -> Int64? {
        guard try session.value("""
            SELECT EXISTS(SELECT 1 FROM outbox WHERE delivered_at IS NULL AND created_at <= \(instant) AND id >
                          (SELECT COALESCE(MAX(outbox_id), 0) FROM webhook_deliveries WHERE endpoint = \(endpoint)))
            """, as: Bool.self) == true else { return nil }
        return try session.value("""
            SELECT (SELECT COALESCE(MAX(id), 0) FROM outbox) FROM pg_advisory_xact_lock(\(outboxInsertLock))
            """, as: Int64.self)
    }

    /// Adds a delivery row for every undelivered outbox event past `endpoint`'s high-water mark
    /// up to `horizon`. Events without a moment are due at once; an event of a moment waits until
    /// the events of that moment before it are delivered.
    private static func takeOn(endpoint: String, upTo horizon: Int64, _ session: PostgresSession) throws {
        let mark = try session.value("SELECT COALESCE(MAX(outbox_id), 0) FROM webhook_deliveries WHERE endpoint = \(endpoint)",
                                     as: Int64.self) ?? 0
        guard horizon > mark else { return }
        try session.execute("""
            INSERT INTO webhook_deliveries (outbox_id, endpoint, moment_id, attempts, next_attempt_at)
            SELECT id, \(endpoint), moment_id, 0, CASE WHEN moment_id IS NULL THEN created_at END
            FROM outbox WHERE delivered_at IS NULL AND id > \(mark) AND id <= \(horizon) ORDER BY id
            """)
        try promote(endpoint: endpoint, after: mark, session)
    }

    /// Makes due every waiting row of `endpoint` past outbox id `after` that no longer has an
    /// earlier pending event of its moment.
    private static func promote(endpoint: String, after mark: Int64, _ session: PostgresSession) throws {
        try session.execute("""
            UPDATE webhook_deliveries d \(unescaped: dueFromCreation)
            WHERE d.endpoint = \(endpoint) AND d.delivered_at IS NULL AND d.next_attempt_at IS NULL AND d.outbox_id > \(mark)
              AND NOT EXISTS (SELECT 1 FROM webhook_deliveries AS earlier
                              WHERE earlier.endpoint = d.endpoint AND earlier.moment_id = d.moment_id
                                AND earlier.delivered_at IS NULL AND earlier.outbox_id < d.outbox_id)
            """)
    }

    /// A promoted row is due from its event's creation, so that a pass started before it was
    /// promoted still sends it.
    private static let dueFromCreation = "SET next_attempt_at = (SELECT created_at FROM outbox WHERE outbox.id = d.outbox_id)"
}
