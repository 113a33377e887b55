import Foundation
import MetadataReading

/// Where a capture time came from, in order of preference.
public enum TimeSource: String, Sendable, Codable {
    /// EXIF DateTimeOriginal with its recorded OffsetTimeOriginal.
    case exifOriginal = "exif_original"
    /// EXIF DateTimeOriginal with an offset derived from the GPS time stamp.
    case exifOriginalGPSOffset = "exif_original_gps_offset"
    /// EXIF DateTimeOriginal with the offset that makes it the sidecar's instant (Google
    /// Takeout's `photoTakenTime` is UTC), rounded to 15 minutes.
    case exifOriginalSidecarOffset = "exif_original_sidecar_offset"
    /// EXIF DateTimeOriginal in the zone the camera recorded in its maker note (Canon, Nikon):
    /// inferred, since the camera's zone setting may be stale.
    case exifOriginalMakerNoteZone = "exif_original_maker_note_zone"
    /// EXIF DateTimeOriginal in the time zone of the place it was taken, on that date
    /// (daylight saving included): inferred.
    case exifOriginalPlaceZone = "exif_original_place_zone"
    /// EXIF DateTimeOriginal in the configured default zone: the instant may be off by hours.
    case exifOriginalAssumedZone = "exif_original_assumed_zone"
    /// EXIF DateTimeDigitized (see `CaptureTime.offsetSource` for its zone).
    case exifDigitized = "exif_digitized"
    /// EXIF IFD0 DateTime, often the time of the last edit (see `CaptureTime.offsetSource`).
    case exifDateTime = "exif_datetime"
    /// The sidecar's `taken_at`.
    case sidecar
    /// The file's modification time: a last resort, never trusted.
    case fileTime = "file_time"
}

/// Where the UTC offset of a capture time came from.
public enum OffsetSource: String, Sendable, Codable {
    /// Recorded with the time (an EXIF OffsetTime* tag, or the offset in the sidecar's `taken_at`).
    case recorded
    /// Derived from the GPS time stamp, rounded to 15 minutes.
    case gps
    /// Derived from the sidecar's instant (the EXIF time had no offset), rounded to 15 minutes.
    case sidecar
    /// The zone the camera recorded in its maker note (Canon TimeInfo, Nikon WorldTime), with
    /// its daylight-saving flag.
    case makerNote = "maker_note"
    /// The IANA zone of the place where the photo was taken (the gazetteer's), at that date.
    case place
    /// Not known: the configured default zone was assumed (`offsetSeconds` is then nil).
    case assumed

    /// Whether the offset is known for certain (recorded with the time, or from the GPS clock or
    /// the sidecar's instant), rather than inferred from the camera's setting, the place or the
    /// default zone.
    public var isExact: Bool {
        switch self {
        case .recorded, .gps, .sidecar: true
        case .makerNote, .place, .assumed: false
        }
    }
}

/// When a photo was taken: the instant, the wall-clock time where it was taken, and how each was
/// learnt.
public struct CaptureTime: Sendable, Codable, Equatable {
    /// The instant in UTC, to the millisecond.
    public var instant: Date
    /// The wall-clock time on the camera, `2014-09-16T14:05:12` or `2014-09-16T14:05:12.345`.
    public var localTime: String
    /// The UTC offset of `localTime` in seconds, or nil when it is unknown and the default zone was
    /// assumed to compute `instant`.
    public var offsetSeconds: Int?
    /// Which field the time was read from.
    public var source: TimeSource
    /// Where the offset came from.
    public var offsetSource: OffsetSource
    /// False only for the file's modification time, which says when the file was written, not when
    /// the photo was taken.
    public var trusted: Bool

    /// A capture time with every field given.
    public init(instant: Date, localTime: String, offsetSeconds: Int?, source: TimeSource,
                offsetSource: OffsetSource, trusted: Bool) {
        self.instant = instant
        self.localTime = localTime
        self.offsetSeconds = offsetSeconds
        self.source = source
        self.offsetSource = offsetSource
        self.trusted = trusted
    }

    enum CodingKeys: String, CodingKey {
        case instant
        case localTime = "local_time"
        case offsetSeconds = "offset_seconds"
        case source
        case offsetSource = "offset_source"
        case trusted
    }

    /// Decodes the form written by `encode(to:)`, with `instant` as ISO 8601 text.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let text = try container.decode(String.self, forKey: .instant)
        guard let instant = ISO8601Instant.parse(text) else {
            throw DecodingError.dataCorruptedError(
                forKey: .instant, in: container,
                debugDescription: "expected an ISO 8601 UTC instant like 2014-09-16T13:05:12.345Z, found \(text)")
        }
        self.instant = instant
        localTime = try container.decode(String.self, forKey: .localTime)
        offsetSeconds = try container.decodeIfPresent(Int.self, forKey: .offsetSeconds)
        source = try container.decode(TimeSource.self, forKey: .source)
        offsetSource = try container.decode(OffsetSource.self, forKey: .offsetSource)
        trusted = try container.decode(Bool.self, forKey: .trusted)
    }

    /// Encodes every key (nil as null) and `instant` as ISO 8601 text in UTC, whatever the
    /// encoder's date strategy, so that the JSON form is stable.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(ISO8601Instant.format(instant), forKey: .instant)
        try container.encode(localTime, forKey: .localTime)
        try container.encode(offsetSeconds, forKey: .offsetSeconds)
        try container.encode(source, forKey: .source)
        try container.encode(offsetSource, forKey: .offsetSource)
        try container.encode(trusted, forKey: .trusted)
    }
}

/// ISO 8601 text for instants, `2014-09-16T13:05:12Z` or `2014-09-16T13:05:12.345Z`.
enum ISO8601Instant {
    static func format(_ date: Date) -> String {
        LocalDateTime(instant: date, offsetSeconds: 0).isoString + "Z"
    }

    static func parse(_ text: String) -> Date? {
        guard text.hasSuffix("Z"),
              case .valid(let wall) = LocalDateTime.parse(exif: String(text.dropLast()), years: 1...9999)
        else { return nil }
        return wall.instant(offsetSeconds: 0)
    }
}
