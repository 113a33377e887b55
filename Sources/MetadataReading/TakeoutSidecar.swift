import Foundation
import JSONValues

/// The per-photo JSON that Google Takeout writes beside each photo of a Google Photos export:
/// when the photo was taken (`photoTakenTime.timestamp`, seconds since 1970 as text) and where
/// (`geoData`, else `geoDataExif`: `latitude`, `longitude`, `altitude`; exactly 0, 0 means none).
///
/// ```json
/// {"title": "IMG_1.jpg", "photoTakenTime": {"timestamp": "1561978800", "formatted": "..."},
///  "geoData": {"latitude": 48.8566, "longitude": 2.3522, "altitude": 35.0}, ...}
/// ```
public struct TakeoutSidecar: Sendable, Equatable {
    /// The original file name Google Photos knew the photo by.
    public var title: String?
    /// The caption, when one was written.
    public var description: String?
    /// When the photo was taken: an instant, with no local time or zone.
    public var takenAt: Date?
    /// Degrees north, when a location is given.
    public var latitude: Double?
    /// Degrees east, when a location is given.
    public var longitude: Double?
    /// Metres above sea level, when a location is given.
    public var altitude: Double?
    /// Which object the location came from: `geoData` or `geoDataExif`.
    public var locationKey: String?

    /// The keys that only Takeout's JSON has: their presence tells it from a Darkroom sidecar
    /// (which has `author_id`, `taken_at`, `latitude`... at the top level).
    public static let distinctiveKeys: Set<String> = [
        "photoTakenTime", "creationTime", "geoData", "geoDataExif", "imageViews", "googlePhotosOrigin",
        "photoLastModifiedTime", "url", "people", "appSource",
    ]

    /// Whether a JSON object is Takeout's rather than Darkroom's.
    public static func isTakeout(_ object: [String: Any]) -> Bool {
        !distinctiveKeys.isDisjoint(with: object.keys)
    }

    /// Reads the fields of a Takeout JSON object. Values of the wrong kind read as absent; a
    /// timestamp of 0 and a location of exactly (0, 0) are what Takeout writes for "unknown".
    public init(object: [String: Any]) {
        title = object["title"] as? String
        description = (object["description"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        if let time = object["photoTakenTime"] as? [String: Any], let seconds = Self.number(time["timestamp"]),
           seconds.isFinite, seconds > 0 {
            takenAt = Date(timeIntervalSince1970: seconds)
        }
        for key in ["geoData", "geoDataExif"] {
            guard let geo = object[key] as? [String: Any],
                  let latitude = Self.number(geo["latitude"]), let longitude = Self.number(geo["longitude"]),
                  !(latitude == 0 && longitude == 0) else { continue }
            self.latitude = latitude
            self.longitude = longitude
            altitude = Self.number(geo["altitude"]).flatMap { $0 == 0 ? nil : $0 }
            locationKey = key
            break
        }
    }

    /// Parses Takeout JSON bytes; nil when they are not a JSON object.
    public init?(jsonBytes: [UInt8]) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(jsonBytes))) as? [String: Any] else { return nil }
        self.init(object: object)
    }

    /// A number written as a JSON number or as text (Takeout writes timestamps as text).
    private static func number(_ value: Any?) -> Double? {
        switch value {
        case let text as String: Double(text.trimmingCharacters(in: .whitespaces))
        case let number as NSNumber where !JSONValue.isBoolean(number): number.doubleValue
        default: nil
        }
    }

    /// The capture time as ISO 8601 text for a Darkroom sidecar's `taken_at`: Takeout gives an
    /// instant with no zone, so the wall time is written in `zone` (the configured default) with
    /// that zone's offset at that instant. The instant is exact; the local time is the zone's.
    public static func isoText(_ instant: Date, in zone: TimeZone) -> String {
        let offset = zone.secondsFromGMT(for: instant)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? zone
        let wall = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond],
                                           from: instant.addingTimeInterval(Double(offset)))
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        let milliseconds = (wall.nanosecond ?? 0) / 1_000_000
        let fraction = milliseconds > 0 ? String(format: ".%03d", milliseconds) : ""
        let sign = offset < 0 ? "-" : "+"
        let magnitude = abs(offset)
        return String(format: "%04d", wall.year ?? 0) + "-" + two(wall.month) + "-" + two(wall.day) + "T"
            + two(wall.hour) + ":" + two(wall.minute) + ":" + two(wall.second) + fraction
            + sign + two(magnitude / 3600) + ":" + two(magnitude / 60 % 60)
    }
}
