import Foundation

/// Where a location came from.
public enum LocationSource: String, Sendable, Codable {
    /// The GPS IFD of the photo's EXIF.
    case exif
    /// The sidecar's `latitude`/`longitude`.
    case sidecar
    /// No usable location.
    case none
}

/// Where a photo was taken, in WGS 84 signed decimal degrees (south and west negative).
public struct GeoLocation: Sendable, Codable, Equatable {
    /// Degrees north of the equator, −90…90.
    public var latitude: Double
    /// Degrees east of Greenwich, −180…180.
    public var longitude: Double
    /// Metres above sea level (negative below), when known.
    public var altitude: Double?
    /// The GPS receiver's horizontal positioning error in metres, when recorded.
    public var horizontalError: Double?
    /// Where the location was read.
    public var source: LocationSource

    /// A location with every field given.
    public init(latitude: Double, longitude: Double, altitude: Double? = nil, horizontalError: Double? = nil,
                source: LocationSource) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.horizontalError = horizontalError
        self.source = source
    }

    enum CodingKeys: String, CodingKey {
        case latitude, longitude, altitude
        case horizontalError = "horizontal_error"
        case source
    }

    /// Encodes every key, nil as null, so that the JSON form always has the same keys.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(latitude, forKey: .latitude)
        try container.encode(longitude, forKey: .longitude)
        try container.encode(altitude, forKey: .altitude)
        try container.encode(horizontalError, forKey: .horizontalError)
        try container.encode(source, forKey: .source)
    }

    /// Great-circle (haversine) distance to another location in metres.
    public func distance(to other: GeoLocation) -> Double {
        let radians = Double.pi / 180
        let dLat = (other.latitude - latitude) * radians
        let dLon = (other.longitude - longitude) * radians
        let a = sin(dLat / 2) * sin(dLat / 2)
            + cos(latitude * radians) * cos(other.latitude * radians) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * MetadataLimits.earthRadiusMetres * asin(min(1, sqrt(a)))
    }

    /// Why a latitude/longitude pair is not a place, or nil when it is one. Exactly (0, 0) counts
    /// as no place: it is what a GPS without a fix writes.
    static func problem(latitude: Double, longitude: Double) -> String? {
        if !latitude.isFinite || !longitude.isFinite { return "not a number" }
        if abs(latitude) > 90 { return "latitude \(latitude) outside -90...90" }
        if abs(longitude) > 180 { return "longitude \(longitude) outside -180...180" }
        if latitude == 0 && longitude == 0 { return "exactly (0, 0), the position of a GPS without a fix" }
        return nil
    }
}
