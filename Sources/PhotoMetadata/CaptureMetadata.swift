import Foundation
import JSONValues
import MetadataReading

/// Everything Darkroom knows about a photo before decoding its pixels: when, where, which camera,
/// what the bytes are, and what the uploader's sidecar said. Each value records its source;
/// `warnings` says what was refused and why, `conflicts` where the sidecar disagreed with EXIF.
public struct CaptureMetadata: Sendable, Codable, Equatable {
    /// When the photo was taken, or nil when nothing says.
    public var captureTime: CaptureTime?
    /// Where the photo was taken, or nil when nothing usable says.
    public var location: GeoLocation?
    /// The EXIF orientation, 1–8; 1 when absent or invalid (with a warning).
    public var orientation: Int
    /// The camera maker (IFD0 Make), trimmed.
    public var make: String?
    /// The camera model (IFD0 Model), trimmed.
    public var model: String?
    /// `image/jpeg` or `image/png` from the magic bytes; nil for anything else, which the caller refuses.
    public var mimeType: String?
    /// The size of the file in bytes.
    public var byteSize: Int
    /// SHA-256 of the bytes, lowercase hex: the photo's identity.
    public var sha256: String
    /// The sidecar's `author_id`.
    public var authorId: String?
    /// The sidecar's `moment_id`.
    public var momentId: Int64?
    /// The sidecar's `title`.
    public var title: String?
    /// The sidecar's `focal_point`.
    public var focalPoint: SidecarFocalPoint?
    /// The sidecar's `visibility` as read (`public` or `private`).
    public var visibility: String?
    /// Human-readable notes on what was missing, refused or assumed.
    public var warnings: [String]
    /// Human-readable notes on where the sidecar disagreed with EXIF, and which value was kept.
    public var conflicts: [String]
    /// The camera's capture time (EXIF) when the sidecar's explicit `taken_at` disagreed with it
    /// and replaced it (`MetadataOptions.sidecarOverridesExif`); nil otherwise.
    public var cameraCaptureTime: CaptureTime?
    /// The camera's location (EXIF GPS) when the sidecar's explicit location disagreed with it
    /// and replaced it; nil otherwise.
    public var cameraLocation: GeoLocation?

    /// Where `location` came from, `.none` when there is none.
    public var locationSource: LocationSource { location?.source ?? .none }

    /// A value with every field given.
    public init(captureTime: CaptureTime?, location: GeoLocation?, orientation: Int, make: String?, model: String?,
                mimeType: String?, byteSize: Int, sha256: String, authorId: String? = nil, momentId: Int64? = nil,
                title: String? = nil, focalPoint: SidecarFocalPoint? = nil, visibility: String? = nil,
                warnings: [String] = [], conflicts: [String] = [], cameraCaptureTime: CaptureTime? = nil,
                cameraLocation: GeoLocation? = nil) {
        self.cameraCaptureTime = cameraCaptureTime
        self.cameraLocation = cameraLocation
        self.captureTime = captureTime
        self.location = location
        self.orientation = orientation
        self.make = make
        self.model = model
        self.mimeType = mimeType
        self.byteSize = byteSize
        self.sha256 = sha256
        self.authorId = authorId
        self.momentId = momentId
        self.title = title
        self.focalPoint = focalPoint
        self.visibility = visibility
        self.warnings = warnings
        self.conflicts = conflicts
    }

    enum CodingKeys: String, CodingKey {
        case captureTime = "capture_time"
        case location, orientation, make, model
        case mimeType = "mime_type"
        case byteSize = "byte_size"
        case sha256
        case authorId = "author_id"
        case momentId = "moment_id"
        case title
        case focalPoint = "focal_point"
        case visibility, warnings, conflicts
        case cameraCaptureTime = "camera_capture_time"
        case cameraLocation = "camera_location"
    }

    /// Encodes every key (nil as null) so that `darkroom inspect --json` always prints the same keys.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(captureTime, forKey: .captureTime)
        try container.encode(location, forKey: .location)
        try container.encode(orientation, forKey: .orientation)
        try container.encode(make, forKey: .make)
        try container.encode(model, forKey: .model)
        try container.encode(mimeType, forKey: .mimeType)
        try container.encode(byteSize, forKey: .byteSize)
        try container.encode(sha256, forKey: .sha256)
        try container.encode(authorId, forKey: .authorId)
        try container.encode(momentId, forKey: .momentId)
        try container.encode(title, forKey: .title)
        try container.encode(focalPoint, forKey: .focalPoint)
        try container.encode(visibility, forKey: .visibility)
        try container.encode(warnings, forKey: .warnings)
        try container.encode(conflicts, forKey: .conflicts)
        try container.encode(cameraCaptureTime, forKey: .cameraCaptureTime)
        try container.encode(cameraLocation, forKey: .cameraLocation)
    }

    /// The stable JSON form: snake_case keys, sorted, every key present, instants as ISO 8601 UTC.
    public func jsonData() throws -> Data {
        try StableJSON.encoder().encode(self)
    }

    /// Reads the form written by `jsonData()`.
    public static func fromJSON(_ data: Data) throws -> CaptureMetadata {
        try JSONDecoder().decode(CaptureMetadata.self, from: data)
    }
}
