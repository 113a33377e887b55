import GRDB

/// One rendered variant of a picture (thumb, preview, mobile, feed, ...), stored in the library.
public struct VariantRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "variants"
    public static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
    public static var databaseColumnEncodingStrategy: DatabaseColumnEncodingStrategy { ColumnName.encoding }

    public var pictureId: Int64
    public var name: String
    /// Relative to the library root, so that a library can move.
    public var path: String
    public var width: Int
    public var height: Int
    public var bytes: Int64
    public var format: String

    public init(pictureId: Int64, name: String, path: String, width: Int, height: Int, bytes: Int64, format: String) {
        self.pictureId = pictureId
        self.name = name
        self.path = path
        self.width = width
        self.height = height
        self.bytes = bytes
        self.format = format
    }
}

extension VariantRecord {
    /// The variants of one picture, by name.
    public static func of(picture id: Int64, in db: Database) throws -> [VariantRecord] {
        try VariantRecord.filter(Column("picture_id") == id).order(Column("name")).fetchAll(db)
    }

    /// Every variant, for checks that walk the whole library.
    public static func all(in db: Database) throws -> [VariantRecord] {
        try VariantRecord.order(Column("picture_id"), Column("name")).fetchAll(db)
    }
}
