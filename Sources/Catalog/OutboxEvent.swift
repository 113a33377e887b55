import GRDB

/// An event for a notifier to consume: written in the same transaction as its cause.
public struct OutboxEvent: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "outbox"
    public static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
    public static var databaseColumnEncodingStrategy: DatabaseColumnEncodingStrategy { ColumnName.encoding }

    /// Event names, as consumers see them.
    public enum Name: String, Codable, Sendable {
        case pictureAdded = "picture.added"
        case momentCreated = "moment.created"
        case momentMerged = "moment.merged"
        case momentCoverChanged = "moment.cover_changed"
        case momentUpdated = "moment.updated"
        case momentDeleted = "moment.deleted"
        case pictureRemoved = "picture.removed"
        /// A private moment's match from someone not invited: recorded, not assigned.
        case momentCandidate = "moment.candidate"
    }

    public var id: Int64?
    public var event: Name
    public var momentId: Int64?
    public var pictureId: Int64?
    /// The event's JSON body.
    public var payload: String
    public var createdAt: Double
    public var deliveredAt: Double?

    public init(event: Name, momentId: Int64?, pictureId: Int64?, payload: String, createdAt: Double) {
        self.event = event
        self.momentId = momentId
        self.pictureId = pictureId
        self.payload = payload
        self.createdAt = createdAt
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}

extension OutboxEvent {
    /// Events in the order they were written, optionally only those not yet delivered.
    public static func pending(in db: Database, limit: Int) throws -> [OutboxEvent] {
        try OutboxEvent.filter(Column("delivered_at") == nil).order(Column("id")).limit(limit).fetchAll(db)
    }

    /// Every event in order.
    public static func all(in db: Database) throws -> [OutboxEvent] {
        try OutboxEvent.order(Column("id")).fetchAll(db)
    }
}
