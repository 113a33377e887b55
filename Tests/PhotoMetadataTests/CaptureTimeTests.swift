import Foundation
import Testing
import MetadataReading
@testable import PhotoMetadata

/// One row of the capture-time table: EXIF text tags, an optional GPS time, a default zone, and what the
/// capture time must be.
struct TimeCase: Sendable, CustomTestStringConvertible {
    struct Text: Sendable {
        var tag: UInt16
        var value: String
    }

    var name: String
    var ifd0: [Text] = []
    var exif: [Text] = []
    var gpsDate: String?
    /// Hours, minutes, seconds (UTC).
    var gpsTime: [Double]?
    var zone = "UTC"
    var source: TimeSource?
    var localTime: String?
    var offset: Int?
    var offsetSource: OffsetSource?
    /// The instant, ISO 8601 UTC.
    var instant: String?
    /// A fragment one of the warnings must contain.
    var warning: String?

    var testDescription: String { name }

    func fixture() -> ExifFixture {
        var fixture = ExifFixture()
        fixture.ifd0 = ifd0.map { fixture.ascii($0.tag, $0.value) }
        fixture.exif = exif.map { fixture.ascii($0.tag, $0.value) }
        if let gpsDate { fixture.gps.append(fixture.ascii(Tag.gpsDateStamp, gpsDate)) }
        if let gpsTime {
            fixture.gps.append(fixture.rationals(Tag.gpsTimeStamp, gpsTime.map { (UInt32(($0 * 100).rounded()), 100) }))
        }
        return fixture
    }
}

private func text(_ tag: UInt16, _ value: String) -> TimeCase.Text { .init(tag: tag, value: value) }

private let timeCases: [TimeCase] = [
    TimeCase(name: "an OffsetTimeOriginal of +99:99 is no offset: ignored with a warning, the default zone assumed",
             exif: [text(Tag.dateTimeOriginal, "2024:05:07 09:33:04"), text(Tag.offsetTimeOriginal, "+99:99")],
             source: .exifOriginalAssumedZone, localTime: "2024-05-07T09:33:04", offset: nil, offsetSource: .assumed,
             instant: "2024-05-07T09:33:04Z", warning: "OffsetTimeOriginal: malformed offset \"+99:99\"; ignored"),
    TimeCase(name: "an OffsetTimeOriginal past +14:00 is ignored with a warning",
             exif: [text(Tag.dateTimeOriginal, "2024:05:07 09:33:04"), text(Tag.offsetTimeOriginal, "+14:15")],
             source: .exifOriginalAssumedZone, localTime: "2024-05-07T09:33:04", offset: nil, offsetSource: .assumed,
             instant: "2024-05-07T09:33:04Z", warning: "outside UTC-12:00...UTC+14:00; ignored"),
    TimeCase(name: "an OffsetTimeOriginal before -12:00 is ignored with a warning",
             exif: [text(Tag.dateTimeOriginal, "2024:05:07 09:33:04"), text(Tag.offsetTimeOriginal, "-12:30")],
             source: .exifOriginalAssumedZone, localTime: "2024-05-07T09:33:04", offset: nil, offsetSource: .assumed,
             instant: "2024-05-07T09:33:04Z", warning: "outside UTC-12:00...UTC+14:00; ignored"),
    TimeCase(name: "DateTimeOriginal with OffsetTimeOriginal",
             exif: [text(Tag.dateTimeOriginal, "2024:05:07 09:33:04"), text(Tag.offsetTimeOriginal, "+08:00")],
             source: .exifOriginal, localTime: "2024-05-07T09:33:04", offset: 28_800, offsetSource: .recorded,
             instant: "2024-05-07T01:33:04Z"),
    TimeCase(name: "sub-seconds and a negative offset",
             exif: [text(Tag.dateTimeOriginal, "2014:09:16 14:05:12"), text(Tag.subSecTimeOriginal, "345"),
                    text(Tag.offsetTimeOriginal, "-05:00")],
             source: .exifOriginal, localTime: "2014-09-16T14:05:12.345", offset: -18_000, offsetSource: .recorded,
             instant: "2014-09-16T19:05:12.345Z"),
    TimeCase(name: "one sub-second digit is tenths",
             exif: [text(Tag.dateTimeOriginal, "2014:09:16 14:05:12"), text(Tag.subSecTimeOriginal, "7"),
                    text(Tag.offsetTimeOriginal, "+00:00")],
             source: .exifOriginal, localTime: "2014-09-16T14:05:12.700", offset: 0, instant: "2014-09-16T14:05:12.700Z"),
    TimeCase(name: "GPS-derived offset, Nepal +05:45",
             exif: [text(Tag.dateTimeOriginal, "2024:05:07 12:00:00")], gpsDate: "2024:05:07", gpsTime: [6, 15, 3],
             source: .exifOriginalGPSOffset, localTime: "2024-05-07T12:00:00", offset: 20_700, offsetSource: .gps,
             instant: "2024-05-07T06:15:00Z"),
    TimeCase(name: "GPS-derived offset, Adelaide +09:30, clock 7 s off",
             exif: [text(Tag.dateTimeOriginal, "2024:01:10 20:00:07")], gpsDate: "2024:01:10", gpsTime: [10, 30, 0],
             source: .exifOriginalGPSOffset, offset: 34_200, offsetSource: .gps, instant: "2024-01-10T10:30:07Z"),
    TimeCase(name: "GPS-derived offset across midnight, -07:00",
             exif: [text(Tag.dateTimeOriginal, "2024:05:07 22:10:00")], gpsDate: "2024:05:08", gpsTime: [5, 10, 0],
             source: .exifOriginalGPSOffset, offset: -25_200, instant: "2024-05-08T05:10:00Z"),
    TimeCase(name: "GPS time 20 h away is no offset: default zone assumed",
             exif: [text(Tag.dateTimeOriginal, "2024:05:07 22:00:00")], gpsDate: "2024:05:07", gpsTime: [2, 0, 0],
             source: .exifOriginalAssumedZone, offset: nil, offsetSource: .assumed, instant: "2024-05-07T22:00:00Z",
             warning: "no time zone"),
    TimeCase(name: "no offset, no GPS: default zone (Paris, summer) assumed",
             exif: [text(Tag.dateTimeOriginal, "2024:07:14 10:00:00")], zone: "Europe/Paris",
             source: .exifOriginalAssumedZone, localTime: "2024-07-14T10:00:00", offset: nil, offsetSource: .assumed,
             instant: "2024-07-14T08:00:00Z"),
    TimeCase(name: "no offset, no GPS: default zone (Paris, winter) assumed",
             exif: [text(Tag.dateTimeOriginal, "2024:01:14 10:00:00")], zone: "Europe/Paris",
             source: .exifOriginalAssumedZone, instant: "2024-01-14T09:00:00Z"),
    TimeCase(name: "an offset that no place uses is ignored",
             exif: [text(Tag.dateTimeOriginal, "2024:05:07 09:33:04"), text(Tag.offsetTimeOriginal, "+25:00")],
             source: .exifOriginalAssumedZone, offset: nil, instant: "2024-05-07T09:33:04Z", warning: "OffsetTimeOriginal"),
    TimeCase(name: "zero DateTimeOriginal falls to DateTimeDigitized with its offset",
             exif: [text(Tag.dateTimeOriginal, "0000:00:00 00:00:00"), text(Tag.dateTimeDigitized, "2020:07:27 14:46:48"),
                    text(Tag.offsetTimeDigitized, "+02:00")],
             source: .exifDigitized, localTime: "2020-07-27T14:46:48", offset: 7200, offsetSource: .recorded,
             instant: "2020-07-27T12:46:48Z", warning: "placeholder"),
    TimeCase(name: "blank DateTimeOriginal falls to DateTimeDigitized with the GPS offset",
             exif: [text(Tag.dateTimeOriginal, "    :  :     :  :  "), text(Tag.dateTimeDigitized, "2024:05:07 12:00:00")],
             gpsDate: "2024:05:07", gpsTime: [6, 15, 0],
             source: .exifDigitized, offset: 20_700, offsetSource: .gps, instant: "2024-05-07T06:15:00Z"),
    TimeCase(name: "February 30 falls to IFD0 DateTime with OffsetTime",
             ifd0: [text(Tag.dateTime, "2023:03:01 08:00:00")],
             exif: [text(Tag.dateTimeOriginal, "2023:02:30 10:00:00"), text(Tag.offsetTime, "-03:00")],
             source: .exifDateTime, localTime: "2023-03-01T08:00:00", offset: -10_800, instant: "2023-03-01T11:00:00Z",
             warning: "impossible date"),
    TimeCase(name: "month 13 is absent; DateTime in the default zone",
             ifd0: [text(Tag.dateTime, "2023:03:01 08:00:00")], exif: [text(Tag.dateTimeOriginal, "2023:13:01 10:00:00")],
             zone: "Asia/Tokyo", source: .exifDateTime, offset: nil, offsetSource: .assumed,
             instant: "2023-02-28T23:00:00Z", warning: "month 13"),
    TimeCase(name: "February 29 of a leap year is valid",
             exif: [text(Tag.dateTimeOriginal, "2024:02:29 23:59:59"), text(Tag.offsetTimeOriginal, "+00:00")],
             source: .exifOriginal, offset: 0, instant: "2024-02-29T23:59:59Z"),
    TimeCase(name: "year 1700 is before photography", exif: [text(Tag.dateTimeOriginal, "1700:01:01 00:00:00")],
             source: nil, warning: "year 1700"),
    TimeCase(name: "year 2150 is past the bound", exif: [text(Tag.dateTimeOriginal, "2150:01:01 00:00:00")],
             source: nil, warning: "year 2150"),
    TimeCase(name: "malformed text is absent", exif: [text(Tag.dateTimeOriginal, "yesterday at noon")],
             source: nil, warning: "malformed"),
    TimeCase(name: "hour 24 is impossible", exif: [text(Tag.dateTimeOriginal, "2024:05:07 24:00:00")],
             source: nil, warning: "hour 24"),
]

@Suite("Capture time")
struct CaptureTimeTests {
    private func read(_ bytes: [UInt8], zone: String = "UTC", sidecar: Sidecar? = nil, fileTime: Date? = nil) throws
        -> CaptureMetadata
    {
        let timeZone = try #require(TimeZone(identifier: zone))
        return PhotoMetadata.read(bytes, sidecar: sidecar, fileTime: fileTime,
                                  options: MetadataOptions(defaultTimeZone: timeZone))
    }

    @Test("EXIF priority chain", arguments: timeCases)
    func priorityChain(_ testCase: TimeCase) throws {
        for (container, bytes) in [("jpeg", testCase.fixture().jpeg), ("png", testCase.fixture().png)] {
            let metadata = try read(bytes, zone: testCase.zone)
            let time = metadata.captureTime
            #expect(time?.source == testCase.source, "\(container): \(metadata.warnings)")
            if let localTime = testCase.localTime { #expect(time?.localTime == localTime, "\(container)") }
            if testCase.source != nil { #expect(time?.offsetSeconds == testCase.offset, "\(container)") }
            if let offsetSource = testCase.offsetSource { #expect(time?.offsetSource == offsetSource, "\(container)") }
            if let instant = testCase.instant {
                #expect(time.map { ISO8601Instant.format($0.instant) } == instant, "\(container)")
            }
            if let warning = testCase.warning {
                #expect(metadata.warnings.contains { $0.contains(warning) }, "\(container): \(metadata.warnings)")
            }
            if testCase.source != nil { #expect(time?.trusted == true) }
        }
    }

    @Test("the sidecar's time is used when EXIF has none")
    func sidecarFillsTime() throws {
        let metadata = try read(ExifFixture().jpeg, sidecar: Sidecar(takenAt: "2024-05-07T09:33:04+08:00"))
        let time = try #require(metadata.captureTime)
        #expect(time.source == .sidecar)
        #expect(time.offsetSeconds == 28_800)
        #expect(time.offsetSource == .recorded)
        #expect(ISO8601Instant.format(time.instant) == "2024-05-07T01:33:04Z")
        #expect(metadata.conflicts.isEmpty)
    }

    @Test("a sidecar time without an offset is read in the default zone and marked so")
    func sidecarWithoutOffset() throws {
        let metadata = try read(ExifFixture().jpeg, zone: "America/New_York",
                                sidecar: Sidecar(takenAt: "2024-05-07T09:33:04"))
        let time = try #require(metadata.captureTime)
        #expect(time.source == .sidecar)
        #expect(time.offsetSeconds == nil)
        #expect(time.offsetSource == .assumed)
        #expect(ISO8601Instant.format(time.instant) == "2024-05-07T13:33:04Z")
        #expect(metadata.warnings.contains { $0.contains("sidecar taken_at has no usable UTC offset") })
    }

    @Test("EXIF wins over a disagreeing sidecar and the conflict is recorded")
    func sidecarConflict() throws {
        var fixture = ExifFixture()
        fixture.exif = [fixture.ascii(Tag.dateTimeOriginal, "2024:05:07 09:33:04"),
                        fixture.ascii(Tag.offsetTimeOriginal, "+08:00")]
        let metadata = try read(fixture.jpeg, sidecar: Sidecar(takenAt: "2024-05-07T11:33:04+08:00"))
        #expect(metadata.captureTime?.source == .exifOriginal)
        #expect(metadata.captureTime?.localTime == "2024-05-07T09:33:04")
        #expect(metadata.conflicts.count == 1)
        #expect(metadata.conflicts.first?.contains("2024-05-07T11:33:04+08:00") == true)
        #expect(metadata.conflicts.first?.contains("7200 s apart") == true)
    }

    @Test("a sidecar within the tolerance is no conflict, also when written in another zone")
    func sidecarAgreement() throws {
        var fixture = ExifFixture()
        fixture.exif = [fixture.ascii(Tag.dateTimeOriginal, "2024:05:07 09:33:04"),
                        fixture.ascii(Tag.offsetTimeOriginal, "+08:00")]
        let metadata = try read(fixture.jpeg, sidecar: Sidecar(takenAt: "2024-05-07T01:33:34Z"))
        #expect(metadata.captureTime?.source == .exifOriginal)
        #expect(metadata.conflicts.isEmpty)
    }

    @Test("with an assumed EXIF zone, the sidecar's instant gives the offset, or the wall times conflict")
    func sidecarAgainstAssumedZone() throws {
        var fixture = ExifFixture()
        fixture.exif = [fixture.ascii(Tag.dateTimeOriginal, "2024:05:07 09:33:04")]
        // Takeout's photoTakenTime is UTC: the camera's wall time was 8 hours ahead of it.
        let takeout = try read(fixture.jpeg, sidecar: Sidecar(takenAt: "2024-05-07T01:33:04Z"))
        let time = try #require(takeout.captureTime)
        #expect(time.source == .exifOriginalSidecarOffset && time.offsetSource == .sidecar)
        #expect(time.offsetSeconds == 28_800 && time.localTime == "2024-05-07T09:33:04")
        #expect(time.instant == ISO8601Instant.parse("2024-05-07T01:33:04Z"))
        #expect(takeout.conflicts.isEmpty)
        // Within the tolerance of a zone (Nepal is +05:45), and the sidecar's own zone does not matter.
        let nepal = try read(fixture.jpeg, sidecar: Sidecar(takenAt: "2024-05-07T05:48:24+02:00"))
        #expect(nepal.captureTime?.offsetSeconds == 20_700 && nepal.conflicts.isEmpty)
        // A day apart is no time zone: EXIF is kept in the default zone and the conflict recorded.
        let other = try read(fixture.jpeg, sidecar: Sidecar(takenAt: "2024-05-08T09:33:04+08:00"))
        #expect(other.captureTime?.source == .exifOriginalAssumedZone)
        #expect(other.conflicts.count == 1)
        // Half an hour and seven minutes off a zone: no offset is guessed.
        let odd = try read(fixture.jpeg, sidecar: Sidecar(takenAt: "2024-05-07T09:00:04Z"))
        #expect(odd.captureTime?.offsetSource == .assumed)
        #expect(odd.conflicts.count == 1)
    }

    @Test("the file time is the last resort and is not trusted")
    func fileTimeUntrusted() throws {
        let fileTime = try #require(ISO8601Instant.parse("2021-03-04T05:06:07.250Z"))
        let metadata = try read(ExifFixture().png, zone: "Asia/Kolkata", fileTime: fileTime)
        let time = try #require(metadata.captureTime)
        #expect(time.source == .fileTime)
        #expect(time.trusted == false)
        #expect(time.instant == fileTime)
        #expect(time.offsetSeconds == nil)
        #expect(time.localTime == "2021-03-04T10:36:07.250")
    }

    @Test("the sidecar comes before the file time")
    func sidecarBeforeFileTime() throws {
        let metadata = try read([0xFF, 0xD8, 0xFF, 0xD9], sidecar: Sidecar(takenAt: "2020-01-01T00:00:00Z"),
                                fileTime: Date(timeIntervalSince1970: 0))
        #expect(metadata.captureTime?.source == .sidecar)
    }

    @Test("no time anywhere gives no capture time")
    func nothing() throws {
        #expect(try read(ExifFixture().jpeg).captureTime == nil)
    }

    @Test("little-endian EXIF reads the same")
    func littleEndian() throws {
        var fixture = ExifFixture()
        fixture.bigEndian = false
        fixture.exif = [fixture.ascii(Tag.dateTimeOriginal, "2024:05:07 09:33:04"),
                        fixture.ascii(Tag.offsetTimeOriginal, "+08:00")]
        fixture.ifd0 = [fixture.short(Tag.orientation, 6), fixture.ascii(Tag.make, "  Canon  "),
                        fixture.ascii(Tag.model, "EOS\0garbage")]
        let metadata = try read(fixture.jpeg)
        #expect(metadata.captureTime?.offsetSeconds == 28_800)
        #expect(metadata.orientation == 6)
        #expect(metadata.make == "Canon")
        #expect(metadata.model == "EOS")
    }
}
