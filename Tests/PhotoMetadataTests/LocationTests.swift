import Foundation
import Testing
@testable import MetadataReading
@testable import PhotoMetadata

/// One row of the location table: GPS entries and the location (or the warning) they must give.
struct LocationCase: Sendable, CustomTestStringConvertible {
    var name: String
    var build: @Sendable (ExifFixture) -> [ExifFixture.Entry]
    var latitude: Double?
    var longitude: Double?
    var altitude: Double?
    var horizontalError: Double?
    var warning: String?
    var forceGPSDirectory = false

    var testDescription: String { name }
}

private func position(_ f: ExifFixture, _ lat: Double, _ latRef: String?, _ lon: Double, _ lonRef: String?)
    -> [ExifFixture.Entry]
{
    var entries = [f.dms(Tag.gpsLatitude, lat), f.dms(Tag.gpsLongitude, lon)]
    if let latRef { entries.append(f.ascii(Tag.gpsLatitudeRef, latRef)) }
    if let lonRef { entries.append(f.ascii(Tag.gpsLongitudeRef, lonRef)) }
    return entries
}

private let locationCases: [LocationCase] = [
    LocationCase(name: "north and east are positive", build: { position($0, 48.858093, "N", 2.294694, "E") },
                 latitude: 48.858093, longitude: 2.294694),
    LocationCase(name: "south and west are negated", build: { position($0, 33.856784, "S", 151.215297, "W") },
                 latitude: -33.856784, longitude: -151.215297),
    LocationCase(name: "lowercase references are accepted", build: { position($0, 1.5, "s", 2.5, "w") },
                 latitude: -1.5, longitude: -2.5),
    LocationCase(name: "exactly (0, 0) is no location", build: { position($0, 0, "N", 0, "E") },
                 warning: "(0, 0)"),
    LocationCase(name: "a missing latitude reference is no location", build: { position($0, 10, nil, 20, "E") },
                 warning: "GPSLatitudeRef missing"),
    LocationCase(name: "a missing longitude reference is no location", build: { position($0, 10, "N", 20, nil) },
                 warning: "GPSLongitudeRef missing"),
    LocationCase(name: "an invalid reference is no location", build: { position($0, 10, "X", 20, "E") },
                 warning: "\"X\""),
    LocationCase(name: "latitude 4294967295 is out of range", build: { f in
        [f.rationals(Tag.gpsLatitude, [(4_294_967_295, 1), (0, 1), (0, 1)]), f.ascii(Tag.gpsLatitudeRef, "N"),
         f.dms(Tag.gpsLongitude, 20), f.ascii(Tag.gpsLongitudeRef, "E")]
    }, warning: "outside -90...90"),
    LocationCase(name: "longitude 181 is out of range", build: { position($0, 10, "N", 181, "E") },
                 warning: "outside -180...180"),
    LocationCase(name: "a zero denominator is no location", build: { f in
        [f.rationals(Tag.gpsLatitude, [(48, 1), (30, 0), (0, 1)]), f.ascii(Tag.gpsLatitudeRef, "N"),
         f.dms(Tag.gpsLongitude, 2), f.ascii(Tag.gpsLongitudeRef, "E")]
    }, warning: "zero denominator"),
    LocationCase(name: "altitude above sea level (ref 0) with positioning error", build: { f in
        position(f, 46.5, "N", 7.9, "E") + [f.rationals(Tag.gpsAltitude, [(35_710, 10)]), f.byte(Tag.gpsAltitudeRef, 0),
                                             f.rationals(Tag.gpsHPositioningError, [(65, 10)])]
    }, latitude: 46.5, longitude: 7.9, altitude: 3571, horizontalError: 6.5),
    LocationCase(name: "altitude below sea level (ref 1) is negative", build: { f in
        position(f, 31.5, "N", 35.5, "E") + [f.rationals(Tag.gpsAltitude, [(430, 1)]), f.byte(Tag.gpsAltitudeRef, 1)]
    }, latitude: 31.5, longitude: 35.5, altitude: -430),
    LocationCase(name: "an altitude with a zero denominator is dropped, the position kept", build: { f in
        position(f, 31.5, "N", 35.5, "E") + [f.rationals(Tag.gpsAltitude, [(430, 0)])]
    }, latitude: 31.5, longitude: 35.5, altitude: nil, warning: "GPSAltitude"),
    LocationCase(name: "decimal degrees in one rational", build: { f in
        [f.rationals(Tag.gpsLatitude, [(51_762_408, 1_000_000)]), f.ascii(Tag.gpsLatitudeRef, "N"),
         f.rationals(Tag.gpsLongitude, [(317_892, 1_000_000)]), f.ascii(Tag.gpsLongitudeRef, "W")]
    }, latitude: 51.762408, longitude: -0.317892),
    LocationCase(name: "coordinates written as text (as HTC phones do) are read as numbers", build: { f in
        [f.ascii(Tag.gpsLatitude, "47 21 15.06"), f.ascii(Tag.gpsLatitudeRef, "N"),
         f.ascii(Tag.gpsLongitude, "10.191316"), f.ascii(Tag.gpsLongitudeRef, "E")]
    }, latitude: 47 + 21.0 / 60 + 15.06 / 3600, longitude: 10.191316, warning: "stored as text"),
    LocationCase(name: "coordinates as text with no number are no location", build: { f in
        [f.ascii(Tag.gpsLatitude, "unknown"), f.ascii(Tag.gpsLatitudeRef, "N"),
         f.ascii(Tag.gpsLongitude, "unknown"), f.ascii(Tag.gpsLongitudeRef, "E")]
    }, warning: "no GPSLatitude/GPSLongitude"),
    LocationCase(name: "an empty GPS IFD is no location", build: { _ in [] }, warning: "GPS IFD is empty",
                 forceGPSDirectory: true),
    LocationCase(name: "a GPS IFD without a position is no location", build: { f in [f.ascii(Tag.gpsDateStamp, "2024:01:01")] },
                 warning: "no GPSLatitude/GPSLongitude"),
]

@Suite("Location")
struct LocationTests {
    @Test("GPS table", arguments: locationCases)
    func gpsTable(_ testCase: LocationCase) throws {
        var fixture = ExifFixture()
        fixture.gps = testCase.build(fixture)
        fixture.forceGPSDirectory = testCase.forceGPSDirectory
        for bytes in [fixture.jpeg, fixture.png] {
            let metadata = PhotoMetadata.read(bytes, sidecar: nil, fileTime: nil, options: .standard)
            if let latitude = testCase.latitude, let longitude = testCase.longitude {
                let location = try #require(metadata.location, "\(metadata.warnings)")
                #expect(abs(location.latitude - latitude) < 1e-6)
                #expect(abs(location.longitude - longitude) < 1e-6)
                #expect(location.altitude == testCase.altitude)
                #expect(location.horizontalError == testCase.horizontalError)
                #expect(location.source == .exif)
            } else {
                #expect(metadata.location == nil)
                #expect(metadata.locationSource == LocationSource.none)
            }
            if let warning = testCase.warning {
                #expect(metadata.warnings.contains { $0.contains(warning) }, "\(metadata.warnings)")
            }
        }
    }

    @Test("the numbers in a GPS coordinate written as text")
    func numbersInText() {
        #expect(ExifTags.decimalNumbers(in: "47,21,15.06") == [47, 21, 15.06])
        #expect(ExifTags.decimalNumbers(in: "47 deg 21' 15.06\"") == [47, 21, 15.06])
        #expect(ExifTags.decimalNumbers(in: " -3.5") == [-3.5])
        #expect(ExifTags.decimalNumbers(in: "N/A").isEmpty)
    }

    @Test("the sidecar's location fills a file without one")
    func sidecarFills() throws {
        let sidecar = Sidecar(latitude: 48.85, longitude: 2.35, altitude: 35)
        let metadata = PhotoMetadata.read(ExifFixture().jpeg, sidecar: sidecar, fileTime: nil, options: .standard)
        let location = try #require(metadata.location)
        #expect(location == GeoLocation(latitude: 48.85, longitude: 2.35, altitude: 35, source: .sidecar))
        #expect(metadata.conflicts.isEmpty)
    }

    @Test("the sidecar fills a location EXIF refused")
    func sidecarFillsRefused() throws {
        var fixture = ExifFixture()
        fixture.gps = position(fixture, 0, "N", 0, "E")
        let metadata = PhotoMetadata.read(fixture.jpeg, sidecar: Sidecar(latitude: 10, longitude: 20),
                                          fileTime: nil, options: .standard)
        #expect(metadata.location?.source == .sidecar)
    }

    @Test("EXIF wins over a sidecar more than 100 m away, and the conflict is recorded")
    func sidecarConflict() throws {
        var fixture = ExifFixture()
        fixture.gps = position(fixture, 48.858093, "N", 2.294694, "E")
        // 0.01 degree of latitude is about 1.1 km.
        let far = PhotoMetadata.read(fixture.jpeg, sidecar: Sidecar(latitude: 48.868093, longitude: 2.294694),
                                     fileTime: nil, options: .standard)
        #expect(far.location?.source == .exif)
        #expect(far.conflicts.count == 1)
        #expect(far.conflicts.first?.contains("1112 m apart") == true)
        // 0.0004 degree is about 45 m.
        let near = PhotoMetadata.read(fixture.jpeg, sidecar: Sidecar(latitude: 48.858493, longitude: 2.294694),
                                      fileTime: nil, options: .standard)
        #expect(near.location?.source == .exif)
        #expect(near.conflicts.isEmpty)
    }

    @Test("great-circle distance matches a known value")
    func distance() {
        let paris = GeoLocation(latitude: 48.8566, longitude: 2.3522, source: .exif)
        let london = GeoLocation(latitude: 51.5074, longitude: -0.1278, source: .exif)
        #expect(abs(paris.distance(to: london) - 343_500) < 1_000)
    }
}
