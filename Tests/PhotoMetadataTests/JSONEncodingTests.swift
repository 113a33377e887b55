import Foundation
import Testing
import MetadataReading
@testable import PhotoMetadata

@Suite("Stable JSON form")
struct JSONEncodingTests {
    private func sample() -> CaptureMetadata {
        var fixture = ExifFixture()
        fixture.exif = [fixture.ascii(Tag.dateTimeOriginal, "2014:09:16 14:05:12"),
                        fixture.ascii(Tag.subSecTimeOriginal, "345"), fixture.ascii(Tag.offsetTimeOriginal, "+01:00")]
        fixture.gps = [fixture.dms(Tag.gpsLatitude, 51.7624083), fixture.ascii(Tag.gpsLatitudeRef, "N"),
                       fixture.dms(Tag.gpsLongitude, 0.3178917), fixture.ascii(Tag.gpsLongitudeRef, "W")]
        return PhotoMetadata.read(fixture.jpeg, sidecar: Sidecar(authorId: "u42", momentId: 17), fileTime: nil,
                                  options: .standard)
    }

    @Test("keys are snake_case, instants ISO 8601, absent values null")
    func shape() throws {
        let data = try sample().jsonData()
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys) == ["capture_time", "location", "orientation", "make", "model", "mime_type",
                                     "byte_size", "sha256", "author_id", "moment_id", "title", "focal_point",
                                     "visibility", "warnings", "conflicts", "camera_capture_time", "camera_location"])
        let time = try #require(object["capture_time"] as? [String: Any])
        #expect(time["instant"] as? String == "2014-09-16T13:05:12.345Z")
        #expect(time["local_time"] as? String == "2014-09-16T14:05:12.345")
        #expect(time["offset_seconds"] as? Int == 3600)
        #expect(time["source"] as? String == "exif_original")
        #expect(object["title"] is NSNull)
        let location = try #require(object["location"] as? [String: Any])
        #expect(location["source"] as? String == "exif")
        #expect(location["horizontal_error"] is NSNull)
    }

    @Test("the JSON form decodes to an equal value, and encodes the same twice")
    func roundTrip() throws {
        let metadata = sample()
        let data = try metadata.jsonData()
        #expect(try CaptureMetadata.fromJSON(data) == metadata)
        #expect(try metadata.jsonData() == data)
    }

    @Test("a file time with sub-millisecond precision survives the round trip")
    func fileTimeRoundTrip() throws {
        let metadata = PhotoMetadata.read([], sidecar: nil, fileTime: Date(timeIntervalSince1970: 1_700_000_000.123456),
                                          options: .standard)
        #expect(try CaptureMetadata.fromJSON(metadata.jsonData()) == metadata)
    }
}
