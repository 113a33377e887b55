import Foundation
import Gazetteer

/// The IANA time zone of a point, from the gazetteer (its nearest city's zone), as Foundation
/// knows it; nil when the gazetteer is not loaded or Foundation's tzdata lacks the zone.
enum PlaceZone {
    static func zone(latitude: Double, longitude: Double) -> TimeZone? {
        guard let gazetteer = Gazetteer.shared,
              let identifier = gazetteer.timeZone(latitude: latitude, longitude: longitude) else { return nil }
        return TimeZone(identifier: identifier)
    }
}

/// Why this process has no place zones or place names (the gazetteer's data file could not be
/// read: photos without an offset then fall back to `metadata.default_time_zone`); nil when it has.
public var gazetteerProblem: String? { Gazetteer.loadProblem }
