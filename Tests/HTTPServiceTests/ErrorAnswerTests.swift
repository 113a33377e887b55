import Catalog
import Foundation
import NIOHTTP1
import Testing
@testable import HTTPService

@Suite("Error answers")
struct ErrorAnswerTests {
    @Test(arguments: TestStore.available) func withoutTheRightTokenARequestIsRefusedAndReadsAndWritesNothing(store: TestStore) async throws {
        try await TestService.with(store: store, workers: false) { service in
            let photo = try Samples.hopper()
            let catalog = try service.catalog()
            let before = try catalog.counts(now: Date())
            for token in [nil, "wrong", TestService.token + "x", String(TestService.token.dropLast())] {
                let upload = try await service.request(.POST, "/v1/uploads?author_id=mallory", body: photo, token: token)
                #expect(upload.status == 401)
                #expect(upload.error?.contains("bearer token") == true)
                #expect(upload.headers.first(name: "WWW-Authenticate") == "Bearer")
                let place = try await service.send(.POST, "/v1/places", json: #"{"lat": 1, "long": 1, "rad": 10}"#, token: token)
                #expect(place.status == 401)
                #expect(try await service.request(.GET, "/v1/pictures/1", token: token).status == 401)
                #expect(try await service.request(.GET, "/v1/nothing/here", token: token).status == 401)
                #expect(try await service.request(.GET, "/healthz", token: token).status == 401)
            }
            // Another scheme with the right secret is no bearer token either.
            let basic = try await service.request(.GET, "/healthz", headers: [("Authorization", "Basic \(TestService.token)")], token: nil)
            #expect(basic.status == 401)
            #expect(service.files(under: service.configuration.spoolRoot).isEmpty)
            #expect(try catalog.counts(now: Date()) == before)
            #expect(try catalog.places().isEmpty)
            #expect(try await service.request(.GET, "/healthz", headers: [("Authorization", "bearer \(TestService.token)")], token: nil).status == 200)
        }
    }

    @Test(arguments: TestStore.available) func aBodyOverTheLimitIsRefusedFromItsLengthOrWhileItIsRead(store: TestStore) async throws {
        try await TestService.with(store: store, workers: false, configure: { $0.server.maxUploadBytes = 4096 }) { service in
            let photo = try Samples.hopper()
            #expect(photo.count > 4096)
            for chunked in [false, true] {
                let answer = try await service.request(.POST, "/v1/uploads", body: photo, chunked: chunked, headers: [("Content-Type", "image/jpeg")])
                #expect(answer.status == 413, "chunked: \(chunked)")
                #expect(answer.error?.contains("4096 bytes") == true)
            }
            #expect(service.waiting().isEmpty)
        }
    }

    @Test(arguments: TestStore.available) func onlyJPEGAndPNGAreTakenToldByTheirBytes(store: TestStore) async throws {
        try await TestService.with(store: store, workers: false) { service in
            let text = try await service.upload(Array("hello, this is not a photo\n".utf8), contentType: "image/jpeg")
            #expect(text.status == 415)
            #expect(text.error?.contains("not a JPEG, PNG, HEIC, HEIF or AVIF") == true)
            var form = Form()
            form.file("file", fileName: "photo.jpg", contentType: "image/jpeg", Array("%PDF-1.4 not a photo".utf8))
            let pdf = try await service.request(.POST, "/v1/uploads", body: form.closed, headers: [("Content-Type", form.contentType)])
            #expect(pdf.status == 415)
            let png = try await service.upload(try Samples.bytes("png_with_exif_and_gps.png"), contentType: "application/octet-stream")
            #expect(png.status == 202)
            let id = try #require(try png.object()["id"] as? String)
            #expect(service.waiting() == ["\(id).png"])
            let queued = try await service.request(.GET, "/v1/uploads/\(id)").object()
            #expect(queued["status"] as? String == "queued")
        }
    }

    @Test(arguments: TestStore.available) func fieldsOfAnUploadBecomeItsSidecarOrA400(store: TestStore) async throws {
        try await TestService.with(store: store, workers: false) { service in
            let photo = try Samples.hopper()
            for (query, reason) in [
                ("focal_x=2&focal_y=0.5", "focal_x must be between"),
                ("focal_x=0.5", "focal_y is needed"),
                ("moment_id=seven", "moment_id must be a whole number"),
                ("visibility=everyone", "visibility must be one of"),
                ("latitude=200&longitude=0", "latitude must be between"),
                ("authr=alice", "authr is not a field"),
            ] {
                let answer = try await service.upload(photo, query: query)
                #expect(answer.status == 400, "\(query)")
                #expect(answer.error?.contains(reason) == true, "\(query): \(answer.text)")
            }
            let empty = try await service.upload([])
            #expect(empty.status == 400)
            var noFile = Form()
            noFile.field("author_id", "alice")
            let missing = try await service.request(.POST, "/v1/uploads", body: noFile.closed, headers: [("Content-Type", noFile.contentType)])
            #expect(missing.status == 400)
            #expect(missing.error?.contains("`file` part") == true)
            #expect(service.waiting().isEmpty)

            var form = Form()
            form.field("author_id", "alice")
            form.field("moment_id", "7")
            form.field("focal_x", "0.5")
            form.field("focal_y", "0.25")
            form.field("visibility", "private")
            form.file("file", fileName: "../../evil.jpg", contentType: "image/jpeg", photo)
            let accepted = try await service.request(.POST, "/v1/uploads", body: form.closed, headers: [("Content-Type", form.contentType)])
            #expect(accepted.status == 202)
            let id = try #require(try accepted.object()["id"] as? String)
            // The photo is named after its upload, never after the name the client gave.
            #expect(service.waiting() == ["\(id).jpg", "\(id).jpg.json"])
            let sidecar = try #require(service.waitingPath("\(id).jpg.json").flatMap { FileManager.default.contents(atPath: $0) })
            let object = try #require(try JSONSerialization.jsonObject(with: sidecar) as? [String: Any])
            #expect(object["author_id"] as? String == "alice")
            #expect(object["moment_id"] as? Int == 7)
            #expect(object["visibility"] as? String == "private")
            #expect(object["focal_point"] as? [String: Double] == ["x": 0.5, "y": 0.25])
        }
    }

    @Test(arguments: TestStore.available) func badRequestsAnswer400WithOneLineOfReason(store: TestStore) async throws {
        try await TestService.with(store: store, workers: false) { service in
            let cases: [(HTTPMethod, String, String?, String)] = [
                (.POST, "/v1/places", "{\"lat\": 1,", "not valid JSON"),
                (.POST, "/v1/places", "[1, 2]", "must be a JSON object"),
                (.POST, "/v1/places", #"{"lat": 200, "long": 0, "rad": 10}"#, "lat must be between -90 and 90"),
                (.POST, "/v1/places", #"{"lat": 1, "long": 0, "rad": -5}"#, "rad must be a distance in metres above 0"),
                (.POST, "/v1/places", #"{"lat": "north", "long": 0, "rad": 5}"#, "lat must be a number"),
                (.POST, "/v1/places", #"{"lat": 1, "long": 0, "rad": 5, "id": -3}"#, "id must be above 0"),
                (.POST, "/v1/places", #"{"lat": 1, "long": 0, "rad": 5, "radius": 9}"#, "radius is not a field"),
                (.POST, "/v1/moments", #"{"place_id": 1, "start": "yesterday", "end": "2024-05-07T20:00:00Z"}"#, "start must be an ISO 8601 time"),
                (.POST, "/v1/moments", #"{"place_id": 1, "start": "2024-05-07T20:00:00Z"}"#, "end is needed"),
                (.PUT, "/v1/moments/1/cover", "{}", "user is needed"),
                (.GET, "/v1/places/around?lat=200&long=0&rad=10", nil, "lat must be between -90 and 90 (got 200.0)"),
                (.GET, "/v1/places/around?lat=1&long=0&rad=-1", nil, "rad must be a distance in metres above 0"),
                (.GET, "/v1/places/around?lat=1&long=east&rad=1", nil, "long must be a number"),
                (.GET, "/v1/places/around?lat=1&long=1", nil, "rad is needed"),
                (.GET, "/v1/pictures/abc", nil, "picture id must be a whole number (got abc)"),
                (.GET, "/v1/moments/1.5", nil, "moment id must be a whole number"),
                (.GET, "/v1/moments/x/pictures", nil, "moment id must be a whole number"),
                (.GET, "/v1/moments/1/pictures?limit=0", nil, "limit must be from 1 to 1000"),
                (.GET, "/v1/moments/1/pictures?after=nonsense", nil, "after must be the cursor"),
                (.GET, "/v1/uploads/not-an-id", nil, "not an upload id"),
            ]
            for (method, path, body, reason) in cases {
                let answer = try await service.request(method, path, body: body.map { Array($0.utf8) })
                #expect(answer.status == 400, "\(method) \(path) \(body ?? ""): \(answer.text)")
                let error = answer.error ?? ""
                #expect(error.contains(reason), "\(method) \(path): \(answer.text)")
                #expect(!error.contains("\n"))
            }
            #expect(try service.catalog().places().isEmpty)
        }
    }

    @Test(arguments: TestStore.available) func unknownThingsAnswer404AndOthersCoversAnswer403(store: TestStore) async throws {
        try await TestService.with(store: store, workers: false) { service in
            for path in ["/v1/uploads/\(UploadID.make())", "/v1/pictures/999", "/v1/moments/999", "/v1/moments/-999/pictures", "/v1/nothing", "/v1/uploads/"] {
                let answer = try await service.request(.GET, path)
                #expect(answer.status == 404, "\(path)")
                #expect(answer.error != nil, "\(path)")
            }
            // A known path with a method it does not have: 405, with the methods it has.
            let delete = try await service.request(.DELETE, "/v1/moments/1")
            #expect(delete.status == 405)
            #expect(delete.headers.first(name: "Allow") == "GET, PUT")
            #expect(try await service.send(.PUT, "/v1/moments/999/cover", json: #"{"picture_id": null, "user": "alice"}"#).status == 404)
            _ = try await service.send(.POST, "/v1/places", json: #"{"id": 1, "lat": 1, "long": 1, "rad": 10}"#)
            let moment = try await service.send(.POST, "/v1/moments", json: #"{"id": 2, "place_id": 1, "start": "2024-05-07T18:00:00Z", "end": "2024-05-07T20:00:00Z", "creator": "alice"}"#)
            #expect(moment.status == 201)
            let other = try await service.send(.PUT, "/v1/moments/2/cover", json: #"{"picture_id": null, "user": "mallory"}"#)
            #expect(other.status == 403)
            #expect(other.error?.contains("only the creator") == true)
            let notInIt = try await service.send(.PUT, "/v1/moments/2/cover", json: #"{"picture_id": 12345, "user": "alice"}"#)
            // A picture that is not one of the moment's is not found there.
            #expect(notInIt.status == 404)
            // A place that does not exist conflicts with the catalog (409): declare it, then retry.
            let nowhere = try await service.send(.POST, "/v1/moments", json: #"{"place_id": 99, "start": "2024-05-07T18:00:00Z", "end": "2024-05-07T20:00:00Z"}"#)
            #expect(nowhere.status == 409 && nowhere.error?.contains("place 99 does not exist") == true)
        }
    }

    @Test(arguments: TestStore.available) func mediaPathsNeverReachOutsideTheLibrary(store: TestStore) async throws {
        try await TestService.with(store: store, workers: false) { service in
            // A file beside the library that a traversal would like to read.
            let secret = Array("secret catalog bytes".utf8)
            let hash = String(repeating: "ab", count: 32)
            _ = FileManager.default.createFile(atPath: service.root + "/\(hash).jpg", contents: Data(secret))
            _ = FileManager.default.createFile(atPath: service.root + "/secret.txt", contents: Data(secret))
            let paths = [
                "/v1/media/../secret.txt",
                "/v1/media/variants/thumb/../../../secret.txt",
                "/v1/media/variants/thumb/ab/ab/..%2f..%2f..%2f..%2f\(hash).jpg",
                "/v1/media/variants/thumb/ab/ab/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2f\(hash).jpg",
                "/v1/media/variants/thumb/%2e%2e/%2e%2e/%2e%2e/\(hash).jpg",
                "/v1/media/variants/%2e%2e/ab/ab/\(hash).jpg",
                "/v1/media/variants/thumb/ab/ab/%2F\(service.root.dropFirst())%2F\(hash).jpg",
                "/v1/media//\(service.root.dropFirst())/\(hash).jpg",
                "/v1/media/variants/thumb/ab/cd/\(hash).jpg",
                "/v1/media/variants/thumb/ab/ab/\(hash.uppercased()).jpg",
                "/v1/media/variants/thumb/ab/ab/\(hash).jpg.json",
                "/v1/media/variants/thumb/ab/ab/\(hash).jpg",
            ]
            for path in paths {
                let answer = try await service.request(.GET, path)
                #expect([400, 404].contains(answer.status), "\(path): \(answer.status)")
                #expect(answer.body != secret, "\(path)")
                #expect(answer.error != nil, "\(path)")
            }
        }
    }
}
