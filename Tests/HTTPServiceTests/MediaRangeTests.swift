import Foundation
import Testing

/// `GET` and `HEAD /v1/media/...`: a variant whole, a byte range of it (206, 416 past its end),
/// its headers alone, and 304 for a copy the client holds.
@Suite("Media: ranges, HEAD and revalidation")
struct MediaRangeTests {
    @Test func aVariantIsServedWholeInRangesAndByItsHeadersAlone() async throws {
        try await TestService.with(store: .sqlite, workers: false) { service in
            let hash = String(repeating: "ef", count: 32)
            let folder = service.configuration.libraryRoot + "/variants/thumb/ef/ef"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let bytes = (0..<1000).map { UInt8($0 % 251) }
            try Data(bytes).write(to: URL(fileURLWithPath: folder + "/\(hash).jpg"))
            let path = "/v1/media/variants/thumb/ef/ef/\(hash).jpg"

            let whole = try await service.request(.GET, path)
            #expect(whole.status == 200 && whole.body == bytes)
            #expect(whole.headers.first(name: "Accept-Ranges") == "bytes")
            let etag = try #require(whole.headers.first(name: "ETag"))

            let middle = try await service.request(.GET, path, headers: [("Range", "bytes=100-199")])
            #expect(middle.status == 206 && middle.body == Array(bytes[100...199]))
            #expect(middle.headers.first(name: "Content-Range") == "bytes 100-199/1000")
            let tail = try await service.request(.GET, path, headers: [("Range", "bytes=990-")])
            #expect(tail.status == 206 && tail.body == Array(bytes[990...]))
            let suffix = try await service.request(.GET, path, headers: [("Range", "bytes=-10")])
            #expect(suffix.status == 206 && suffix.body == Array(bytes[990...]), "\(suffix.headers)")
            let clipped = try await service.request(.GET, path, headers: [("Range", "bytes=900-5000")])
            #expect(clipped.status == 206 && clipped.body == Array(bytes[900...]) && clipped.headers.first(name: "Content-Range") == "bytes 900-999/1000")
            let past = try await service.request(.GET, path, headers: [("Range", "bytes=1000-")])
            #expect(past.status == 416 && past.headers.first(name: "Content-Range") == "bytes */1000")
            let several = try await service.request(.GET, path, headers: [("Range", "bytes=0-1,5-6")])
            #expect(several.status == 200 && several.body == bytes, "several ranges are answered whole")
            #expect(try await service.request(.GET, path, headers: [("Range", "bytes=9-3")]).status == 400)

            let head = try await service.request(.HEAD, path)
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(head.headers.first(name: "Content-Length") == "1000" && head.headers.first(name: "ETag") == etag)
            #expect(try await service.request(.HEAD, "/v1/media/variants/thumb/00/00/\(String(repeating: "00", count: 32)).jpg").status == 404)

            let current = try await service.request(.GET, path, headers: [("If-None-Match", etag)])
            #expect(current.status == 304 && current.body.isEmpty)
        }
    }
}
