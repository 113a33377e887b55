import Foundation
import Testing
@testable import HTTPService

/// A phone's HEIC through the upload hook: accepted by its bytes, rendered, kept as `.heic`.
@Suite("HEIC uploads")
struct HEIFUploadTests {
    /// An iPhone 11 Pro HEIC of the shared corpus (3024×4032, 2020-05-04 18:39:11 -04:00, GPS 47.2071, 106.2431).
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/corpus/heif/metadata-extractor/exif-at-eof.heic").path

    @Test("an uploaded HEIC ends as a picture in its declared moment, its original kept as .heic",
          .enabled(if: FileManager.default.fileExists(atPath: path), "../shared/corpus/heif not found"))
    func anUploadedHEICEndsInItsMoment() async throws {
        let photo = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.path)))
        try await TestService.with { service in
            let place = try await service.send(.POST, "/v1/places", json: #"{"lat": 47.2071, "long": 106.2431, "rad": 500, "name": "Steppe"}"#)
            #expect(place.status == 201, "\(place.text)")
            let placeId = try #require(try place.object()["id"] as? Int)
            let declared = try await service.send(.POST, "/v1/moments", json: """
                {"place_id": \(placeId), "start": "2020-05-04T18:00:00-04:00", "end": "2020-05-04T19:00:00-04:00", "creator": "alice", "title": "Evening"}
                """)
            #expect(declared.status == 201, "\(declared.text)")
            let momentId = try #require(try declared.object()["id"] as? Int)

            let accepted = try await service.upload(photo, query: "author_id=alice", contentType: "image/heic")
            #expect(accepted.status == 202, "\(accepted.text)")
            let id = try #require(try accepted.object()["id"] as? String)
            let done = try await service.settled(id, timeout: 120)
            #expect(done["status"] as? String == "done", "\(done)")
            #expect(done["moment_id"] as? Int == momentId)
            let pictureId = try #require(done["picture_id"] as? Int)

            let picture = try await service.request(.GET, "/v1/pictures/\(pictureId)").object()
            #expect(picture["width"] as? Int == 3024 && picture["height"] as? Int == 4032, "\(picture)")
            let originals = service.files(under: service.configuration.libraryRoot).filter { $0.hasPrefix("originals/") }
            #expect(originals.count == 1 && originals.first?.hasSuffix(".heic") == true, "\(originals)")
        }
    }
}
