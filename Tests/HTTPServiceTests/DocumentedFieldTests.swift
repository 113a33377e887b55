import Foundation
import Operations
import Testing
@testable import HTTPService

/// What the OpenAPI document says of a request's fields is what the server takes (Schemathesis'
/// `--checks all` holds the two together on generated requests; these hold them on chosen
/// ones): times as the document's `pattern` spells them, an empty `taken_at`, the fields of a
/// multipart upload given in its query, an end before its start.
@Suite("Documented fields")
struct DocumentedFieldTests {
    /// A `pattern` of the document, at a path of keys from its root.
    static func pattern(_ keys: String...) throws -> NSRegularExpression {
        let data = try Data(contentsOf: URL(fileURLWithPath: OpenAPITests.path))
        var node: Any = try JSONSerialization.jsonObject(with: data)
        for key in keys {
            if let index = Int(key), let array = node as? [Any] { node = array[index] } else {
                node = try #require((node as? [String: Any])?[key], "no \(key) in openapi.json")
            }
        }
        return try NSRegularExpression(pattern: try #require((node as? [String: Any])?["pattern"] as? String))
    }

    static func matches(_ regex: NSRegularExpression, _ text: String) -> Bool {
        regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }

    /// Times around every edge the pattern and `TimeText` draw: the shape, the calendar, the
    /// offsets some place uses, the years, a leap second.
    static let times: [String] = {
        var texts = ["", " ", "2024-05-07T18:00:00", "2024-05-07T18:00:00Z", "2024-05-07T18:00:00.250+05:45",
                     "2024-05-07 18:00:00+02:00", "2024:05:07 18:00:00", "2024-05-07T18:00:00+0200", "2024-05-07T18:00:00+02",
                     " 2024-05-07T18:00:00Z", "2024-05-07T18:00:00Z ", "2024-05-07t18:00:00z", "2024-05-07T18:00:00.Z",
                     "2024-05-07T18:00:00.1234567890Z", "2024-05-07T18:00Z", "24-05-07T18:00:00Z", "10000-05-07T18:00:00Z",
                     "-0001-05-07T18:00:00Z", "0000-05-07T18:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59+14:00",
                     "2016-12-31T23:59:60Z", "2024-05-07T24:00:00Z", "2024-05-07T18:60:00Z", "2024-05-07T18:00:00+99:99",
                     "２０２４-05-07T18:00:00Z", "2024-05-07T18:00:00\u{0}Z"]
        for offset in ["-12:01", "-12:00", "-11:59", "-00:00", "+00:00", "+13:59", "+14:00", "+14:01", "+15:00", "-20:36", "+23:59", "+05:60"] {
            texts.append("2024-05-07T18:00:00" + offset)
        }
        for (year, month, day) in [(2024, 2, 29), (2023, 2, 29), (2000, 2, 29), (1900, 2, 29), (2024, 2, 30), (2024, 4, 31),
                                   (2024, 12, 31), (2024, 13, 1), (2024, 0, 1), (2024, 1, 0), (4, 2, 29), (400, 2, 29), (100, 2, 29)] {
            texts.append(String(format: "%04d-%02d-%02dT12:00:00Z", year, month, day))
        }
        return texts
    }()

    @Test func aMomentsTimesMatchTheDocumentsPatternExactlyWhenTheServerTakesThem() throws {
        let start = try Self.pattern("components", "schemas", "MomentDeclaration", "properties", "start")
        let end = try Self.pattern("components", "schemas", "MomentUpdate", "properties", "end")
        for text in Self.times {
            let taken = (try? TimeField.instant(text, field: "start", example: "")) != nil
            #expect(Self.matches(start, text) == taken, "\(text.debugDescription): the server \(taken ? "takes" : "refuses") it")
            #expect(Self.matches(end, text) == taken, "\(text.debugDescription)")
        }
    }

    @Test func anUploadsTakenAtMatchesTheDocumentsPatternExactlyWhenTheServerTakesIt() throws {
        let query = try Self.pattern("paths", "/v1/uploads", "post", "parameters", "7", "schema")
        let form = try Self.pattern("paths", "/v1/uploads", "post", "requestBody", "content", "multipart/form-data", "schema",
                                    "properties", "taken_at")
        for text in Self.times {
            let taken = (try? SidecarFields.json(from: [(name: "taken_at", value: text)])) != nil
            #expect(Self.matches(query, text) == taken, "\(text.debugDescription): the server \(taken ? "takes" : "refuses") it")
            #expect(Self.matches(form, text) == taken, "\(text.debugDescription)")
        }
    }

    @Test func timesNotWrittenAsTheDocumentSaysAreRefusedNamingTheField() async throws {
        try await TestService.with(workers: false) { service in
            #expect(try await service.send(.POST, "/v1/places", json: #"{"id": 4, "lat": 1, "long": 2, "rad": 30}"#).status == 201)
            for start in ["2024-05-07 18:00:00+02:00", "2024-05-07T18:00:00+0200", "2024-05-07T18:00:00-20:36", "2024-05-07T18:00:00+14:30"] {
                let answer = try await service.send(.POST, "/v1/moments", json: #"{"place_id": 4, "start": "\#(start)", "end": "2024-12-31T20:00:00Z"}"#)
                #expect(answer.status == 400, "\(start): \(answer.text)")
                #expect(answer.error?.hasPrefix("start must be an ISO 8601 time with an offset, such as 2024-05-07T18:00:00+02:00: ") == true, "\(answer.text)")
                #expect(answer.error?.contains(start.contains(" ") ? "malformed date" : start.hasSuffix("0200") ? "malformed offset" : "outside") == true,
                        "\(answer.text)")
            }
            for (start, end) in [("2024-05-07T18:00:00-12:00", "2024-05-07T18:00:00+14:00"), ("2024-05-07T18:00:00+14:00", "2024-05-08T18:00:00-12:00")] {
                let answer = try await service.send(.POST, "/v1/moments", json: #"{"place_id": 4, "start": "\#(start)", "end": "\#(end)"}"#)
                if start.hasSuffix("-12:00") {
                    // The document cannot say that an end comes after its start: the 400 says it.
                    #expect(answer.status == 400 && answer.error?.hasPrefix("end must not be before start") == true, "\(answer.text)")
                } else {
                    #expect(answer.status == 201, "\(answer.text)")
                }
            }
        }
    }

    @Test func anEmptyTakenAtIsRefusedAndAWallTimeTaken() async throws {
        try await TestService.with(workers: false) { service in
            let empty = try await service.upload(try Samples.hopper(), query: "taken_at=")
            #expect(empty.status == 400, "\(empty.text)")
            #expect(empty.error?.hasPrefix("taken_at is empty; give a time such as 2024-05-07T09:33:04+08:00, or leave the field out") == true, "\(empty.text)")
            var form = Form()
            form.field("taken_at", "")
            form.file("file", fileName: "p.jpg", contentType: "image/jpeg", try Samples.hopper())
            let emptyInForm = try await service.request(.POST, "/v1/uploads", body: form.closed, headers: [("Content-Type", form.contentType)])
            #expect(emptyInForm.status == 400 && emptyInForm.error?.hasPrefix("taken_at is empty") == true, "\(emptyInForm.text)")
            let exif = try await service.upload(try Samples.hopper(), query: "taken_at=2024:05:07%2018:00:00")
            #expect(exif.status == 400 && exif.error?.hasPrefix("taken_at must be an ISO 8601 time, such as") == true, "\(exif.text)")
            #expect(service.waiting().isEmpty)
            // Without an offset it is a wall time, in the zone the worker infers for the photo.
            let wall = try await service.upload(try Samples.hopper(), query: "taken_at=2024-05-07T18:00:00")
            #expect(wall.status == 202, "\(wall.text)")
        }
    }

    @Test func aMultipartUploadTakesFieldsFromItsQueryToo() async throws {
        try await TestService.with(workers: false) { service in
            var form = Form()
            form.field("author_id", "bob")
            form.file("file", fileName: "p.jpg", contentType: "image/jpeg", try Samples.hopper())
            let answer = try await service.request(.POST, "/v1/uploads?title=Walk&taken_at=2024-05-07T18:00:00%2B02:00", body: form.closed,
                                                   headers: [("Content-Type", form.contentType)])
            #expect(answer.status == 202, "\(answer.text)")
            let id = try #require(try answer.object()["id"] as? String)
            let sidecar = try #require(service.waitingPath("\(id).jpg.json").flatMap { FileManager.default.contents(atPath: $0) })
            let fields = try #require(try JSONSerialization.jsonObject(with: sidecar) as? [String: Any])
            #expect(fields["author_id"] as? String == "bob")
            #expect(fields["title"] as? String == "Walk")
            #expect(fields["taken_at"] as? String == "2024-05-07T18:00:00+02:00")

            // A field in both, or one that is no field, is refused before the body is read.
            let twice = try await service.request(.POST, "/v1/uploads?author_id=alice", body: form.closed, headers: [("Content-Type", form.contentType)])
            #expect(twice.status == 400 && twice.error?.hasPrefix("author_id is given twice") == true, "\(twice.text)")
            let unknown = try await service.request(.POST, "/v1/uploads?bogus=1", body: form.closed, headers: [("Content-Type", form.contentType)])
            #expect(unknown.status == 400 && unknown.error?.hasPrefix("bogus is not a field of an upload") == true, "\(unknown.text)")
            #expect(service.waiting() == ["\(id).jpg", "\(id).jpg.json"])
        }
    }
}
