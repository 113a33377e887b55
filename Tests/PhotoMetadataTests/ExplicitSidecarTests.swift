import Foundation
import Testing
import MetadataReading
@testable import PhotoMetadata

/// The backend's explicit values (a spool sidecar) against the camera's (EXIF).
@Suite("The backend's explicit fields against EXIF")
struct ExplicitSidecarTests {
    static func photo() -> [UInt8] {
        var fixture = ExifFixture()
        fixture.exif = [fixture.ascii(Tag.dateTimeOriginal, "2024:05:07 09:33:04"), fixture.ascii(Tag.offsetTimeOriginal, "+02:00")]
        fixture.gps = [fixture.dms(Tag.gpsLatitude, 48.858093), fixture.ascii(Tag.gpsLatitudeRef, "N"),
                       fixture.dms(Tag.gpsLongitude, 2.294694), fixture.ascii(Tag.gpsLongitudeRef, "E")]
        return fixture.jpeg
    }

    /// The user corrected the time by two hours and the place to another city.
    static let corrected = Sidecar(latitude: 45.764043, longitude: 4.835659, takenAt: "2024-05-07T11:33:04+02:00")
    static let explicit = MetadataOptions(sidecarOverridesExif: true)

    @Test func theBackendsTimeAndPlaceWinAndTheCamerasAreKept() throws {
        let metadata = PhotoMetadata.read(Self.photo(), sidecar: Self.corrected, fileTime: nil, options: Self.explicit)
        let time = try #require(metadata.captureTime)
        #expect(time.source == .sidecar)
        #expect(time.instant == ISO8601DateFormatter().date(from: "2024-05-07T09:33:04Z"))
        #expect(metadata.cameraCaptureTime?.source == .exifOriginal)
        #expect(metadata.cameraCaptureTime?.instant == ISO8601DateFormatter().date(from: "2024-05-07T07:33:04Z"))
        #expect(metadata.location?.source == .sidecar)
        #expect(metadata.location?.latitude == 45.764043)
        #expect(metadata.cameraLocation?.source == .exif)
        #expect(abs((metadata.cameraLocation?.latitude ?? 0) - 48.858093) < 1e-5)
        #expect(metadata.conflicts.count == 2)
        #expect(metadata.conflicts.allSatisfy { $0.contains("the sidecar's kept") })
        // Both reach the JSON that the catalog keeps and `inspect --json` prints.
        let json = String(decoding: try metadata.jsonData(), as: UTF8.self)
        #expect(json.contains("\"camera_capture_time\"") && json.contains("\"camera_location\""))
    }

    @Test func valuesThatAgreeKeepTheCamerasPrecisionAndRecordNoCameraValue() throws {
        let agreeing = Sidecar(latitude: 48.8581, longitude: 2.2947, takenAt: "2024-05-07T09:33:30+02:00")
        let metadata = PhotoMetadata.read(Self.photo(), sidecar: agreeing, fileTime: nil, options: Self.explicit)
        #expect(metadata.captureTime?.source == .exifOriginal)
        #expect(metadata.location?.source == .exif)
        #expect(metadata.cameraCaptureTime == nil && metadata.cameraLocation == nil)
        #expect(metadata.conflicts.isEmpty)
    }

    @Test func anImportedLibrarysSidecarOnlyFillsWhatEXIFLacks() throws {
        let metadata = PhotoMetadata.read(Self.photo(), sidecar: Self.corrected, fileTime: nil, options: .standard)
        #expect(metadata.captureTime?.source == .exifOriginal)
        #expect(metadata.location?.source == .exif)
        #expect(metadata.cameraCaptureTime == nil && metadata.cameraLocation == nil)
        #expect(metadata.conflicts.count == 2 && metadata.conflicts.allSatisfy { $0.hasSuffix("EXIF kept") })
    }
}
