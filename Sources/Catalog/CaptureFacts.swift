import Foundation
import JSONValues
import Moments

/// When and where a photo was taken, as a picture's columns hold them: what its metadata gives
/// a new picture (`PictureRecordBuilder`), and what a duplicate of a picture's bytes may give a
/// picture that lacks them (`PictureRecord.completed(by:)`).
public struct CaptureFacts: Sendable, Equatable {
    /// A capture time with its sources (`pictures.captured_at` and the columns beside it).
    public struct Time: Sendable, Equatable {
        public var capturedAt: Double
        public var capturedLocal: String?
        public var capturedOffset: Int?
        /// `TimeSource`'s raw value.
        public var source: String?
        /// `OffsetSource`'s raw value.
        public var zoneSource: String?
        /// False for a file time, and for a time that cannot be right (`CaptureTimePlausibility`).
        public var trusted: Bool

        public init(capturedAt: Double, capturedLocal: String?, capturedOffset: Int?, source: String?,
                    zoneSource: String?, trusted: Bool) {
            self.capturedAt = capturedAt
            self.capturedLocal = capturedLocal
            self.capturedOffset = capturedOffset
            self.source = source
            self.zoneSource = zoneSource
            self.trusted = trusted
        }
    }

    /// A location with its source (`pictures.latitude` and the columns beside it).
    public struct Location: Sendable, Equatable {
        public var latitude: Double
        public var longitude: Double
        public var altitude: Double?
        public var positionError: Double?
        /// `LocationSource`'s raw value.
        public var source: String

        public init(latitude: Double, longitude: Double, altitude: Double?, positionError: Double?, source: String) {
            self.latitude = latitude
            self.longitude = longitude
            self.altitude = altitude
            self.positionError = positionError
            self.source = source
        }
    }

    public var time: Time?
    public var location: Location?
    /// The camera's time and location, where the backend's explicit ones replaced them.
    public var cameraCapturedAt: Double?
    public var cameraLatitude: Double?
    public var cameraLongitude: Double?
    /// The metadata read (`pictures.metadata_json`): its `capture_time` and `location` go with
    /// the values when a duplicate completes a picture.
    public var metadataJson: String
    /// The name the photo arrived under.
    public var sourceName: String

    public init(time: Time?, location: Location?, cameraCapturedAt: Double? = nil, cameraLatitude: Double? = nil,
                cameraLongitude: Double? = nil, metadataJson: String, sourceName: String) {
        self.time = time
        self.location = location
        self.cameraCapturedAt = cameraCapturedAt
        self.cameraLatitude = cameraLatitude
        self.cameraLongitude = cameraLongitude
        self.metadataJson = metadataJson
        self.sourceName = sourceName
    }

    /// The location source of a picture without one (`LocationSource.none`).
    public static let noLocation = "none"
}

extension PictureRecord {
    /// When and where, as this picture's columns hold them.
    public var captureFacts: CaptureFacts {
        CaptureFacts(
            time: capturedAt.map { at in
                CaptureFacts.Time(capturedAt: at, capturedLocal: capturedLocal, capturedOffset: capturedOffset,
                                  source: timeSource, zoneSource: timeZoneSource, trusted: timeTrusted)
            },
            location: latitude.flatMap { lat in
                longitude.map { long in
                    CaptureFacts.Location(latitude: lat, longitude: long, altitude: altitude, positionError: positionError,
                                          source: locationSource)
                }
            },
            cameraCapturedAt: cameraCapturedAt, cameraLatitude: cameraLatitude, cameraLongitude: cameraLongitude,
            metadataJson: metadataJson, sourceName: sourceName)
    }

    /// Sets the time columns from `time`, and `momentTime`, which moments use: only a trusted
    /// time (a file time says when a copy was made).
    mutating func setTime(_ time: CaptureFacts.Time?, camera: Double?) {
        capturedAt = time?.capturedAt
        capturedLocal = time?.capturedLocal
        capturedOffset = time?.capturedOffset
        timeSource = time?.source
        timeZoneSource = time?.zoneSource
        timeTrusted = time?.trusted ?? false
        momentTime = time.flatMap { $0.trusted ? $0.capturedAt : nil }
        cameraCapturedAt = camera
    }

    /// Sets the location columns from `location` (`none` as the source without one).
    mutating func setLocation(_ location: CaptureFacts.Location?, cameraLatitude: Double?, cameraLongitude: Double?) {
        latitude = location?.latitude
        longitude = location?.longitude
        altitude = location?.altitude
        positionError = location?.positionError
        locationSource = location?.source ?? CaptureFacts.noLocation
        self.cameraLatitude = cameraLatitude
        self.cameraLongitude = cameraLongitude
    }

    /// Sets every time and location column from `facts` (not `metadataJson`).
    public mutating func setCapture(_ facts: CaptureFacts) {
        setTime(facts.time, camera: facts.cameraCapturedAt)
        setLocation(facts.location, cameraLatitude: facts.cameraLatitude, cameraLongitude: facts.cameraLongitude)
    }

    /// This picture completed by a duplicate of its bytes that arrived with more (a Google
    /// Takeout file with its sidecar, after a bare copy): its trusted capture time when this
    /// picture has none or only an untrusted one, or when both read the same clock time and the
    /// duplicate knows its zone better (an old phone's EXIF time has no offset: the bare copy's
    /// zone was assumed, the Takeout sidecar's instant gives it); its location when this one
    /// has none. A value this picture has from a trusted source is never replaced otherwise:
    /// the first one stays. The metadata read takes the duplicate's `capture_time` or
    /// `location` too, with a warning saying where they came from. Nil when the duplicate adds
    /// nothing.
    public func completed(by duplicate: CaptureFacts) -> PictureRecord? {
        var picture = self
        var took: [String] = []
        var keys: [String] = []
        if let time = duplicate.time, time.trusted,
           momentTime == nil
            || (time.capturedLocal != nil && time.capturedLocal == capturedLocal
                && Self.zoneRank(time.zoneSource) > Self.zoneRank(timeZoneSource)) {
            picture.setTime(time, camera: duplicate.cameraCapturedAt)
            took.append("capture time (\(time.source ?? "unknown source"))")
            keys += ["capture_time", "camera_capture_time"]
        }
        if latitude == nil || longitude == nil, let location = duplicate.location {
            picture.setLocation(location, cameraLatitude: duplicate.cameraLatitude, cameraLongitude: duplicate.cameraLongitude)
            took.append("location (\(location.source))")
            keys += ["location", "camera_location"]
        }
        guard !took.isEmpty else { return nil }
        let note = took.joined(separator: " and ") + " from \(duplicate.sourceName), a duplicate of these bytes that had them"
        picture.metadataJson = Self.metadata(metadataJson, taking: keys, from: duplicate.metadataJson, note: note)
        return picture
    }

    /// How well a capture time's zone is known (`OffsetSource`'s raw values): recorded with the
    /// time, or from the GPS clock or a sidecar's instant, above the camera's maker note, above
    /// the place's zone, above an assumed default.
    static func zoneRank(_ source: String?) -> Int {
        switch source {
        case "recorded", "gps", "sidecar": 3
        case "maker_note": 2
        case "place": 1
        default: 0
        }
    }

    /// `metadata` with the values of `keys` taken from `other` and `note` added to its warnings
    /// (in the stable form it was written in). Text that is not a JSON object is kept, with the
    /// note alone added when it is.
    static func metadata(_ metadata: String, taking keys: [String], from other: String, note: String) -> String {
        guard case .object(var object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(metadata.utf8)) else { return metadata }
        if case .object(let theirs)? = try? JSONDecoder().decode(JSONValue.self, from: Data(other.utf8)) {
            for key in keys { object[key] = theirs[key] ?? .null }
        }
        var warnings: [JSONValue] = if case .array(let list)? = object["warnings"] { list } else { [] }
        warnings.append(.string(note))
        object["warnings"] = .array(warnings)
        return StableJSON.string(JSONValue.object(object))
    }

    /// The columns `completed(by:)` may change, beside those the moments engine writes itself
    /// (`moment_time`, `latitude`, `longitude`), which it also holds.
    public static let completedColumns = [
        "captured_at", "captured_local", "captured_offset", "time_source", "time_zone_source", "time_trusted",
        "moment_time", "camera_captured_at", "latitude", "longitude", "altitude", "position_error", "location_source",
        "camera_latitude", "camera_longitude", "metadata_json",
    ]
}

extension MomentEvent {
    /// The engine's events of filing picture `id` again with new facts (`MomentEngine.ingest`
    /// of a known id), as an outbox shows an added picture's moment changes: the picture was
    /// never removed from the catalog, so no `pictureRemoved` for it, and its `pictureAdded`
    /// only when its moment changed (from `before`). Other events (moments created, merged,
    /// deleted, covers) are kept.
    public static func refiled(_ events: [MomentEvent], pictureId id: Int64, before: Int64?) -> [MomentEvent] {
        events.filter { event in
            switch event {
            case .pictureRemoved(let picture, _): picture != id
            case .pictureAdded(let picture, let moment): picture != id || moment != before
            default: true
            }
        }
    }
}
