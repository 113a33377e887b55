import ChildProcesses
import Crypto
import Foundation
import NIOCore
@testable import ObjectStorage
import Testing

/// The client against `FakeS3` on loopback, which checks every request's signature as a real
/// server would: the operations, retries (with the waits recorded, not slept), the multipart
/// upload, the put-if-absent decision, statistics and the blocking facade.
@Suite("S3 client against a stand-in server")
struct S3ClientTests {
    /// Runs `body` with a fresh server and a client for it.
    func withServer<T>(
        _ change: (inout S3Configuration) -> Void = { _ in },
        sleeps: Recorder<Double> = Recorder(),
        statistics: ObjectStorageStatistics = ObjectStorageStatistics(),
        _ body: (FakeS3, S3Client) async throws -> T
    ) async throws -> T {
        let server = try await FakeS3.start()
        do {
            let result = try await withClient(server.configuration(change), statistics: statistics,
                                              sleep: { sleeps.append($0) }, random: { 0.5 }) { client in
                try await body(server, client)
            }
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    static func pattern(_ count: Int, seed: UInt32 = 1) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    @Test("put, head, get, get a range, delete: keys with spaces, accents, '+' and '%' signed as sent")
    func roundTrip() async throws {
        try await withServer { server, client in
            let key = "originals/a b/été+100%.jpg"
            let bytes = Self.pattern(70_000)
            let etag = try await client.put(key: key, bytes: bytes, contentType: "image/jpeg")
            #expect(etag == SigV4Encoding.hex(ContentDigest.md5(bytes)))
            #expect(server.object(key) == bytes)

            let put = try #require(server.requests.last)
            #expect(put.uri == "/photos/originals/a%20b/%C3%A9t%C3%A9%2B100%25.jpg")
            #expect(put.header("Content-MD5") == ContentDigest.contentMD5(ContentDigest.md5(bytes)))
            #expect(put.header("x-amz-content-sha256") == SigV4Encoding.sha256Hex(bytes))
            #expect(put.header("Host") == "127.0.0.1:\(server.port)")
            #expect(put.header("Authorization")?.contains("SignedHeaders=content-md5;content-type;host;x-amz-content-sha256;x-amz-date") == true)

            let info = try #require(try await client.head(key: key))
            #expect(info == ObjectInfo(size: 70_000, etag: etag, lastModified: Date(timeIntervalSince1970: 1_255_369_800), contentType: "image/jpeg"))
            #expect(try await client.get(key: key) == bytes)
            #expect(try await client.get(key: key, range: 10...19) == Array(bytes[10...19]))
            #expect(try await client.get(key: key, range: 69_990...80_000) == Array(bytes[69_990...]))

            try await client.delete(key: key)
            #expect(server.object(key) == nil)
            #expect(try await client.head(key: key) == nil)
            // Deleting what is not there is fine.
            try await client.delete(key: key)
            #expect(server.requests.filter { !$0.signatureValid }.isEmpty)
        }
    }

    @Test("a missing object: get throws 404 NoSuchKey at once, not retried")
    func missing() async throws {
        let sleeps = Recorder<Double>()
        try await withServer(sleeps: sleeps) { server, client in
            let error = await #expect(throws: ObjectStorageError.self) { try await client.get(key: "nope.jpg") }
            #expect(error?.status == 404 && error?.code == "NoSuchKey" && error?.isNotFound == true && error?.isTransient == false)
            #expect(error?.description == "S3 GetObject s3://photos/nope.jpg: HTTP 404 NoSuchKey: The specified key does not exist. (request id fake-1) [permanent]")
            #expect(server.requests.count == 1)
            #expect(sleeps.all.isEmpty)
        }
    }

    @Test("getStream hands the body over in buffers, with the head's size, ETag and range")
    func stream() async throws {
        let statistics = ObjectStorageStatistics()
        try await withServer(statistics: statistics) { server, client in
            let bytes = Self.pattern(3 << 20)
            server.store("big.tif", bytes)
            let (head, received, buffers) = try await client.getStream(key: "big.tif") { head, body in
                var received: [UInt8] = []
                var buffers = 0
                for try await buffer in body {
                    received += buffer.readableBytesView
                    buffers += 1
                }
                return (head, received, buffers)
            }
            #expect(received == bytes)
            #expect(buffers > 1)
            #expect(head.contentLength == 3 << 20 && head.objectSize == 3 << 20 && head.range == nil)
            #expect(head.etag == SigV4Encoding.hex(ContentDigest.md5(bytes)))
            let (rangeHead, part) = try await client.getStream(key: "big.tif", range: 100...199) { head, body in
                var part: [UInt8] = []
                for try await buffer in body { part += buffer.readableBytesView }
                return (head, part)
            }
            #expect(part == Array(bytes[100...199]))
            #expect(rangeHead.range == 100...199 && rangeHead.objectSize == 3 << 20 && rangeHead.contentLength == 100)
            #expect(statistics.snapshot().bytesReceived == Int64(bytes.count + 100))
            // An error thrown by the consumer is the consumer's.
            struct Stop: Error {}
            await #expect(throws: Stop.self) { try await client.getStream(key: "big.tif") { _, _ in throw Stop() } }
            await #expect(throws: ObjectStorageError.self) { try await client.getStream(key: "missing") { _, _ in 0 } }
        }
    }

    @Test("list: pages of maxKeys under a prefix, continued with the token")
    func list() async throws {
        try await withServer { server, client in
            for name in ["originals/a", "originals/b", "originals/c d", "originals/e&f", "originals/g", "variants/x"] {
                server.store(name, Array(name.utf8))
            }
            var keys: [String] = []
            var token: String?
            var pages = 0
            repeat {
                let page = try await client.list(prefix: "originals/", continuationToken: token, maxKeys: 2)
                keys += page.objects.map(\.key)
                #expect(page.objects.allSatisfy { $0.size == $0.key.utf8.count && $0.etag == SigV4Encoding.hex(ContentDigest.md5(Array($0.key.utf8))) })
                token = page.nextContinuationToken
                pages += 1
                #expect(page.isTruncated == (token != nil))
            } while token != nil
            #expect(keys == ["originals/a", "originals/b", "originals/c d", "originals/e&f", "originals/g"])
            #expect(pages == 3)
            #expect(try await client.list().objects.count == 6)
            #expect(server.requests.filter { !$0.signatureValid }.isEmpty)
            await #expect(throws: ObjectStorageError.self) { try await client.list(maxKeys: 0) }
        }
    }

    @Test("SlowDown with Retry-After: waited as asked, then the put succeeds; counted in the statistics")
    func retryAfter() async throws {
        let sleeps = Recorder<Double>()
        let statistics = ObjectStorageStatistics()
        try await withServer(sleeps: sleeps, statistics: statistics) { server, client in
            server.inject(.init(matches: { $0.method == "PUT" }, times: 2, status: 503, code: "SlowDown", headers: [("Retry-After", "3")]))
            try await client.put(key: "k", bytes: [1, 2, 3])
            #expect(server.object("k") == [1, 2, 3])
            #expect(sleeps.all == [3, 3])
            let snapshot = statistics.snapshot()
            #expect(snapshot.retries == 2)
            #expect(snapshot.count(.putObject, .serverError) == 2 && snapshot.count(.putObject, .success) == 1)
            #expect(snapshot.bytesSent == 9)
            #expect(snapshot.durationSeconds[.putObject].map { $0 > 0 } == true)
        }
    }

    @Test("a transient failure that lasts: four attempts with jittered exponential waits, then the error says so")
    func retriesExhausted() async throws {
        let sleeps = Recorder<Double>()
        try await withServer(sleeps: sleeps) { server, client in
            server.inject(.init(matches: { $0.method == "GET" }, times: 100, status: 500, code: "InternalError"))
            let error = await #expect(throws: ObjectStorageError.self) { try await client.get(key: "k") }
            #expect(error?.isTransient == true && error?.code == "InternalError" && error?.context?.attempts == 4)
            #expect(error?.description.hasSuffix("[transient after 4 attempts]") == true)
            #expect(server.requests.count == 4)
            // random() is 0.5: half of 0.2, 0.4, 0.8.
            #expect(sleeps.all == [0.1, 0.2, 0.4])
        }
    }

    @Test("permanent failures are not retried: AccessDenied, BadDigest")
    func permanentFailures() async throws {
        let sleeps = Recorder<Double>()
        try await withServer(sleeps: sleeps) { server, client in
            server.inject(.init(matches: { $0.key == "denied" }, times: 1, status: 403, code: "AccessDenied"))
            let denied = await #expect(throws: ObjectStorageError.self) { try await client.put(key: "denied", bytes: [1]) }
            #expect(denied?.status == 403 && denied?.code == "AccessDenied" && denied?.isTransient == false)
            server.inject(.init(matches: { $0.key == "digest" }, times: 1, status: 400, code: "BadDigest"))
            let digest = await #expect(throws: ObjectStorageError.self) { try await client.put(key: "digest", bytes: [1]) }
            #expect(digest?.code == "BadDigest" && digest?.isTransient == false)
            #expect(server.requests.count == 2)
            #expect(sleeps.all.isEmpty)
        }
    }

    @Test("a wrong secret: SignatureDoesNotMatch, permanent, and neither the secret nor the signature in the message")
    func wrongSecret() async throws {
        try await withServer({ $0.credentials.secretKey = "not-the-secret" }) { server, client in
            let error = await #expect(throws: ObjectStorageError.self) { try await client.put(key: "k", bytes: [1]) }
            #expect(error?.code == "SignatureDoesNotMatch" && error?.isTransient == false && error?.status == 403)
            let signature = try #require(server.requests.last?.header("Authorization")?.components(separatedBy: "Signature=").last)
            #expect(error.map { !$0.description.contains("not-the-secret") && !$0.description.contains(signature) } == true)
        }
    }

    @Test("a stream body is never sent twice: a 503 on putStream fails at once")
    func streamNotRetried() async throws {
        let sleeps = Recorder<Double>()
        try await withServer(sleeps: sleeps) { server, client in
            let chunks = [ByteBuffer(bytes: [1, 2, 3]), ByteBuffer(bytes: [4, 5])]
            let etag = try await client.putStream(key: "s", length: 5, body: chunks.async)
            #expect(etag == SigV4Encoding.hex(ContentDigest.md5([1, 2, 3, 4, 5])))
            #expect(server.object("s") == [1, 2, 3, 4, 5])
            #expect(server.requests.last?.header("x-amz-content-sha256") == "UNSIGNED-PAYLOAD")
            server.inject(.init(matches: { $0.method == "PUT" }, times: 1, status: 503, code: "SlowDown"))
            let error = await #expect(throws: ObjectStorageError.self) { try await client.putStream(key: "s2", length: 5, body: chunks.async) }
            #expect(error?.isTransient == true && error?.context?.attempts == 1)
            #expect(sleeps.all.isEmpty)
            #expect(server.object("s2") == nil)
        }
    }

    @Test("no server: the connection refused is transient, retried, then reported")
    func connectionRefused() async throws {
        // A port held by a socket that does not listen: refused, and no server of another test
        // can take it meanwhile (a stopped server's port could be, and then never answered an
        // S3 request: four read timeouts, 256 s, in a clean-clone run).
        let (holder, port) = try #require(LoopbackPort.socket(listening: false))
        defer { close(holder) }
        let server = try await FakeS3.start()
        var configuration = server.configuration()
        await server.stop()
        configuration.endpoint = "http://127.0.0.1:\(port)"
        let sleeps = Recorder<Double>()
        try await withClient(configuration, sleep: { sleeps.append($0) }) { client in
            let error = await #expect(throws: ObjectStorageError.self) { try await client.head(key: "k") }
            guard case .transport(let context, _, true)? = error else {
                Issue.record("expected a transient transport error, got \(String(describing: error))")
                return
            }
            #expect(context.attempts == 4 && sleeps.all.count == 3)
            #expect(error?.description.contains("HeadObject s3://photos/k: no answer from the server") == true)
        }
    }

    @Test("putIfAbsent: a HEAD, and the put only when the same bytes are not already there")
    func putIfAbsent() async throws {
        try await withServer { server, client in
            let bytes = Self.pattern(1000)
            #expect(try await client.putIfAbsent(key: "sha/abc", bytes: bytes).wasWritten)
            let outcome = try await client.putIfAbsent(key: "sha/abc", bytes: bytes)
            #expect(outcome == .alreadyPresent(ObjectInfo(size: 1000, etag: SigV4Encoding.hex(ContentDigest.md5(bytes)),
                                                          lastModified: Date(timeIntervalSince1970: 1_255_369_800),
                                                          contentType: "application/octet-stream")))
            #expect(server.requests.map(\.method) == ["HEAD", "PUT", "HEAD"])
            // Other bytes of the same size under the key: written.
            var other = bytes
            other[0] ^= 0xFF
            #expect(try await client.putIfAbsent(key: "sha/abc", bytes: other).wasWritten)
            #expect(server.object("sha/abc") == other)
        }
    }

    static func temporaryFile(_ bytes: [UInt8]) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("objectstorage-\(UUID().uuidString).bin")
        try Data(bytes).write(to: url)
        return url
    }

    @Test("putFile: a large file in parts (each with its Content-MD5), completed; then skipped when present")
    func multipart() async throws {
        try await withServer({ $0.multipartThreshold = 5 << 20; $0.partSize = 5 << 20 }) { server, client in
            let bytes = Self.pattern((12 << 20) + 123, seed: 7)
            let file = try Self.temporaryFile(bytes)
            defer { try? FileManager.default.removeItem(at: file) }
            // As Ceph's gateway: the ETag is then known from the parts.
            server.answerCompletionWithoutETag()
            let outcome = try await client.putFile(key: "panoramas/p.tif", path: file.path, contentType: "image/tiff")
            let parts = stride(from: 0, to: bytes.count, by: 5 << 20).map { ContentDigest.md5(Array(bytes[$0..<min($0 + (5 << 20), bytes.count)])) }
            #expect(outcome == .written(etag: ContentDigest.multipartETag(partMD5s: parts)))
            #expect(server.object("panoramas/p.tif") == bytes)
            let uploads = server.requests.filter { $0.query["partNumber"] != nil }
            #expect(uploads.map { $0.query["partNumber"] } == ["1", "2", "3"])
            #expect(uploads.map(\.bodyCount) == [5 << 20, 5 << 20, (2 << 20) + 123])
            #expect(uploads.allSatisfy { $0.header("Content-MD5") != nil && $0.header("x-amz-content-sha256") != "UNSIGNED-PAYLOAD" })
            #expect(server.requests.first?.query["uploads"] != nil && server.requests.first?.header("Content-Type") == "image/tiff")
            #expect(server.requests.filter { !$0.signatureValid }.isEmpty)
            #expect(server.openUploads == 0)

            let before = server.requests.count
            let again = try await client.putFile(key: "panoramas/p.tif", path: file.path, skipIfPresent: true)
            guard case .alreadyPresent(let info) = again else {
                Issue.record("expected the upload to be skipped, got \(again)")
                return
            }
            #expect(info.size == bytes.count)
            #expect(server.requests.count == before + 1)  // the HEAD alone

            // A small file: one put; present: skipped too.
            let small = try Self.temporaryFile(Array(bytes[0..<1000]))
            defer { try? FileManager.default.removeItem(at: small) }
            #expect(try await client.putFile(key: "small", path: small.path) == .written(etag: SigV4Encoding.hex(ContentDigest.md5(Array(bytes[0..<1000])))))
            #expect(try await client.putFile(key: "small", path: small.path, skipIfPresent: true).wasWritten == false)
            let missing = await #expect(throws: ObjectStorageError.self) { try await client.putFile(key: "x", path: "/nonexistent/file") }
            #expect(missing?.description.contains("cannot upload the file /nonexistent/file") == true)
        }
    }

    @Test("putFile: a part that fails for good aborts the upload, leaving no parts behind")
    func multipartAbort() async throws {
        try await withServer({ $0.multipartThreshold = 5 << 20; $0.partSize = 5 << 20 }) { server, client in
            let file = try Self.temporaryFile(Self.pattern((11 << 20), seed: 3))
            defer { try? FileManager.default.removeItem(at: file) }
            server.inject(.init(matches: { $0.query["partNumber"] == "2" }, times: 1, status: 403, code: "AccessDenied"))
            let error = await #expect(throws: ObjectStorageError.self) { try await client.putFile(key: "p.tif", path: file.path) }
            #expect(error?.context?.operation == .uploadPart && error?.code == "AccessDenied")
            #expect(server.requests.last?.method == "DELETE" && server.requests.last?.query["uploadId"] != nil)
            #expect(server.openUploads == 0)
            #expect(server.object("p.tif") == nil)
        }
    }

    @Test("CompleteMultipartUpload answering 200 with an InternalError document is retried")
    func completionErrorIn200() async throws {
        let sleeps = Recorder<Double>()
        try await withServer({ $0.multipartThreshold = 5 << 20; $0.partSize = 5 << 20 }, sleeps: sleeps) { server, client in
            let bytes = Self.pattern((6 << 20), seed: 5)
            let file = try Self.temporaryFile(bytes)
            defer { try? FileManager.default.removeItem(at: file) }
            server.inject(.init(matches: { $0.method == "POST" && $0.query["uploadId"] != nil }, times: 1, status: 200, code: "InternalError", inBody200: true))
            let parts = [ContentDigest.md5(Array(bytes[0..<(5 << 20)])), ContentDigest.md5(Array(bytes[(5 << 20)...]))]
            #expect(try await client.putFile(key: "p.tif", path: file.path) == .written(etag: ContentDigest.multipartETag(partMD5s: parts)))
            #expect(server.object("p.tif") == bytes)
            #expect(sleeps.all.count == 1)
        }
    }

    @Test("the part size grows for a file that would need more than 10,000 parts")
    func partSize() async throws {
        try await withServer { _, client in
            #expect(client.effectivePartSize(for: 100 << 20) == 16 << 20)
            #expect(client.effectivePartSize(for: 160_000 << 20) == 16 << 20)
            #expect(client.effectivePartSize(for: (160_000 << 20) + 1) == 17 << 20)
        }
    }

    @Test("URLs and Host: path-style puts the bucket in the path, virtual-hosted in the host")
    func addressing() async throws {
        let credentials = S3Credentials(accessKey: "a", secretKey: "b")
        try await withClient(S3Configuration(endpoint: "https://s3.eu-west-3.amazonaws.com", region: "eu-west-3", bucket: "photos",
                                             addressing: .virtualHosted, credentials: credentials)) { client in
            let request = client.prepare(.init(operation: .getObject, method: .GET, key: "a b.jpg"))
            #expect(request.url == "https://photos.s3.eu-west-3.amazonaws.com/a%20b.jpg")
            #expect(request.headers["Host"] == ["photos.s3.eu-west-3.amazonaws.com"])
            let list = client.prepare(.init(operation: .listObjects, method: .GET, key: nil, query: [.init("list-type", "2"), .init("prefix", "a/")]))
            #expect(list.url == "https://photos.s3.eu-west-3.amazonaws.com/?list-type=2&prefix=a%2F")
        }
        try await withClient(S3Configuration(endpoint: "http://127.0.0.1:7480", region: "us-east-1", bucket: "photos",
                                             credentials: S3Credentials(accessKey: "a", secretKey: "b", sessionToken: "tok"))) { client in
            let request = client.prepare(.init(operation: .getObject, method: .GET, key: "a b.jpg"))
            #expect(request.url == "http://127.0.0.1:7480/photos/a%20b.jpg")
            #expect(request.headers["Host"] == ["127.0.0.1:7480"])
            #expect(request.headers["x-amz-security-token"] == ["tok"])
            #expect(request.headers.first(name: "Authorization")?.contains("x-amz-security-token") == true)
            #expect(client.prepare(.init(operation: .listObjects, method: .GET, key: nil)).url == "http://127.0.0.1:7480/photos")
            await #expect(throws: ObjectStorageError.self) { try await client.get(key: "") }
            #expect(throws: ObjectStorageError.self) { try client.presignedURL(key: "k", expires: 604_801) }
            #expect(throws: ObjectStorageError.self) { try client.presignedURL(key: "k", expires: 0) }
            let url = try client.presignedURL(key: "k", expires: 604_800)
            #expect(url.contains("X-Amz-Security-Token=tok"))
        }
    }

    @Test("the blocking facade: a plain thread calls the client and gets its result or its error")
    func blockingFacade() async throws {
        try await withServer { server, client in
            let outcome: (String, ObjectStorageError?) = await withCheckedContinuation { continuation in
                let thread = Thread {
                    do throws(ObjectStorageError) {
                        let etag = try blocking { () async throws(ObjectStorageError) -> String in
                            try await client.put(key: "from-thread", bytes: [9, 9])
                        }
                        let failure: ObjectStorageError?
                        do throws(ObjectStorageError) {
                            _ = try blocking { () async throws(ObjectStorageError) in try await client.get(key: "absent") }
                            failure = nil
                        } catch {
                            failure = error
                        }
                        continuation.resume(returning: (etag, failure))
                    } catch {
                        continuation.resume(returning: ("", error))
                    }
                }
                thread.start()
            }
            #expect(outcome.0 == SigV4Encoding.hex(ContentDigest.md5([9, 9])))
            #expect(outcome.1?.code == "NoSuchKey")
            #expect(server.object("from-thread") == [9, 9])

            // A client made, used and shut down on a plain thread.
            let configuration = server.configuration()
            let listed: Int? = await withCheckedContinuation { continuation in
                Thread {
                    guard let own = try? S3Client(configuration: configuration) else { return continuation.resume(returning: nil) }
                    let count = try? blocking { () async throws(ObjectStorageError) in try await own.list().objects.count }
                    try? own.shutdownBlocking()
                    continuation.resume(returning: count)
                }.start()
            }
            #expect(listed == 1)
        }
    }
}

extension Array where Element: Sendable {
    /// The elements as an async sequence, for stream bodies.
    var async: AsyncStream<Element> {
        AsyncStream { continuation in
            for element in self { continuation.yield(element) }
            continuation.finish()
        }
    }
}
