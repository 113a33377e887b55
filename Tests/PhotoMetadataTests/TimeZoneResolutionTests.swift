import Foundation
import Gazetteer
import MetadataReading
@testable import PhotoMetadata
import SeededRandom
import Testing

/// The order in which a capture time without a recorded offset gets one: GPS clock, the camera's
/// maker note, the place's zone on that date, the default zone; and times that cannot be right.
@Suite("Time zone resolution")
struct TimeZoneResolutionTests {
    private func located(_ wall: String, latitude: Double, longitude: Double, gps: (date: String, time: [UInt32])? = nil) -> [UInt8] {
        var fixture = ExifFixture()
        fixture.exif = [fixture.ascii(Tag.dateTimeOriginal, wall)]
        fixture.gps = [
            fixture.ascii(Tag.gpsLatitudeRef, latitude >= 0 ? "N" : "S"), fixture.dms(Tag.gpsLatitude, latitude),
            fixture.ascii(Tag.gpsLongitudeRef, longitude >= 0 ? "E" : "W"), fixture.dms(Tag.gpsLongitude, longitude),
        ]
        if let gps {
            fixture.gps.append(fixture.ascii(Tag.gpsDateStamp, gps.date))
            fixture.gps.append(fixture.rationals(Tag.gpsTimeStamp, gps.time.map { ($0, 1) }))
        }
        return fixture.jpeg
    }

    private func read(_ bytes: [UInt8], sidecar: Sidecar? = nil, zone: String = "UTC") -> CaptureMetadata {
        PhotoMetadata.read(bytes, sidecar: sidecar, fileTime: nil,
                           options: MetadataOptions(defaultTimeZone: TimeZone(identifier: zone) ?? .gmt))
    }

    @Test("a located photo without an offset takes its place's zone on that date, across a daylight-saving change")
    func placeZoneAcrossDaylightSaving() throws {
        try #require(Gazetteer.shared != nil, "gazetteer not loaded: \(Gazetteer.loadProblem ?? "")")
        // Brecon, Wales: GMT in March (before the 31 March change), BST in July.
        let cases: [(wall: String, offset: Int, instant: String)] = [
            ("2024:03:30 12:00:00", 0, "2024-03-30T12:00:00Z"),
            ("2024:03:31 03:00:00", 3600, "2024-03-31T02:00:00Z"),
            ("2024:07:14 12:00:00", 3600, "2024-07-14T11:00:00Z"),
        ]
        for c in cases {
            let time = try #require(read(located(c.wall, latitude: 51.94, longitude: -3.39), zone: "Asia/Tokyo").captureTime)
            #expect(time.source == .exifOriginalPlaceZone)
            #expect(time.offsetSource == .place)
            #expect(!time.offsetSource.isExact)
            #expect(time.offsetSeconds == c.offset, "\(c.wall)")
            #expect(ISO8601Instant.format(time.instant) == c.instant)
        }
    }

    @Test("a sidecar taken_at without an offset takes its place's zone too")
    func sidecarPlaceZone() throws {
        try #require(Gazetteer.shared != nil, "gazetteer not loaded: \(Gazetteer.loadProblem ?? "")")
        let sidecar = Sidecar(latitude: 48.8566, longitude: 2.3522, takenAt: "2024-07-14T10:00:00")
        let time = try #require(read(ExifFixture().jpeg, sidecar: sidecar).captureTime)
        #expect(time.source == .sidecar)
        #expect(time.offsetSource == .place)
        #expect(ISO8601Instant.format(time.instant) == "2024-07-14T08:00:00Z")
    }

    @Test("the GPS clock gives the offset only within two minutes of a whole quarter hour")
    func gpsConsistency() throws {
        // 12:00:30 local, 11:00:00 GPS: +01:00 with a 30 s drift.
        let near = try #require(read(located("2024:07:14 12:00:30", latitude: 51.94, longitude: -3.39,
                                             gps: ("2024:07:14", [11, 0, 0]))).captureTime)
        #expect(near.offsetSource == .gps)
        #expect(near.offsetSeconds == 3600)
        // 12:07:00 local, 11:00:00 GPS: seven minutes is no zone; the place's zone is used instead.
        let far = read(located("2024:07:14 12:07:00", latitude: 51.94, longitude: -3.39, gps: ("2024:07:14", [11, 0, 0])))
        #expect(far.captureTime?.offsetSource != .gps)
        #expect(far.warnings.contains { $0.contains("no time zone") })
    }

    @Test("without a place or an offset, the default zone is assumed")
    func defaultZone() throws {
        var fixture = ExifFixture()
        fixture.exif = [fixture.ascii(Tag.dateTimeOriginal, "2024:07:14 12:00:00")]
        let time = try #require(read(fixture.jpeg, zone: "America/New_York").captureTime)
        #expect(time.offsetSource == .assumed)
        #expect(ISO8601Instant.format(time.instant) == "2024-07-14T16:00:00Z")
    }

    @Test("the maker-note cameras of the corpus get their local time minus the zone in their maker note",
          .enabled(if: Corpus.isAvailable, "../shared/corpus not found (set DARKROOM_CORPUS)"))
    func makerNoteZones() throws {
        // Zone plus daylight saving as ExifTool reads them: Canon TimeZone -06:00 with
        // DaylightSavings On; Nikon TimeZone -07:00 with DaylightSavings Yes (D3100), No (D90).
        let cases: [(path: String, offset: Int, instant: String)] = [
            ("jpeg/digicam-corpus/Canon_EOS5D-MIII__K6A7944.JPG", -5 * 3600, "2023-09-01T22:20:25Z"),
            ("jpeg/digicam-corpus/Nikon_D3100_DSC_0008.JPG", -6 * 3600, "2020-07-15T14:36:27Z"),
            ("jpeg/digicam-corpus/Nikon_D90_DSC_0003.JPG", -7 * 3600, "2021-06-25T17:32:57Z"),
        ]
        for c in cases {
            let time = try #require(read(try Corpus.bytes(c.path)).captureTime, "\(c.path)")
            #expect(time.source == .exifOriginalMakerNoteZone, "\(c.path)")
            #expect(time.offsetSource == .makerNote, "\(c.path)")
            #expect(time.offsetSeconds == c.offset, "\(c.path)")
            #expect(ISO8601Instant.format(time.instant).prefix(19) == c.instant.prefix(19), "\(c.path)")
        }
    }

    @Test("a camera's factory date is kept but untrusted, with a warning")
    func factoryDate() throws {
        var fixture = ExifFixture()
        fixture.exif = [fixture.ascii(Tag.dateTimeOriginal, "2000:01:01 00:00:12")]
        let metadata = read(fixture.jpeg)
        let time = try #require(metadata.captureTime)
        #expect(!time.trusted)
        #expect(metadata.warnings.contains { $0.contains("factory date") })
    }

    @Test("a time later than the arrival plus a day is untrusted, with a warning")
    func futureDate() throws {
        var fixture = ExifFixture()
        fixture.exif = [fixture.ascii(Tag.dateTimeOriginal, "2099:09:29 10:00:00")]
        let metadata = read(fixture.jpeg)
        #expect(metadata.captureTime?.trusted == true)
        let arrival = try #require(ISO8601Instant.parse("2025-01-01T00:00:00Z"))
        let checked = CaptureTimePlausibility.checked(metadata, arrival: arrival)
        #expect(checked.captureTime?.trusted == false)
        #expect(checked.warnings.contains { $0.contains("later than the photo's arrival") })
        // Within a day of the arrival (zones and clocks disagree by hours): still trusted.
        let soon = try #require(ISO8601Instant.parse("2099-09-29T00:00:00Z"))
        #expect(CaptureTimePlausibility.checked(metadata, arrival: soon).captureTime?.trusted == true)
    }
}

@Suite("Gazetteer")
struct GazetteerTests {
    @Test("nearest city, its name and zone")
    func nearest() throws {
        let gazetteer = try #require(Gazetteer.shared, "gazetteer not loaded: \(Gazetteer.loadProblem ?? "")")
        #expect(gazetteer.cityCount > 150_000)
        let brecon = try #require(gazetteer.nearest(latitude: 51.94, longitude: -3.39, within: 30_000))
        #expect(brecon.city.name == "Brecon")
        #expect(brecon.city.displayName == "Brecon, Wales, GB")
        #expect(brecon.city.timeZone == "Europe/London")
        #expect(gazetteer.timeZone(latitude: 40.7128, longitude: -74.006) == "America/New_York")
        #expect(gazetteer.timeZone(latitude: -33.87, longitude: 151.21) == "Australia/Sydney")
        // Across the date line: Fiji's cities lie on both sides of 180°.
        #expect(gazetteer.timeZone(latitude: -16.8, longitude: 179.99) == "Pacific/Fiji")
        // Mid-Pacific, far from any city: nothing within 30 km, a nautical zone.
        #expect(gazetteer.nearest(latitude: -40, longitude: -130, within: 30_000) == nil)
        #expect(gazetteer.timeZone(latitude: -40, longitude: -130) == "Etc/GMT+9")
    }

    @Test("a point's nearest city by the grid is the nearest by a full scan")
    func gridMatchesScan() throws {
        let gazetteer = try #require(Gazetteer.shared, "gazetteer not loaded: \(Gazetteer.loadProblem ?? "")")
        let cities = (0..<gazetteer.cityCount).map { gazetteer.city(at: $0) }
        var generator = SplitMix64(seed: 31)
        for _ in 0..<40 {
            let lat = Double.random(in: -60...70, using: &generator), lon = Double.random(in: -180...180, using: &generator)
            let found = try #require(gazetteer.nearest(latitude: lat, longitude: lon))
            let best = cities.map { Gazetteer.distanceMetres(lat, lon, $0.latitude, $0.longitude) }.min() ?? .infinity
            #expect(abs(found.distanceMetres - best) < 0.001, "\(lat), \(lon)")
        }
    }
}
