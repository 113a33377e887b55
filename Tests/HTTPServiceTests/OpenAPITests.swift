import Foundation
import Testing
@testable import HTTPService

@Suite("The OpenAPI document")
struct OpenAPITests {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/HTTPService/openapi.json").path
    static let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]

    /// "METHOD /path" of every operation the document describes.
    static func documented() throws -> Set<String> {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((document["openapi"] as? String)?.hasPrefix("3.") == true)
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        return Set(paths.flatMap { path, item in
            item.keys.filter(methods.contains).map { "\($0.uppercased()) \(path)" }
        })
    }

    @Test func everyRouteIsDocumentedAndNothingElse() throws {
        let registered = Set(APIRoute.allCases.map { "\($0.method.rawValue) \($0.path)" })
        let documented = try Self.documented()
        #expect(registered.subtracting(documented).isEmpty, "routes missing from openapi.json")
        #expect(documented.subtracting(registered).isEmpty, "documented but not routes")
    }

    @Test func everyDocumentedOperationIsAnsweredOverHTTP() async throws {
        try await TestService.with { service in
            _ = try await service.send(.POST, "/v1/places", json: #"{"id": 1, "lat": 47.3541, "long": 10.1913, "rad": 300}"#)
            _ = try await service.send(.POST, "/v1/moments", json: #"{"id": 1, "place_id": 1, "start": "2019-10-03T08:00:00+02:00", "end": "2019-10-03T12:00:00+02:00", "creator": "alice"}"#)
            let accepted = try await service.upload(try Samples.gpsPhoto(), query: "author_id=alice")
            let upload = try #require(try accepted.object()["id"] as? String)
            let done = try await service.settled(upload)
            let picture = try #require(done["picture_id"] as? Int)
            let thumb = try #require((done["variants"] as? [String: String])?["thumb"])
            let media = thumb.dropFirst("/v1/media/variants/".count).split(separator: "/").map(String.init)
            let values = ["{id}": "", "{variant}": media[0], "{shard1}": media[1], "{shard2}": media[2], "{file}": media[3]]
            let bodies: [APIRoute: String] = [
                .presignUpload: #"{"size": 1000, "content_type": "image/jpeg"}"#,
                .declarePlace: #"{"lat": 1, "long": 2, "rad": 3}"#,
                .declareMoment: #"{"place_id": 1, "start": "2024-05-07T18:00:00Z", "end": "2024-05-07T20:00:00Z"}"#,
                .momentCover: #"{"picture_id": \#(picture), "user": "alice"}"#,
                .updatePlace: #"{"lat": 47.3541, "long": 10.1913, "rad": 400, "name": "Hut"}"#,
                .updateMoment: #"{"place_id": 1, "start": "2019-10-03T08:00:00+02:00", "end": "2019-10-03T12:00:00+02:00", "creator": "alice", "title": "Climb"}"#,
            ]
            let ids: [APIRoute: String] = [.uploadStatus: upload, .completeUpload: upload, .picture: "\(picture)", .moment: "1", .momentPictures: "1", .momentCover: "1", .updatePlace: "1", .updateMoment: "1"]
            let queries: [APIRoute: String] = [.placesAround: "?lat=47.35&long=10.19&rad=1000"]
            for operation in try Self.documented().sorted() {
                let parts = operation.split(separator: " ", maxSplits: 1).map(String.init)
                let route = try #require(APIRoute.allCases.first { $0.method.rawValue == parts[0] && $0.path == parts[1] })
                var path = parts[1]
                for (name, value) in values { path = path.replacingOccurrences(of: name, with: name == "{id}" ? ids[route] ?? "" : value) }
                let answer: Answer
                if route == .upload {
                    answer = try await service.upload(Samples.distinct(try Samples.hopper(), "openapi"))
                } else {
                    answer = try await service.request(.init(rawValue: parts[0]), path + (queries[route] ?? ""),
                                                       body: bodies[route].map { Array($0.utf8) })
                }
                if route == .presignUpload || route == .completeUpload {
                    // Direct uploads need a bucket and PostgreSQL (DirectUploadTests runs them so);
                    // this SQLite set-up says so, as documented.
                    #expect(answer.status == 409, "\(operation) as \(path): \(answer.status) \(answer.text.prefix(200))")
                    continue
                }
                #expect((200..<300).contains(answer.status), "\(operation) as \(path): \(answer.status) \(answer.text.prefix(200))")
            }
        }
    }
}
