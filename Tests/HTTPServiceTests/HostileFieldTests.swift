import Foundation
import GRDB
import Hummingbird
import NIOCore
import Operations
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import HTTPService

/// Fields a hostile client or a careless backend sends: control bytes, numbers in other bases,
/// duplicate keys, times no calendar has, a radius past the Earth's; and a hard link planted in
/// the library. Each is refused naming its field, before anything is stored.
@Suite("Hostile fields")
struct HostileFieldTests {
    @Test func aNulByteInAnUploadFieldIsRefusedNamingTheField() async throws {
        try await TestService.with(workers: false) { service in
            let answer = try await service.upload(try Samples.hopper(), query: "author_id=alice%00mallory")
            #expect(answer.status == 400)
            #expect(answer.error?.hasPrefix("author_id must not hold control characters (got a NUL byte, U+0000, at character 5)") == true, "\(answer.text)")
            let title = try await service.upload(try Samples.hopper(), query: "title=Summit%0Aof%20lies")
            #expect(title.status == 400 && title.error?.hasPrefix("title must not hold control characters") == true, "\(title.text)")
            #expect(service.waiting().isEmpty)
        }
    }

    @Test func numbersAreDecimalOnlyAndAnExplicitOriginIsKeptWithItsAltitude() async throws {
        try await TestService.with { service in
            for query in ["latitude=0x10&longitude=2", "latitude=nan&longitude=2", "latitude=1&longitude=inf"] {
                let answer = try await service.upload(try Samples.hopper(), query: query)
                #expect(answer.status == 400, "\(query): \(answer.text)")
                #expect(answer.error?.contains("must be a number in decimal") == true, "\(query): \(answer.text)")
            }
            let accepted = try await service.upload(try Samples.hopper(), query: "latitude=0&longitude=0&altitude=12.5")
            #expect(accepted.status == 202, "\(accepted.text)")
            let done = try await service.settled(try #require(try accepted.object()["id"] as? String))
            let pictureId = try #require(done["picture_id"] as? Int)
            let stored = try service.sqliteCatalog().read { db in
                try Row.fetchOne(db, sql: "SELECT latitude, longitude, altitude FROM pictures WHERE id = ?", arguments: [pictureId])
                    .map { [$0["latitude"] as Double?, $0["longitude"] as Double?, $0["altitude"] as Double?] }
            }
            #expect(stored == [0, 0, 12.5])
        }
    }

    @Test func jsonBodiesRefuseDuplicateKeysAndControlBytes() async throws {
        try await TestService.with(workers: false) { service in
            let twice = try await service.send(.POST, "/v1/places", json: #"{"lat": 1, "long": 2, "rad": 30, "lat": 80}"#)
            #expect(twice.status == 400 && twice.error == "lat is given twice in the JSON body; give each field once", "\(twice.text)")
            let escaped = try await service.send(.POST, "/v1/places", json: #"{"lat": 1, "long": 2, "rad": 30, "l\u0061t": 80}"#)
            #expect(escaped.status == 400, "a key written with an escape is the same key: \(escaped.text)")
            let nul = try await service.send(.POST, "/v1/places", json: #"{"lat": 1, "long": 2, "rad": 30, "name": "hut\u0000"}"#)
            #expect(nul.status == 400 && nul.error?.hasPrefix("name must not hold control characters") == true, "\(nul.text)")
            let place = try await service.send(.POST, "/v1/places", json: #"{"id": 3, "lat": 1, "long": 2, "rad": 30}"#)
            #expect(place.status == 201)
            let invitee = try await service.send(.POST, "/v1/moments", json: #"{"place_id": 3, "start": "2024-05-07T18:00:00Z", "end": "2024-05-07T20:00:00Z", "creator": "alice", "visibility": "private", "invitees": ["bob\u0000"]}"#)
            #expect(invitee.status == 400 && invitee.error?.hasPrefix("invitees must not hold control characters") == true, "\(invitee.text)")
            let nested = try await service.send(.POST, "/v1/places", json: #"{"lat": 1, "long": 2, "rad": 30, "name": "x"}"#)
            #expect(nested.status == 201, "the same key in two objects is no duplicate: \(nested.text)")
            #expect(try service.catalog().places().count == 2)
        }
    }

    @Test func aRadiusIsAtMostHalfTheEarthsCircumference() async throws {
        try await TestService.with(workers: false) { service in
            let around = try await service.request(.GET, "/v1/places/around?lat=1&long=2&rad=1e308")
            #expect(around.status == 400 && around.error?.hasPrefix("rad must be at most 20000000 metres") == true, "\(around.text)")
            let hex = try await service.request(.GET, "/v1/places/around?lat=0x10&long=2&rad=10")
            #expect(hex.status == 400 && hex.error?.hasPrefix("lat must be a number in decimal") == true, "\(hex.text)")
            let declared = try await service.send(.POST, "/v1/places", json: #"{"lat": 1, "long": 2, "rad": 1e308}"#)
            #expect(declared.status == 400, "\(declared.text)")
            #expect(try await service.request(.GET, "/v1/places/around?lat=1&long=2&rad=20000000").status == 200)
            let nul = try await service.request(.GET, "/v1/moments/1/pictures?after=a%00b")
            #expect(nul.status == 400 && nul.error?.hasPrefix("after must not hold control characters") == true, "\(nul.text)")
        }
    }

    @Test func momentTimesAreReadLikeAnUploadsTakenAt() async throws {
        try await TestService.with(workers: false) { service in
            #expect(try await service.send(.POST, "/v1/places", json: #"{"id": 4, "lat": 1, "long": 2, "rad": 30}"#).status == 201)
            let refused: [(String, String)] = [
                ("2024-05-07T18:00:00+99:99", "malformed offset"), ("2024-05-07T18:00:00+24:00", "outside"),
                ("2024-05-07T18:00:00+14:01", "outside"), ("2024-02-30T18:00:00Z", "day 30 of month 2"),
                ("0000-05-07T18:00:00Z", "year 0 outside 1...9999"), ("10000-05-07T18:00:00Z", "malformed date"),
                ("-0001-05-07T18:00:00Z", "malformed date"), ("2024-05-07T18:00:00", "has no UTC offset"),
                ("2016-12-31T23:59:60Z", "leap second"),
            ]
            for (start, reason) in refused {
                let answer = try await service.send(.POST, "/v1/moments", json: #"{"place_id": 4, "start": "\#(start)", "end": "2024-12-31T20:00:00Z"}"#)
                #expect(answer.status == 400, "\(start): \(answer.text)")
                #expect(answer.error?.hasPrefix("start must be an ISO 8601 time with an offset") == true, "\(start): \(answer.text)")
                #expect(answer.error?.contains(reason) == true, "\(start): \(answer.text)")
                // An upload's taken_at says the same of the same text.
                let upload = try await service.upload(try Samples.hopper(), query: "taken_at=" + start.replacingOccurrences(of: "+", with: "%2B"))
                if start != "2024-05-07T18:00:00" { #expect(upload.status == 400, "\(start): \(upload.text)") }
            }
            let fraction = try await service.send(.POST, "/v1/moments", json: #"{"place_id": 4, "start": "2024-05-07T18:00:00.250+05:45", "end": "2024-05-07T20:00:00Z"}"#)
            #expect(fraction.status == 201, "\(fraction.text)")
            let fine = try await service.send(.POST, "/v1/moments", json: #"{"place_id": 4, "start": "2024-05-07T18:00:00+05:45", "end": "2024-05-07T20:00:00Z"}"#)
            #expect(fine.status == 201, "\(fine.text)")
            #expect(try fine.object()["start"] as? String == "2024-05-07T12:15:00Z")
        }
    }

    @Test func aHardLinkPlantedInTheLibraryIsNeverServed() async throws {
        try await TestService.with(workers: false) { service in
            let hash = String(repeating: "ef", count: 32)
            let folder = service.configuration.libraryRoot + "/variants/thumb/ef/ef"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let secret = service.root + "/secret.txt"
            try Data("root:x:0:0".utf8).write(to: URL(fileURLWithPath: secret))
            #expect(link(secret, folder + "/\(hash).jpg") == 0)
            let answer = try await service.request(.GET, "/v1/media/variants/thumb/ef/ef/\(hash).jpg")
            #expect(answer.status == 404)
            #expect(!answer.text.contains("root:x"))
            #expect(answer.error?.contains("it has several names (a hard link)") == true, "\(answer.text)")
            let warned = service.log.events(where: "links", is: "2")
            #expect(warned.first?.message == "refused to serve a library file with several names")
            #expect(try await service.request(.HEAD, "/v1/media/variants/thumb/ef/ef/\(hash).jpg").status == 404)

            // Once it has one name again, it is served.
            unlink(secret)
            #expect(try await service.request(.GET, "/v1/media/variants/thumb/ef/ef/\(hash).jpg").status == 200)
        }
    }
}
