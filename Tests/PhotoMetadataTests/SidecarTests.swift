import Foundation
import Testing
import MetadataReading
@testable import PhotoMetadata

@Suite("Sidecar")
struct SidecarTests {
    private func parse(_ json: String) throws -> Sidecar {
        try Sidecar(jsonBytes: Array(json.utf8))
    }

    @Test("every documented key is read")
    func fullSidecar() throws {
        let sidecar = try parse("""
            {"author_id": "u42", "moment_id": 17, "title": "Quai", "latitude": 48.85, "longitude": 2.35,
             "altitude": 35, "taken_at": "2024-05-07T09:33:04+08:00", "focal_point": {"x": 0.5, "y": 0.4},
             "visibility": "private"}
            """)
        #expect(sidecar == Sidecar(authorId: "u42", momentId: 17, title: "Quai", latitude: 48.85, longitude: 2.35,
                                   altitude: 35, takenAt: "2024-05-07T09:33:04+08:00",
                                   focalPoint: SidecarFocalPoint(x: 0.5, y: 0.4), visibility: "private"))
    }

    @Test("every key is optional, unknown keys and nulls are ignored")
    func optionalAndUnknownKeys() throws {
        #expect(try parse("{}") == Sidecar())
        let takeout = try parse("""
            {"title": "IMG_1.jpg", "photoTakenTime": {"timestamp": "1715045584"}, "geoData": {"latitude": 0.0},
             "moment_id": null}
            """)
        #expect(takeout == Sidecar(title: "IMG_1.jpg"))
    }

    @Test("a 64-bit moment id is kept exactly")
    func largeMomentId() throws {
        #expect(try parse(#"{"moment_id": 9007199254740993}"#).momentId == 9_007_199_254_740_993)
    }

    @Test("malformed values name their key", arguments: [
        (#"{"latitude": "48.85", "longitude": 2}"#, "latitude"),
        (#"{"latitude": 91, "longitude": 2}"#, "latitude"),
        (#"{"latitude": 48, "longitude": -180.5}"#, "longitude"),
        (#"{"latitude": 48}"#, "latitude"),
        (#"{"moment_id": 17.5}"#, "moment_id"),
        (#"{"moment_id": "17"}"#, "moment_id"),
        (#"{"author_id": 42}"#, "author_id"),
        (#"{"taken_at": "yesterday"}"#, "taken_at"),
        (#"{"taken_at": "2024-02-30T10:00:00Z"}"#, "taken_at"),
        (#"{"taken_at": "2024-05-07T09:33:04+25:00"}"#, "taken_at"),
        (#"{"focal_point": [0.5, 0.5]}"#, "focal_point"),
        (#"{"focal_point": {"x": 1.5, "y": 0.5}}"#, "focal_point.x"),
        (#"{"focal_point": {"x": 0.5}}"#, "focal_point"),
        (#"{"visibility": "friends"}"#, "visibility"),
        (#"{"altitude": true}"#, "altitude"),
    ])
    func malformedKey(_ json: String, _ key: String) throws {
        #expect {
            try parse(json)
        } throws: { error in
            guard case MetadataError.sidecarMalformed(_, let reported, _) = error else { return false }
            return reported == key
        }
    }

    @Test("text that is not a JSON object is refused", arguments: ["", "not json", "[1, 2]", "\"text\"", "{\"a\": "])
    func notAnObject(_ json: String) {
        #expect {
            try parse(json)
        } throws: { error in
            guard case MetadataError.sidecarNotJSON = error else { return false }
            return true
        }
    }

    @Test("load returns nil when there is no sidecar, and names the file when it is malformed")
    func loadFromFile() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("darkroom-sidecar-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = directory.appendingPathComponent("IMG_1.jpg")
        let url = Sidecar.url(forPhotoAt: photo)
        #expect(url.lastPathComponent == "IMG_1.jpg.json")
        #expect(try Sidecar.load(from: url) == nil)

        try Data(#"{"author_id": "u42", "visibility": "public"}"#.utf8).write(to: url)
        #expect(try Sidecar.load(from: url) == Sidecar(authorId: "u42", visibility: "public"))

        try Data(#"{"visibility": "everyone"}"#.utf8).write(to: url)
        do {
            _ = try Sidecar.load(from: url)
            Issue.record("a malformed sidecar must throw")
        } catch let error as MetadataError {
            #expect(error == .sidecarMalformed(file: url.path, key: "visibility",
                                               problem: #"must be one of "public", "private", found "everyone""#))
            #expect(error.description.contains(url.path))
            #expect(error.description.contains("fix or remove the sidecar"))
        }
    }

    @Test("the sidecar's own fields reach the result")
    func fieldsReachResult() throws {
        let sidecar = Sidecar(authorId: "u42", momentId: 17, title: "t", focalPoint: SidecarFocalPoint(x: 0.1, y: 0.9),
                              visibility: "public")
        let metadata = PhotoMetadata.read(ExifFixture().jpeg, sidecar: sidecar, fileTime: nil, options: .standard)
        #expect(metadata.authorId == "u42")
        #expect(metadata.momentId == 17)
        #expect(metadata.title == "t")
        #expect(metadata.focalPoint == SidecarFocalPoint(x: 0.1, y: 0.9))
        #expect(metadata.visibility == "public")
    }
}
