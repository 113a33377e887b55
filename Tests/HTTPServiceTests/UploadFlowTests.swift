import Foundation
import GRDB
import Testing
@testable import HTTPService

@Suite("Uploads end to end")
struct UploadFlowTests {
    @Test(arguments: TestStore.available) func anUploadEndsAsAPictureInItsMomentAndTheSameBytesAgainAsADuplicate(store: TestStore) async throws {
        try await TestService.with(store: store) { service in
            // The backend declares where and when the walk happens, then alice uploads her photo of it.
            let place = try await service.send(.POST, "/v1/places", json: #"{"lat": 47.3541, "long": 10.1913, "rad": 300, "name": "Hill"}"#)
            #expect(place.status == 201, "\(place.text)")
            let placeId = try #require(try place.object()["id"] as? Int)
            let declared = try await service.send(.POST, "/v1/moments", json: """
                {"place_id": \(placeId), "start": "2019-10-03T10:00:00+02:00", "end": "2019-10-03T14:00:00+02:00",
                 "creator": "alice", "title": "Walk"}
                """)
            #expect(declared.status == 201, "\(declared.text)")
            let momentId = try #require(try declared.object()["id"] as? Int)

            let photo = try Samples.gpsPhoto()
            let accepted = try await service.upload(photo, query: "author_id=alice&moment_id=\(momentId)&title=On%20the%20hill&focal_x=0.25&focal_y=0.75")
            #expect(accepted.status == 202, "\(accepted.text)")
            let upload = try accepted.object()
            let id = try #require(upload["id"] as? String)
            #expect(upload["status"] as? String == "queued")
            #expect(upload["status_url"] as? String == "/v1/uploads/\(id)")
            #expect(accepted.headers.first(name: "Location") == "/v1/uploads/\(id)")

            let done = try await service.settled(id)
            #expect(done["status"] as? String == "done")
            let pictureId = try #require(done["picture_id"] as? Int)
            #expect(done["moment_id"] as? Int == momentId)
            let variants = try #require(done["variants"] as? [String: String])
            #expect(Set(variants.keys) == ["thumb", "preview", "mobile", "feed"])
            #expect(variants.values.allSatisfy { $0.hasPrefix("/v1/media/variants/") })

            // The spool file was named after the upload: the job leads back to it.
            let job = try service.catalog().latestJob(sourceNames: ["\(id).jpg"])
            #expect(job?.pictureId == Int64(pictureId))
            // SQLite finds an upload's job through the index on source_name.
            if store == .sqlite {
                let plan = try await DatabaseQueue(path: service.configuration.catalogPath).read { db in
                    try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN SELECT * FROM jobs WHERE source_name IN ('a.jpg', 'a.png') ORDER BY id DESC")
                        .map { $0["detail"] as String? ?? "" }
                }
                #expect(plan.joined().contains("jobs_on_source_name"), "\(plan)")
            }

            let picture = try await service.request(.GET, "/v1/pictures/\(pictureId)").object()
            // Its placeholder: a ThumbHash (a few dozen bytes, base64) of the upright picture.
            let thumbHash = try #require(picture["thumb_hash"] as? String)
            #expect((5...25).contains(Data(base64Encoded: thumbHash)?.count ?? 0))
            #expect(picture["author"] as? String == "alice")
            #expect(picture["title"] as? String == "On the hill")
            #expect(picture["moment_id"] as? Int == momentId)
            #expect(picture["variants"] as? [String: String] == variants)

            let moment = try await service.request(.GET, "/v1/moments/\(momentId)").object()
            #expect(moment["pictures"] as? Int == 1)
            #expect(moment["title"] as? String == "Walk")
            let page = try await service.request(.GET, "/v1/moments/\(momentId)/pictures").object()
            #expect((page["pictures"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [pictureId])
            #expect(page["next"] == nil)

            let around = try await service.request(.GET, "/v1/places/around?lat=47.354&long=10.191&rad=1000").object()
            #expect((around["places"] as? [[String: Any]])?.contains { $0["id"] as? Int == placeId } == true)

            // The same bytes again, this time as a form: a duplicate of the first picture.
            var form = Form()
            form.field("author_id", "bob")
            form.file("file", fileName: "again.jpg", contentType: "application/octet-stream", photo)
            let again = try await service.request(.POST, "/v1/uploads", body: form.closed, headers: [("Content-Type", form.contentType)])
            #expect(again.status == 202, "\(again.text)")
            let duplicate = try await service.settled(try #require(try again.object()["id"] as? String))
            #expect(duplicate["status"] as? String == "duplicate")
            #expect(duplicate["duplicate_of"] as? Int == pictureId)
            #expect(duplicate["picture_id"] as? Int == pictureId)
        }
    }

    /// A raw body is written into the spool as it arrives, in pieces of at most
    /// `writeChunkBytes`: what lands in `incoming/` is the body byte for byte, with its sidecar,
    /// and no temporary file remains.
    @Test(arguments: TestStore.available) func aLargeRawUploadLandsInTheSpoolByteForByte(store: TestStore) async throws {
        try await TestService.with(store: store, workers: false) { service in
            let photo = try Samples.hopper()
            // Two and a half pieces after the end marker, in a pattern that shows any reordering.
            let tail = (0..<(UploadHandler.writeChunkBytes * 5 / 2)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ ($0 >> 16)) }
            for chunked in [false, true] {
                let body = Samples.distinct(photo, "large \(chunked)") + tail
                let answer = try await service.request(.POST, "/v1/uploads?author_id=u-large&title=Large", body: body, chunked: chunked,
                                                       headers: [("Content-Type", "image/jpeg")])
                #expect(answer.status == 202, "\(answer.text)")
                let id = try #require(try answer.object()["id"] as? String)
                #expect(service.waitingPath("\(id).jpg").flatMap { FileManager.default.contents(atPath: $0) } == Data(body), "chunked: \(chunked)")
                let sidecar = try #require(service.waitingPath("\(id).jpg.json").flatMap { FileManager.default.contents(atPath: $0) })
                let fields = try #require(try JSONSerialization.jsonObject(with: sidecar) as? [String: Any])
                #expect(fields["author_id"] as? String == "u-large")
                #expect(fields["title"] as? String == "Large")
            }
            #expect(service.waiting().allSatisfy { !$0.hasPrefix(".") })
            #expect(service.waiting().count == 4)
        }
    }

    @Test(arguments: TestStore.available) func picturesOfAMomentComeInAStableOrderPageByPage(store: TestStore) async throws {
        try await TestService.with(store: store) { service in
            _ = try await service.send(.POST, "/v1/places", json: #"{"id": 3, "lat": 48.8566, "long": 2.3522, "rad": 200}"#)
            let declared = try await service.send(.POST, "/v1/moments", json: """
                {"id": 30, "place_id": 3, "start": "2024-05-07T18:00:00+02:00", "end": "2024-05-07T22:00:00+02:00", "creator": "alice"}
                """)
            #expect(declared.status == 201, "\(declared.text)")
            // Uploaded out of order; the sidecar fields give each one a place and a time.
            var ids: [String] = []
            for minute in ["40", "10", "25"] {
                let photo = Samples.distinct(try Samples.hopper(), "shot \(minute)")
                let answer = try await service.upload(photo, query: "author_id=alice&latitude=48.8566&longitude=2.3522&taken_at=2024-05-07T19:\(minute):00%2B02:00")
                #expect(answer.status == 202, "\(answer.text)")
                ids.append(try #require(try answer.object()["id"] as? String))
            }
            var byMinute: [String: Int] = [:]
            for (minute, id) in zip(["40", "10", "25"], ids) {
                let state = try await service.settled(id)
                #expect(state["moment_id"] as? Int == 30, "\(state)")
                byMinute[minute] = state["picture_id"] as? Int
            }
            let first = try await service.request(.GET, "/v1/moments/30/pictures?limit=2").object()
            let firstIds = (first["pictures"] as? [[String: Any]])?.compactMap { $0["id"] as? Int }
            #expect(firstIds == [byMinute["10"], byMinute["25"]].compactMap { $0 })
            let next = try #require(first["next"] as? String)
            let encoded = try #require(next.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let second = try await service.request(.GET, "/v1/moments/30/pictures?limit=2&after=\(encoded)").object()
            #expect((second["pictures"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [byMinute["40"]].compactMap { $0 })
            #expect(second["next"] == nil)
        }
    }

    @Test(arguments: TestStore.available) func mediaAreServedWithAnETagAndImmutableCaching(store: TestStore) async throws {
        try await TestService.with(store: store) { service in
            let accepted = try await service.upload(try Samples.hopper())
            let done = try await service.settled(try #require(try accepted.object()["id"] as? String))
            let url = try #require((done["variants"] as? [String: String])?["thumb"])
            let file = try await service.request(.GET, url)
            #expect(file.status == 200)
            #expect(file.headers.first(name: "Content-Type") == "image/jpeg")
            #expect(file.body.starts(with: [0xFF, 0xD8, 0xFF]))
            let path = service.configuration.libraryRoot + "/" + url.dropFirst(APIRoute.mediaPrefix.count)
            #expect(file.body == [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
            let etag = try #require(file.headers.first(name: "ETag"))
            let sha256 = try #require(url.split(separator: "/").last?.split(separator: ".").first)
            #expect(etag.contains(sha256))
            #expect(file.headers.first(name: "Cache-Control")?.contains("immutable") == true)

            let again = try await service.request(.GET, url, headers: [("If-None-Match", "\"other\", \(etag)")])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
            #expect(again.headers.first(name: "ETag") == etag)
            let changed = try await service.request(.GET, url, headers: [("If-None-Match", "\"other\"")])
            #expect(changed.status == 200)
        }
    }

    @Test(arguments: TestStore.available) func aWebPVariantIsStoredAsWebPAndServedAsImageWebP(store: TestStore) async throws {
        try await TestService.with(store: store, configure: { configuration in
            configuration.variants[0].format = .webp
        }) { service in
            let name = service.configuration.variants[0].name
            let accepted = try await service.upload(try Samples.gpsPhoto())
            let done = try await service.settled(try #require(try accepted.object()["id"] as? String))
            #expect(done["status"] as? String == "done", "\(done)")
            let variants = try #require(done["variants"] as? [String: String])
            let url = try #require(variants[name])
            #expect(url.hasSuffix(".webp"), "\(url)")
            #expect(variants.filter { $0.key != name }.values.allSatisfy { $0.hasSuffix(".jpg") }, "the other variants stay JPEG")
            let file = try await service.request(.GET, url)
            #expect(file.status == 200)
            #expect(file.headers.first(name: "Content-Type") == "image/webp")
            #expect(Array(file.body.prefix(4)) == Array("RIFF".utf8) && Array(file.body[8..<12]) == Array("WEBP".utf8))
            let pictureId = Int64(try #require(done["picture_id"] as? Int))
            let formats = try service.catalog().variants(ofPicture: pictureId).map(\.format)
            #expect(formats.filter { $0 == "webp" }.count == 1)
        }
    }

    @Test(arguments: TestStore.available) func aMediaBaseURLPointsVariantURLsAtTheStaticServer(store: TestStore) async throws {
        try await TestService.with(store: store, configure: { $0.server.mediaBaseURL = "https://media.example.com/darkroom/" }) { service in
            let accepted = try await service.upload(try Samples.hopper())
            let done = try await service.settled(try #require(try accepted.object()["id"] as? String))
            let variants = try #require(done["variants"] as? [String: String])
            #expect(variants.count == 4)
            for (name, url) in variants {
                #expect(url.hasPrefix("https://media.example.com/darkroom/variants/\(name)/"), "\(url)")
                // The rest of the URL is the file's path under the library root.
                let relative = url.dropFirst("https://media.example.com/darkroom/".count)
                #expect(FileManager.default.fileExists(atPath: service.configuration.libraryRoot + "/" + relative))
            }
            let picture = try await service.request(.GET, "/v1/pictures/\(try #require(done["picture_id"] as? Int))").object()
            #expect(picture["variants"] as? [String: String] == variants)
        }
    }

    @Test(arguments: TestStore.available) func theCreatorSetsAndClearsTheCoverAndNobodyElseMay(store: TestStore) async throws {
        try await TestService.with(store: store) { service in
            _ = try await service.send(.POST, "/v1/places", json: #"{"id": 1, "lat": 47.3541, "long": 10.1913, "rad": 300}"#)
            _ = try await service.send(.POST, "/v1/moments", json: """
                {"id": 5, "place_id": 1, "start": "2019-10-03T08:00:00+02:00", "end": "2019-10-03T12:00:00+02:00", "creator": "alice"}
                """)
            let accepted = try await service.upload(try Samples.gpsPhoto(), query: "author_id=alice")
            let done = try await service.settled(try #require(try accepted.object()["id"] as? String))
            let pictureId = try #require(done["picture_id"] as? Int)
            #expect(done["moment_id"] as? Int == 5)

            let refused = try await service.send(.PUT, "/v1/moments/5/cover", json: #"{"picture_id": \#(pictureId), "user": "bob"}"#)
            #expect(refused.status == 403)
            #expect(refused.error?.contains("not the creator") == true)
            let set = try await service.send(.PUT, "/v1/moments/5/cover", json: #"{"picture_id": \#(pictureId), "user": "alice"}"#)
            #expect(set.status == 200, "\(set.text)")
            #expect(try set.object()["cover_source"] as? String == "creator")
            #expect(try set.object()["cover_picture_id"] as? Int == pictureId)
            let cleared = try await service.send(.PUT, "/v1/moments/5/cover", json: #"{"picture_id": null, "user": "alice"}"#)
            #expect(cleared.status == 200)
            #expect(try cleared.object()["cover_source"] as? String == "policy")
        }
    }
}
