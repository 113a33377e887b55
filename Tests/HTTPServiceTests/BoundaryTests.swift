import Catalog
import Foundation
import Testing
@testable import HTTPService

/// What a hostile client or a careless backend can send, and what the service makes of it.
@Suite("Trust at the boundaries")
struct BoundaryTests {
    static let largestId: Int64 = 9_007_199_254_740_991

    @Test(arguments: TestStore.available) func declaredIdsAreOneTo2Pow53MinusOneAndTheCatalogsOwnNeverOverflow(store: TestStore) async throws {
        try await TestService.with(store: store, workers: false) { service in
            for id in ["0", "-3", "\(Self.largestId + 1)", "9223372036854775807"] {
                let place = try await service.send(.POST, "/v1/places", json: #"{"id": \#(id), "lat": 1, "long": 2, "rad": 30}"#)
                #expect(place.status == 400, "id \(id): \(place.text)")
                #expect(place.error?.hasPrefix("id must be") == true)
                let moment = try await service.send(.POST, "/v1/moments", json: #"{"id": \#(id), "place_id": 1, "start": "2024-05-07T18:00:00Z", "end": "2024-05-07T20:00:00Z"}"#)
                #expect(moment.status == 400, "id \(id): \(moment.text)")
            }
            let top = try await service.send(.POST, "/v1/places", json: #"{"id": \#(Self.largestId), "lat": 1, "long": 2, "rad": 30, "name": "top"}"#)
            #expect(top.status == 201)
            // The next id the catalog picks is a free one, never the top place again.
            let next = try await service.send(.POST, "/v1/places", json: #"{"lat": 5, "long": 6, "rad": 70, "name": "new"}"#)
            #expect(next.status == 201)
            let nextId = try #require(try next.object()["id"] as? Int64)
            #expect(nextId != Self.largestId && nextId >= 1)
            let places = try service.catalog().places()
            #expect(places.first { $0.id == Self.largestId }?.name == "top")
            #expect(places.count == 2)
        }
    }

    @Test(arguments: TestStore.available) func aCreateWithATakenIdIs409AndChangesNothingWhileAPutChanges(store: TestStore) async throws {
        try await TestService.with(store: store, workers: false) { service in
            #expect(try await service.send(.POST, "/v1/places", json: #"{"id": 7, "lat": 1, "long": 2, "rad": 30, "name": "hut"}"#).status == 201)
            let place = try await service.send(.POST, "/v1/places", json: #"{"id": 7, "lat": 3, "long": 4, "rad": 90, "name": "other"}"#)
            #expect(place.status == 409)
            #expect(place.error?.contains("place 7 already exists") == true && place.error?.contains("hut") == true)
            let moment = #"{"id": 9, "place_id": 7, "start": "2024-05-07T18:00:00Z", "end": "2024-05-07T20:00:00Z", "creator": "mallory", "visibility": "private"}"#
            #expect(try await service.send(.POST, "/v1/moments", json: moment).status == 201)
            let takeover = #"{"id": 9, "place_id": 7, "start": "2024-05-07T18:00:00Z", "end": "2024-05-07T20:00:00Z", "creator": "bob", "visibility": "public"}"#
            let conflict = try await service.send(.POST, "/v1/moments", json: takeover)
            #expect(conflict.status == 409)
            #expect(conflict.error?.contains("moment 9 already exists") == true && conflict.error?.contains("mallory") == true)
            let kept = try #require(try service.catalog().moment(id: 9))
            #expect(kept.creator == "mallory" && kept.visibility == .private)
            #expect(try service.catalog().place(id: 7)?.name == "hut")

            // Changes go through PUT, which needs an existing id.
            let moved = try await service.send(.PUT, "/v1/places/7", json: #"{"lat": 3, "long": 4, "rad": 90, "name": "moved"}"#)
            #expect(moved.status == 200)
            #expect(try service.catalog().place(id: 7)?.radiusMetres == 90)
            let edited = try await service.send(.PUT, "/v1/moments/9", json: #"{"place_id": 7, "start": "2024-05-07T18:00:00Z", "end": "2024-05-07T21:00:00Z", "creator": "mallory", "visibility": "private", "title": "late"}"#)
            #expect(edited.status == 200, "\(edited.text)")
            #expect(try service.catalog().moment(id: 9)?.title == "late")
            #expect(try await service.send(.PUT, "/v1/places/8", json: #"{"lat": 3, "long": 4, "rad": 90}"#).status == 404)
            #expect(try await service.send(.PUT, "/v1/moments/10", json: #"{"place_id": 7, "start": "2024-05-07T18:00:00Z", "end": "2024-05-07T21:00:00Z"}"#).status == 404)
            #expect(try await service.send(.PUT, "/v1/moments/9", json: #"{"id": 10, "place_id": 7, "start": "2024-05-07T18:00:00Z", "end": "2024-05-07T21:00:00Z"}"#).status == 400)
        }
    }

    @Test(arguments: TestStore.available) func aMultipartFloodIsRefusedAtItsSeventeenthPartAndLongFieldsAtTheirLimit(store: TestStore) async throws {
        try await TestService.with(store: store, workers: false) { service in
            let boundary = "flood"
            // 200,000 empty parts (about 8 MB): refused with 413 naming the limit, nothing written.
            let part = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\n\r\n".utf8)
            var flood: [UInt8] = []
            flood.reserveCapacity(part.count * 200_000)
            for _ in 0..<200_000 { flood += part }
            flood += Array("--\(boundary)--\r\n".utf8)
            // Over a raw socket: the server answers 413 as soon as it reads the 17th part and
            // closes the connection without reading the rest, which an HTTP client still sending
            // the body may report as its own failure before it reads the answer.
            let (port, flooding) = (service.port, flood)
            let refused = await RawConnection.off { () -> String in
                guard let connection = RawConnection(port: port) else { return "" }
                _ = connection.send("POST /v1/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(TestService.token)\r\n"
                                    + "Content-Type: multipart/form-data; boundary=\(boundary)\r\nContent-Length: \(flooding.count)\r\n\r\n")
                _ = connection.send(flooding)
                _ = connection.read(until: "more than 16 parts", within: 10)
                return connection.text
            }
            #expect(refused.hasPrefix("HTTP/1.1 413"), "\(refused.prefix(300))")
            #expect(refused.contains("more than 16 parts"), "\(refused.prefix(600))")

            var longHeader = Form()
            longHeader.body += Array("--\(longHeader.boundary)\r\nContent-Disposition: form-data; name=\"title\"\r\nX-Pad: \(String(repeating: "a", count: 10_000))\r\n\r\nx\r\n".utf8)
            let header = try await service.request(.POST, "/v1/uploads", body: longHeader.closed, headers: [("Content-Type", longHeader.contentType)])
            #expect(header.status == 413)
            #expect(header.error?.contains("headers are longer than") == true)

            for (field, value) in [("title", String(repeating: "t", count: 1025)), ("author_id", String(repeating: "a", count: 257))] {
                var form = Form()
                form.field(field, value)
                form.file("file", fileName: "a.jpg", contentType: "image/jpeg", try Samples.hopper())
                let answer = try await service.request(.POST, "/v1/uploads", body: form.closed, headers: [("Content-Type", form.contentType)])
                #expect(answer.status == 400)
                #expect(answer.error?.hasPrefix("\(field) is longer than") == true, "\(answer.text)")
            }
            let invitees = (0..<1001).map { "\"u\($0)\"" }.joined(separator: ", ")
            #expect(try await service.send(.POST, "/v1/places", json: #"{"id": 1, "lat": 1, "long": 2, "rad": 30}"#).status == 201)
            let crowd = try await service.send(.POST, "/v1/moments", json: #"{"place_id": 1, "start": "2024-05-07T18:00:00Z", "end": "2024-05-07T20:00:00Z", "creator": "a", "invitees": [\#(invitees)]}"#)
            #expect(crowd.status == 400)
            #expect(crowd.error?.hasPrefix("invitees may name at most 1000") == true)
            #expect(service.waiting().isEmpty)

            // A form within the limits still goes through, fields and all.
            var good = Form()
            good.field("title", "Summit")
            good.file("file", fileName: "a.jpg", contentType: "image/jpeg", try Samples.hopper())
            good.field("author_id", "alice")
            let accepted = try await service.request(.POST, "/v1/uploads", body: good.closed, chunked: true, headers: [("Content-Type", good.contentType)])
            #expect(accepted.status == 202, "\(accepted.text)")
            let sidecars = service.waiting().filter { $0.hasSuffix(".json") }
            #expect(sidecars.count == 1)
            let sidecar = try String(contentsOfFile: try #require(service.waitingPath(sidecars[0])), encoding: .utf8)
            #expect(sidecar.contains("Summit") && sidecar.contains("alice"))
        }
    }

    @Test(arguments: TestStore.available) func aSymbolicLinkInTheLibraryIsNeverServed(store: TestStore) async throws {
        try await TestService.with(store: store, workers: false) { service in
            let hash = String(repeating: "ab", count: 32)
            let folder = service.configuration.libraryRoot + "/variants/thumb/ab/ab"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let secret = service.root + "/secret.txt"
            try Data("root:x:0:0".utf8).write(to: URL(fileURLWithPath: secret))
            try FileManager.default.createSymbolicLink(atPath: folder + "/\(hash).jpg", withDestinationPath: secret)
            let linked = try await service.request(.GET, "/v1/media/variants/thumb/ab/ab/\(hash).jpg")
            #expect(linked.status == 404)
            #expect(!linked.text.contains("root:x"))

            // A linked folder on the way is refused too; a regular file at the same place is served.
            let other = String(repeating: "cd", count: 32)
            let elsewhere = service.root + "/elsewhere/cd"
            try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
            try Data([0xFF, 0xD8, 0xFF]).write(to: URL(fileURLWithPath: elsewhere + "/\(other).jpg"))
            try FileManager.default.createDirectory(atPath: service.configuration.libraryRoot + "/variants/thumb/cd", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: service.configuration.libraryRoot + "/variants/thumb/cd/cd", withDestinationPath: elsewhere)
            #expect(try await service.request(.GET, "/v1/media/variants/thumb/cd/cd/\(other).jpg").status == 404)

            try FileManager.default.removeItem(atPath: folder + "/\(hash).jpg")
            try Data([0xFF, 0xD8, 0xFF, 0xD9]).write(to: URL(fileURLWithPath: folder + "/\(hash).jpg"))
            let real = try await service.request(.GET, "/v1/media/variants/thumb/ab/ab/\(hash).jpg")
            #expect(real.status == 200)
            #expect(real.body == [0xFF, 0xD8, 0xFF, 0xD9])
            // A folder in the file's place is not a regular file.
            try FileManager.default.removeItem(atPath: folder + "/\(hash).jpg")
            try FileManager.default.createDirectory(atPath: folder + "/\(hash).jpg", withIntermediateDirectories: true)
            #expect(try await service.request(.GET, "/v1/media/variants/thumb/ab/ab/\(hash).jpg").status == 404)
        }
    }

    @Test(arguments: TestStore.available) func theBackendsTakenAtAndLocationWinOverEXIFAndThePictureShowsBoth(store: TestStore) async throws {
        try await TestService.with(store: store) { service in
            // The photo's EXIF says 2019-10-03T09:10:11 at 47.354184, 10.191316.
            let accepted = try await service.upload(try Samples.gpsPhoto(),
                                                    query: "author_id=alice&taken_at=2019-10-04T18:00:00%2B02:00&latitude=48.8566&longitude=2.3522")
            #expect(accepted.status == 202)
            let id = try #require(try accepted.object()["id"] as? String)
            let done = try await service.settled(id)
            // The upload's status says so too.
            #expect(done["captured_at_source"] as? String == "sidecar" && done["location_source"] as? String == "sidecar")
            #expect(done["camera"] != nil)
            let pictureId = try #require(done["picture_id"] as? Int)
            let picture = try await service.request(.GET, "/v1/pictures/\(pictureId)").object()
            #expect(picture["captured_at"] as? String == "2019-10-04T16:00:00Z")
            #expect(picture["captured_at_source"] as? String == "sidecar")
            #expect(picture["lat"] as? Double == 48.8566 && picture["location_source"] as? String == "sidecar")
            let camera = try #require(picture["camera"] as? [String: Any])
            #expect((camera["captured_at"] as? String)?.hasPrefix("2019-10-03") == true)
            #expect(abs((camera["lat"] as? Double ?? 0) - 47.354184) < 1e-4)

            // Without explicit values, the camera's stand and no camera block is shown.
            let plain = try await service.upload(Samples.distinct(try Samples.gpsPhoto(), "plain"), query: "author_id=alice")
            let plainDone = try await service.settled(try #require(try plain.object()["id"] as? String))
            let plainPicture = try await service.request(.GET, "/v1/pictures/\(try #require(plainDone["picture_id"] as? Int))").object()
            #expect(plainPicture["captured_at_source"] as? String != "sidecar")
            #expect(plainPicture["location_source"] as? String == "exif")
            #expect(plainPicture["camera"] == nil)
        }
    }
}
