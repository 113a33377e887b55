import GRDB

/// The delivery of one outbox event to one webhook endpoint: tries made, when the next is due,
/// what the last one got back, and when it succeeded. Rows are kept once delivered, so that a
/// restarted dispatcher never sends an event twice to the same endpoint.
public struct WebhookDeliveryRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "webhook_deliveries"
    public static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
    public static let databaseColumnEncodingStrategy = DatabaseColumnEncodingStrategy.convertToSnakeCase

    /// The outbox event delivered.
    public var outboxId: Int64
    /// The endpoint's URL, as configured.
    public var endpoint: String
    /// The event's moment: events of one moment reach an endpoint in outbox order.
    public var momentId: Int64?
    /// Tries made so far, the successful one included.
    public var attempts: Int
    /// When the next try may start (seconds since 1970); nil while an earlier event of the same
    /// moment is not yet delivered to this endpoint. A claimed row holds its lease's end here.
    public var nextAttemptAt: Double?
    /// When an endpoint answered 2xx (seconds since 1970).
    public var deliveredAt: Double?
    /// The HTTP status of the last try, when an answer came back.
    public var lastStatus: Int?
    /// Why the last try failed (one line), nil once delivered.
    public var lastError: String?

    /// An event claimed for delivery to one endpoint, with the tries it has had.
    public struct Claim: Sendable, Equatable {
        /// The event to send.
        public var event: OutboxEvent
        /// Tries made before this one.
        public var attempts: Int

        /// A claim as given (for the other stores' implementations).
        public init(event: OutboxEvent, attempts: Int) {
            self.event = event
            self.attempts = attempts
        }
    }
}

extension WebhookDeliveryRecord {
    /// The newest outbox event already taken on for `endpoint` (0 when none).
    static func highWater(endpoint: String, in db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(outbox_id), 0) FROM webhook_deliveries WHERE endpoint = ?",
                           arguments: [endpoint]) ?? 0
    }

    /// Whether `endpoint` has outbox events not yet taken on, or deliveries due by `instant`.
    public static func hasWork(endpoint: String, dueBy instant: Double, in db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: """
            SELECT EXISTS(SELECT 1 FROM webhook_deliveries
                          WHERE endpoint = ?1 AND delivered_at IS NULL AND next_attempt_at <= ?2)
                OR EXISTS(SELECT 1 FROM outbox WHERE delivered_at IS NULL AND id >
                          (SELECT COALESCE(MAX(outbox_id), 0) FROM webhook_deliveries WHERE endpoint = ?1))
            """, arguments: [endpoint, instant]) ?? false
    }

    /// Adds a delivery row for every undelivered outbox event newer than what `endpoint` has
    /// taken on. Events without a moment are due at once; an event of a moment waits until the
    /// events of that moment before it are delivered. Returns the number of rows added.
    @discardableResult
    public static func takeOn(endpoint: String, in db: Database) throws -> Int {
        let mark = try highWater(endpoint: endpoint, in: db)
        try db.execute(sql: """
            INSERT INTO webhook_deliveries (outbox_id, endpoint, moment_id, attempts, next_attempt_at)
            SELECT id, ?, moment_id, 0, CASE WHEN moment_id IS NULL THEN created_at END
            FROM outbox WHERE delivered_at IS NULL AND id > ? ORDER BY id
            """, arguments: [endpoint, mark])
        let added = db.changesCount
        if added > 0 { try promote(endpoint: endpoint, scope: "AND outbox_id > ?", arguments: [mark], in: db) }
        return added
    }

    /// Makes due every waiting row of `endpoint` that no longer has an earlier pending event of
    /// its moment, restricted by `scope` (an SQL condition on the row). A promoted row is due
    /// from its event's creation, so that a pass started before it was promoted still sends it.
    private static func promote(endpoint: String, scope: String, arguments: StatementArguments, in db: Database) throws {
        try db.execute(sql: """
            UPDATE webhook_deliveries
            SET next_attempt_at = (SELECT created_at FROM outbox WHERE outbox.id = webhook_deliveries.outbox_id)
            WHERE endpoint = ? AND delivered_at IS NULL AND next_attempt_at IS NULL \(scope)
              AND NOT EXISTS (SELECT 1 FROM webhook_deliveries AS earlier
                              WHERE earlier.endpoint = webhook_deliveries.endpoint
                                AND earlier.moment_id = webhook_deliveries.moment_id
                                AND earlier.delivered_at IS NULL
                                AND earlier.outbox_id < webhook_deliveries.outbox_id)
            """, arguments: [endpoint] + arguments)
    }

    /// Makes due the first waiting event of every moment of `endpoint`: a safety net run when a
    /// dispatcher starts, should a row ever be left waiting on nothing.
    public static func promoteWaiting(endpoint: String, in db: Database) throws {
        try promote(endpoint: endpoint, scope: "", arguments: [], in: db)
    }

    /// Takes on new events, then claims up to `limit` deliveries of `endpoint` due by `instant`,
    /// oldest first, by moving their next try to `leaseUntil`: another dispatcher sharing the
    /// catalog does not take them until the lease ends. Run it in one immediate transaction.
    public static func claimDue(endpoint: String, dueBy instant: Double, leaseUntil: Double, limit: Int,
                                in db: Database) throws -> [Claim] {
        try takeOn(endpoint: endpoint, in: db)
        let rows = try WebhookDeliveryRecord
            .filter(Column("endpoint") == endpoint && Column("delivered_at") == nil && Column("next_attempt_at") <= instant)
            .order(Column("next_attempt_at"), Column("outbox_id"))
            .limit(limit)
            .fetchAll(db)
        guard !rows.isEmpty else { return [] }
        let ids = rows.map(\.outboxId)
        try WebhookDeliveryRecord
            .filter(Column("endpoint") == endpoint && ids.contains(Column("outbox_id")))
            .updateAll(db, Column("next_attempt_at").set(to: leaseUntil))
        let events = try OutboxEvent.filter(keys: ids).fetchAll(db)
        let byId = Dictionary(events.compactMap { event in event.id.map { ($0, event) } }, uniquingKeysWith: { first, _ in first })
        return rows.compactMap { row in byId[row.outboxId].map { Claim(event: $0, attempts: row.attempts) } }
    }

    /// Records a 2xx from `endpoint`: the event is delivered there, the next event of its moment
    /// becomes due, and once every endpoint of `endpoints` has it the outbox row is delivered.
    public static func recordDelivered(outboxId: Int64, endpoint: String, status: Int, at instant: Double,
                                       endpoints: [String], in db: Database) throws {
        try db.execute(sql: """
            UPDATE webhook_deliveries
            SET attempts = attempts + 1, delivered_at = COALESCE(delivered_at, ?), last_status = ?, last_error = NULL
            WHERE endpoint = ? AND outbox_id = ?
            """, arguments: [instant, status, endpoint, outboxId])
        if let moment = try Int64.fetchOne(db, sql: "SELECT moment_id FROM webhook_deliveries WHERE endpoint = ? AND outbox_id = ?",
                                           arguments: [endpoint, outboxId]) {
            // Only the moment's first pending event can have become due: one index lookup,
            // however many of its events wait behind it.
            try db.execute(sql: """
                UPDATE webhook_deliveries
                SET next_attempt_at = (SELECT created_at FROM outbox WHERE outbox.id = webhook_deliveries.outbox_id)
                WHERE endpoint = ?1 AND next_attempt_at IS NULL AND outbox_id =
                      (SELECT MIN(outbox_id) FROM webhook_deliveries WHERE endpoint = ?1 AND moment_id = ?2 AND delivered_at IS NULL)
                """, arguments: [endpoint, moment])
        }
        let wanted = Set(endpoints)
        let reached = try WebhookDeliveryRecord
            .filter(Column("outbox_id") == outboxId && wanted.contains(Column("endpoint")) && Column("delivered_at") != nil)
            .fetchCount(db)
        if reached == wanted.count {
            try db.execute(sql: "UPDATE outbox SET delivered_at = ? WHERE id = ? AND delivered_at IS NULL", arguments: [instant, outboxId])
        }
    }

    /// Records a failed try: counted, with its status and reason, and due again at `retryAt`.
    /// A row another dispatcher delivered meanwhile is left as it is.
    public static func recordFailure(outboxId: Int64, endpoint: String, status: Int?, reason: String, retryAt: Double,
                                     in db: Database) throws {
        try db.execute(sql: """
            UPDATE webhook_deliveries
            SET attempts = attempts + 1, next_attempt_at = ?, last_status = ?, last_error = ?
            WHERE endpoint = ? AND outbox_id = ? AND delivered_at IS NULL
            """, arguments: [retryAt, status, reason, endpoint, outboxId])
    }

    /// Gives back a claim without counting a try (the dispatcher stopped mid-request).
    public static func release(outboxId: Int64, endpoint: String, at instant: Double, in db: Database) throws {
        try db.execute(sql: "UPDATE webhook_deliveries SET next_attempt_at = ? WHERE endpoint = ? AND outbox_id = ? AND delivered_at IS NULL",
                       arguments: [instant, endpoint, outboxId])
    }

    /// The delivery rows of one endpoint, in outbox order.
    public static func all(endpoint: String, in db: Database) throws -> [WebhookDeliveryRecord] {
        try WebhookDeliveryRecord.filter(Column("endpoint") == endpoint).order(Column("outbox_id")).fetchAll(db)
    }

    /// Totals over every endpoint, for metrics.
    public static func statistics(now instant: Double, in db: Database) throws -> WebhookStatistics {
        // Running totals kept by triggers (migration v7): one row, however many deliveries.
        let row = try Row.fetchOne(db, sql: """
            SELECT delivered, attempts, deliveries AS total FROM webhook_delivery_totals WHERE id = 1
            """)
        let delivered: Int = row?["delivered"] ?? 0
        let attempts: Int = row?["attempts"] ?? 0
        let total: Int = row?["total"] ?? 0
        let oldest = try Double.fetchOne(db, sql: """
            SELECT created_at FROM outbox
            WHERE id = (SELECT MIN(outbox_id) FROM webhook_deliveries WHERE delivered_at IS NULL)
            """)
        return WebhookStatistics(delivered: delivered, failedAttempts: attempts - delivered, pending: total - delivered,
                                 oldestPendingAge: oldest.map { max(0, instant - $0) })
    }
}
