import Moments

/// A point and a radius as a user gives them (`--lat --long --rad`, or the same keys in an HTTP
/// query or body), checked before they reach the catalog.
public enum PlaceCircle {
    /// The largest radius, in metres: 20,000 km, half the Earth's circumference, reaches every
    /// point of it; a larger one means nothing more.
    public static let maxRadiusMetres = 20_000_000.0

    /// The centre of the circle; throws the first field out of range: latitude in -90...90,
    /// longitude in -180...180, a radius above 0 metres and at most `maxRadiusMetres`.
    public static func center(lat: Double, long: Double, rad: Double) throws(FieldError) -> Coordinate {
        guard lat.isFinite, (-90...90).contains(lat) else { throw FieldError("lat", "must be between -90 and 90 (got \(lat))") }
        guard long.isFinite, (-180...180).contains(long) else { throw FieldError("long", "must be between -180 and 180 (got \(long))") }
        guard rad.isFinite, rad > 0 else { throw FieldError("rad", "must be a distance in metres above 0 (got \(rad))") }
        guard rad <= maxRadiusMetres else {
            throw FieldError("rad", "must be at most \(Int(maxRadiusMetres)) metres, half the Earth's circumference (got \(rad))")
        }
        return Coordinate(latitude: lat, longitude: long)
    }
}
