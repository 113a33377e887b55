import Foundation
import Testing
@testable import Moments
import SeededRandom

@Suite("Great-circle geometry")
struct GeoTests {
    /// 0.0002 degrees of a great circle on the mean sphere.
    static let twoTenThousandthsOfADegree = 0.0002 * .pi / 180 * Geo.meanEarthRadiusMetres

    struct DistanceCase: Sendable, CustomTestStringConvertible {
        let name: String
        let a: Coordinate
        let b: Coordinate
        let metres: Double
        let tolerance: Double
        var testDescription: String { name }
    }

    static let distances: [DistanceCase] = [
        .init(name: "same point", a: Coordinate(latitude: 10, longitude: 20), b: Coordinate(latitude: 10, longitude: 20),
              metres: 0, tolerance: 0),
        .init(name: "across the date line at the equator",
              a: Coordinate(latitude: 0, longitude: 179.9999), b: Coordinate(latitude: 0, longitude: -179.9999),
              metres: twoTenThousandthsOfADegree, tolerance: 1e-6),
        .init(name: "date line, written as 180 and -180", a: Coordinate(latitude: 0, longitude: 180),
              b: Coordinate(latitude: 0, longitude: -180), metres: 0, tolerance: 1e-6),
        .init(name: "north pole at two longitudes", a: Coordinate(latitude: 90, longitude: 0),
              b: Coordinate(latitude: 90, longitude: 120), metres: 0, tolerance: 0),
        .init(name: "south pole at two longitudes", a: Coordinate(latitude: -90, longitude: -45),
              b: Coordinate(latitude: -90, longitude: 170), metres: 0, tolerance: 0),
        .init(name: "over the north pole", a: Coordinate(latitude: 89.9999, longitude: 0),
              b: Coordinate(latitude: 89.9999, longitude: 180), metres: twoTenThousandthsOfADegree, tolerance: 1e-6),
        .init(name: "pole to equator", a: Coordinate(latitude: 90, longitude: 0), b: Coordinate(latitude: 0, longitude: 77),
              metres: .pi / 2 * Geo.meanEarthRadiusMetres, tolerance: 1e-6),
        .init(name: "antipodes", a: Coordinate(latitude: 0, longitude: 0), b: Coordinate(latitude: 0, longitude: 180),
              metres: .pi * Geo.meanEarthRadiusMetres, tolerance: 1e-6),
        // Paris to London on the mean sphere (published haversine value, 343.5 km).
        .init(name: "Paris to London", a: Coordinate(latitude: 48.8566, longitude: 2.3522),
              b: Coordinate(latitude: 51.5074, longitude: -0.1278), metres: 343_556, tolerance: 100),
    ]

    @Test("distance is the great-circle distance", arguments: distances)
    func distance(_ c: DistanceCase) {
        #expect(abs(Geo.distanceMetres(c.a, c.b) - c.metres) <= c.tolerance)
        #expect(Geo.distanceMetres(c.a, c.b) == Geo.distanceMetres(c.b, c.a))
    }

    @Test("destination travels the asked distance, across the date line and near the poles")
    func destinationRoundTrip() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<500 {
            let start = Coordinate(latitude: .random(in: -89.9...89.9, using: &rng), longitude: .random(in: -180..<180, using: &rng))
            let metres = Double.random(in: 0...50_000, using: &rng)
            let end = Geo.destination(from: start, bearingDegrees: .random(in: 0..<360, using: &rng), distanceMetres: metres)
            #expect(abs(Geo.distanceMetres(start, end) - metres) < 1e-3)
            #expect(end.isValid)
        }
    }

    @Test("bounding boxes hold every point of the circle, split at the date line, whole at a pole")
    func boundingBoxesCoverTheCircle() {
        var rng = SplitMix64(seed: 11)
        let centres = [Coordinate(latitude: 0, longitude: 179.9995), Coordinate(latitude: 0, longitude: -179.9995),
                       Coordinate(latitude: 89.999, longitude: 10), Coordinate(latitude: -89.999, longitude: -170),
                       Coordinate(latitude: 60, longitude: 0), Fixture.origin]
        for center in centres {
            let radius = 500.0
            let boxes = Geo.boundingBoxes(around: center, radiusMetres: radius)
            for _ in 0..<400 {
                let p = Geo.destination(from: center, bearingDegrees: .random(in: 0..<360, using: &rng),
                                        distanceMetres: .random(in: 0...radius, using: &rng))
                #expect(boxes.contains { $0.contains(p) }, "\(p) within \(radius) m of \(center) is outside \(boxes)")
            }
        }
        #expect(Geo.boundingBoxes(around: Coordinate(latitude: 0, longitude: 179.9995), radiusMetres: 500).count == 2)
        let polar = Geo.boundingBoxes(around: Coordinate(latitude: 89.999, longitude: 10), radiusMetres: 500)
        #expect(polar.count == 1 && polar[0].minLongitude == -180 && polar[0].maxLongitude == 180 && polar[0].maxLatitude == 90)
    }

    @Test("the grid indexes never miss a point within the radius (date line and poles included)")
    func gridIsASuperset() {
        var rng = SplitMix64(seed: 3)
        let centres = [Coordinate(latitude: 0, longitude: 180), Coordinate(latitude: 90, longitude: 0),
                       Coordinate(latitude: -89.9999, longitude: 45), Fixture.origin]
        for center in centres {
            for radius in [1.0, 150, 5_000, 400_000] {
                var points = PointGrid()
                var discs = DiscGrid()
                var inside: [Int64: Coordinate] = [:]
                for id in Int64(0)..<200 {
                    let p = Geo.destination(from: center, bearingDegrees: .random(in: 0..<360, using: &rng),
                                            distanceMetres: .random(in: 0...(radius * 1.5), using: &rng))
                    points.insert(id, at: p)
                    discs.insert(id, center: p, radius: radius)
                    if Geo.distanceMetres(p, center) <= radius { inside[id] = p }
                }
                let near = points.candidates(near: center, radius: radius)
                let holding = discs.candidates(containing: center)
                #expect(Set(inside.keys).isSubset(of: near))
                #expect(Set(inside.keys).isSubset(of: holding))
            }
        }
    }

    @Test("a circle's edge point is inside, one metre further is outside")
    func placeBoundary() {
        let place = Place(id: 1, center: Fixture.origin, radiusMetres: 100)
        #expect(place.contains(Fixture.point(99)))
        #expect(!place.contains(Fixture.point(101)))
        #expect(abs(place.relativeDistance(of: Fixture.point(50)) - 0.5) < 1e-9)
    }
}
