import Foundation

/// A point on the Earth, in decimal degrees (WGS 84 as GPS reports it).
public struct Coordinate: Sendable, Hashable, Codable {
    /// Latitude in degrees, -90 (south pole) ... 90 (north pole).
    public var latitude: Double
    /// Longitude in degrees, -180 ... 180 (both ends name the same meridian).
    public var longitude: Double

    /// A coordinate from its latitude and longitude in degrees.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Whether both values are finite and in range; an invalid coordinate is never a location.
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
    }
}

/// A latitude/longitude rectangle that never crosses the date line, for index range queries.
public struct BoundingBox: Sendable, Hashable, Codable {
    /// Southern edge, degrees.
    public var minLatitude: Double
    /// Northern edge, degrees.
    public var maxLatitude: Double
    /// Western edge, degrees; never greater than `maxLongitude`.
    public var minLongitude: Double
    /// Eastern edge, degrees.
    public var maxLongitude: Double

    /// A box from its four edges in degrees.
    public init(minLatitude: Double, maxLatitude: Double, minLongitude: Double, maxLongitude: Double) {
        self.minLatitude = minLatitude
        self.maxLatitude = maxLatitude
        self.minLongitude = minLongitude
        self.maxLongitude = maxLongitude
    }

    /// Whether the coordinate lies inside the box, edges included.
    public func contains(_ point: Coordinate) -> Bool {
        (minLatitude...maxLatitude).contains(point.latitude)
            && (minLongitude...maxLongitude).contains(point.longitude)
    }
}

/// Great-circle geometry on a spherical Earth: distances, index boxes and destinations.
public enum Geo {
    /// The mean Earth radius (IUGG R1), in metres.
    public static let meanEarthRadiusMetres = 6_371_008.8

    /// Boxes are widened by this many degrees (about 1 mm) so that rounding never drops a
    /// point lying exactly on a circle from an index query.
    static let boxSlackDegrees = 1e-8

    /// The great-circle (haversine) distance between two coordinates, in metres.
    ///
    /// Exact across the date line (179.9999 and -179.9999 are 22 m apart at the equator) and at
    /// the poles (every longitude at latitude 90 is the same point).
    public static func distanceMetres(_ a: Coordinate, _ b: Coordinate) -> Double {
        let phi1 = radians(a.latitude), phi2 = radians(b.latitude)
        let halfDeltaPhi = (phi2 - phi1) / 2
        let halfDeltaLambda = radians(b.longitude - a.longitude) / 2
        let sinPhi = sin(halfDeltaPhi), sinLambda = sin(halfDeltaLambda)
        let h = sinPhi * sinPhi + cosLatitude(a.latitude) * cosLatitude(b.latitude) * sinLambda * sinLambda
        let clamped = min(1, max(0, h))
        return 2 * meanEarthRadiusMetres * atan2(clamped.squareRoot(), (1 - clamped).squareRoot())
    }

    /// The latitude/longitude boxes that together cover every point within `radiusMetres` of
    /// `center`: one box, or two when the circle crosses the date line; a circle holding a pole
    /// gets the full longitude range. The boxes are a superset: filter by `distanceMetres`.
    public static func boundingBoxes(around center: Coordinate, radiusMetres: Double) -> [BoundingBox] {
        let delta = max(0, radiusMetres) / meanEarthRadiusMetres
        let slack = boxSlackDegrees
        guard delta < .pi else {
            return [BoundingBox(minLatitude: -90, maxLatitude: 90, minLongitude: -180, maxLongitude: 180)]
        }
        let phi = radians(center.latitude)
        let minPhi = phi - delta, maxPhi = phi + delta
        let minLat = max(-90, degrees(minPhi) - slack), maxLat = min(90, degrees(maxPhi) + slack)
        if maxPhi >= .pi / 2 || minPhi <= -.pi / 2 {
            return [BoundingBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: -180, maxLongitude: 180)]
        }
        // The widest longitude reached by the circle (tangent meridians), not the naive r/cos(phi).
        let ratio = min(1, sin(delta) / cos(phi))
        let halfWidth = degrees(asin(ratio)) + slack
        let west = center.longitude - halfWidth, east = center.longitude + halfWidth
        if west < -180 {
            return [BoundingBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: west + 360, maxLongitude: 180),
                    BoundingBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: -180, maxLongitude: east)]
        }
        if east > 180 {
            return [BoundingBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: west, maxLongitude: 180),
                    BoundingBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: -180, maxLongitude: east - 360)]
        }
        return [BoundingBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: west, maxLongitude: east)]
    }

    /// The point reached by travelling `distanceMetres` along a great circle from `start` at the
    /// initial `bearingDegrees` (0 north, 90 east); longitude normalised to -180 ..< 180.
    public static func destination(from start: Coordinate, bearingDegrees: Double, distanceMetres: Double) -> Coordinate {
        let delta = distanceMetres / meanEarthRadiusMetres
        let theta = radians(bearingDegrees)
        let phi1 = radians(start.latitude), lambda1 = radians(start.longitude)
        let sinPhi2 = sin(phi1) * cos(delta) + cos(phi1) * sin(delta) * cos(theta)
        let phi2 = asin(min(1, max(-1, sinPhi2)))
        let lambda2 = lambda1 + atan2(sin(theta) * sin(delta) * cos(phi1), cos(delta) - sin(phi1) * sinPhi2)
        return Coordinate(latitude: degrees(phi2), longitude: normalisedLongitude(degrees(lambda2)))
    }

    /// The coordinate as a point in Earth-centred Cartesian space, in metres on the mean sphere.
    /// The straight-line (chord) distance between two such points never exceeds their
    /// great-circle distance, which is what makes a Cartesian grid a safe index.
    static func cartesian(_ c: Coordinate) -> (x: Double, y: Double, z: Double) {
        let cosPhi = cosLatitude(c.latitude)
        let lambda = radians(c.longitude)
        return (meanEarthRadiusMetres * cosPhi * cos(lambda),
                meanEarthRadiusMetres * cosPhi * sin(lambda),
                meanEarthRadiusMetres * sin(radians(c.latitude)))
    }

    /// A longitude folded into -180 ..< 180.
    static func normalisedLongitude(_ longitude: Double) -> Double {
        var l = (longitude + 180).truncatingRemainder(dividingBy: 360)
        if l < 0 { l += 360 }
        return l - 180
    }

    /// cos(latitude), exactly 0 at the poles so that longitude cannot matter there.
    private static func cosLatitude(_ latitude: Double) -> Double {
        abs(latitude) == 90 ? 0 : cos(radians(latitude))
    }

    private static func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
    private static func degrees(_ radians: Double) -> Double { radians * 180 / .pi }
}
