import Foundation

/// A place: a point with a radius in metres (the seeds' Place: latitude, longitude, radius, name).
public struct Place: Sendable, Hashable, Codable, Identifiable {
    /// The catalog's place id.
    public var id: Int64
    /// A human name ("Café Central"); nil for places the worker created for automatic moments.
    public var name: String?
    /// The centre of the place.
    public var center: Coordinate
    /// How far the place reaches from its centre, in metres (great-circle); always positive.
    public var radiusMetres: Double

    /// A place from its fields.
    public init(id: Int64, name: String? = nil, center: Coordinate, radiusMetres: Double) {
        self.id = id
        self.name = name
        self.center = center
        self.radiusMetres = radiusMetres
    }

    /// Whether the point lies inside the place's circle, boundary included.
    public func contains(_ point: Coordinate) -> Bool {
        Geo.distanceMetres(center, point) <= radiusMetres
    }

    /// The point's distance from the centre as a fraction of the radius: 0 at the centre,
    /// 1 on the edge. Used to rank places and moments by how well they hold a point.
    public func relativeDistance(of point: Coordinate) -> Double {
        Geo.distanceMetres(center, point) / radiusMetres
    }

    /// Whether the place has a usable geometry: a valid centre and a positive, finite radius.
    public var isValid: Bool {
        center.isValid && radiusMetres.isFinite && radiusMetres > 0
    }

    /// Whether two places cover the same circle (names aside).
    func hasSameGeometry(as other: Place) -> Bool {
        center == other.center && radiusMetres == other.radiusMetres
    }
}
