import Moments

/// A point and a radius as a user gives them (`--lat --long --rad`, or the same keys in an HTTP
/// query or body), checked before they reach the catalog.
public enum PlaceCircle {
    /// The centre of the circle; throws the first field out of range: latitude in -90...90,
    /// longitude in -180...180, a radius above 0 metres.
    public static func center(lat: Double, long: Double, rad: Double) throws(FieldError) -> Coordinate {
        guard lat.isFinite, (-90...90).contains(lat) else { throw FieldError("lat", "must be between -90 and 90 (got \(lat))") }
        guard long.isFinite, (-180...180).contains(long) else { throw FieldError("long", "must be between -180 and 180 (got \(long))") }
        guard rad.isFinite, rad > 0 else { throw FieldError("rad", "must be a distance in metres above 0 (got \(rad))") }
        return Coordinate(latitude: lat, longitude: long)
    }
}
