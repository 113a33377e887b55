import Foundation
import GRDB
import Moments

/// One picture in the catalog: a distinct photo (by SHA-256), with everything read from it.
public struct PictureRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "pictures"
    public static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
    public static var databaseColumnEncodingStrategy: DatabaseColumnEncodingStrategy { ColumnName.encoding }

    public var id: Int64?
    public var sha256: String
    public var status: String
    public var sourceName: String
    public var originalPath: String
    public var mimeType: String
    public var byteSize: Int64
    public var width: Int
    public var height: Int
    public var displayWidth: Int
    public var displayHeight: Int
    public var orientation: Int
    public var make: String?
    public var model: String?
    public var capturedAt: Double?
    public var capturedLocal: String?
    public var capturedOffset: Int?
    public var timeSource: String?
    /// Where the UTC offset of `capturedAt` came from (`OffsetSource`: `recorded`, `gps`,
    /// `sidecar` are exact; `maker_note`, `place`, `assumed` inferred); nil for pictures added
    /// before it was kept.
    public var timeZoneSource: String?
    public var timeTrusted: Bool
    public var latitude: Double?
    public var longitude: Double?
    public var altitude: Double?
    public var positionError: Double?
    public var locationSource: String
    /// The camera's capture time (EXIF), when the backend's explicit `taken_at` replaced it.
    public var cameraCapturedAt: Double?
    /// The camera's location (EXIF GPS), when the backend's explicit location replaced it.
    public var cameraLatitude: Double?
    public var cameraLongitude: Double?
    public var authorId: String?
    public var title: String?
    public var visibility: String?
    public var requestedMomentId: Int64?
    public var focalX: Double?
    public var focalY: Double?
    public var feedCropX: Int?
    public var feedCropY: Int?
    public var feedCropWidth: Int?
    public var feedCropHeight: Int?
    public var feedCropSource: String?
    public var sharpness: Double?
    public var meanLuma: Double?
    public var clippedFraction: Double?
    /// The placeholder an app paints before the thumb arrives: a ThumbHash, base64.
    public var thumbHash: String?
    public var metadataJson: String
    public var momentId: Int64?
    public var createdAt: Double
    /// Whether the moments engine has filed this picture.
    public var inMoments: Bool = false
    /// The trusted capture time the moment rules use (nil when the time is untrusted).
    public var momentTime: Double?
    /// The cover score (0...1) of the cover policy `best`.
    public var coverScore: Double = 0

    /// A picture ready to insert; the catalog assigns its id.
    public init(
        sha256: String, sourceName: String, originalPath: String, mimeType: String, byteSize: Int64,
        width: Int, height: Int, displayWidth: Int, displayHeight: Int, orientation: Int,
        locationSource: String, metadataJson: String, createdAt: Double
    ) {
        self.sha256 = sha256
        self.status = "ready"
        self.sourceName = sourceName
        self.originalPath = originalPath
        self.mimeType = mimeType
        self.byteSize = byteSize
        self.width = width
        self.height = height
        self.displayWidth = displayWidth
        self.displayHeight = displayHeight
        self.orientation = orientation
        self.timeTrusted = false
        self.locationSource = locationSource
        self.metadataJson = metadataJson
        self.createdAt = createdAt
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}

extension PictureRecord {
    /// The picture with these bytes, if the catalog has it.
    public static func withSHA256(_ sha256: String, in db: Database) throws -> PictureRecord? {
        try PictureRecord.filter(Column("sha256") == sha256).fetchOne(db)
    }

    /// The id of the picture with this content hash: the duplicate check of every commit, so
    /// its statement is prepared once and reused.
    static func id(ofSHA256 sha256: String, in db: Database) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM pictures WHERE sha256 = ?"), arguments: [sha256])
    }

    /// Every picture in id order: the stable order of listings and exports.
    public static func all(in db: Database, limit: Int? = nil) throws -> [PictureRecord] {
        try PictureRecord.order(Column("id")).limit(limit ?? Int.max).fetchAll(db)
    }
}

extension PictureRecord {
    /// What the moment rules know of this picture.
    public var momentFacts: PhotoFacts {
        PhotoFacts(
            id: id ?? 0, key: sha256, author: authorId,
            capturedAt: momentTime.map { Date(timeIntervalSince1970: $0) },
            location: latitude.flatMap { lat in longitude.map { Coordinate(latitude: lat, longitude: $0) } },
            requestedMomentId: requestedMomentId, coverScore: coverScore)
    }
}
