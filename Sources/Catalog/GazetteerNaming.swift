import Foundation
import Gazetteer
import Moments

/// Automatic places and moments named from GeoNames' cities (the `Gazetteer`): the nearest city
/// within `cityMetres` ("Brecon, Wales, GB"), else the region and country of the nearest within
/// `regionMetres` ("Wales, GB"), else nothing.
public struct GazetteerNaming: AutomaticNaming {
    public var cityMetres: Double = 30_000
    public var regionMetres: Double = 300_000
    let gazetteer: Gazetteer

    /// The naming the catalogs use: nil when the gazetteer file cannot be loaded (places and
    /// moments then stay unnamed, as before it).
    public static let standard: GazetteerNaming? = Gazetteer.shared.map { GazetteerNaming(gazetteer: $0) }

    public init(gazetteer: Gazetteer) {
        self.gazetteer = gazetteer
    }

    public func placeName(at center: Coordinate) -> String? {
        guard let nearby = gazetteer.nearest(latitude: center.latitude, longitude: center.longitude, within: regionMetres) else {
            return nil
        }
        if nearby.distanceMetres <= cityMetres { return nearby.city.displayName }
        return ((nearby.city.region.map { [$0] } ?? []) + [nearby.city.countryCode]).joined(separator: ", ")
    }

    public func timeZone(at point: Coordinate) -> TimeZone? {
        gazetteer.timeZone(latitude: point.latitude, longitude: point.longitude).flatMap(TimeZone.init(identifier:))
    }
}
