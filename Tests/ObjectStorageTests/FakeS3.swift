import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
@testable import ObjectStorage

/// A small S3 stand-in on loopback for the client's tests: path-style buckets in memory, the
/// object and multipart operations the client uses, ListObjectsV2 with continuation tokens, and
/// the checks a real server makes (every request's SigV4 signature recomputed from what arrived
/// on the wire, the payload's SHA-256, `Content-MD5`). Scripted faults answer chosen requests
/// with an error first. Every request is recorded.
final class FakeS3: @unchecked Sendable {
    // @unchecked: the mutable state (`objects`, `uploads`, `faults`, `log`) is under `lock`;
    // `channel` is set once in `start` before the server is shared.
    let credentials = S3Credentials(accessKey: "FAKEACCESSKEY", secretKey: "fake/secret+key")
    let region = "us-east-1"
    let bucket = "photos"
    private let lock = NSLock()
    private var objects: [String: Stored] = [:]
    private var uploads: [String: [Int: [UInt8]]] = [:]
    private var faults: [Fault] = []
    private var log: [Received] = []
    private var nextUpload = 1
    private var completionETagEmpty = false
    private var channel: (any Channel)?

    struct Stored {
        var bytes: [UInt8]
        var etag: String
        var contentType: String
    }

    /// One request as it arrived.
    struct Received: Sendable {
        var method: String
        /// The request target exactly as sent (`/photos/a%20b?x=1`).
        var uri: String
        /// The key, decoded; empty for the bucket.
        var key: String
        var query: [String: String]
        var headers: [(name: String, value: String)]
        var bodyCount: Int
        /// Whether its signature (and its payload hash) checked out.
        var signatureValid: Bool
        /// What it was answered.
        var status: Int

        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    /// An error answer for the next `times` requests that `matches` accepts.
    struct Fault {
        var matches: @Sendable (Received) -> Bool
        var times: Int
        var status: Int
        var code: String?
        var headers: [(String, String)] = []
        /// Answer 200 with an `Error` document (as S3 may for CompleteMultipartUpload).
        var inBody200 = false
    }

    var port: Int { channel?.localAddress?.port ?? 0 }
    var endpoint: String { "http://127.0.0.1:\(port)" }

    func configuration(_ change: (inout S3Configuration) -> Void = { _ in }) -> S3Configuration {
        // Generous timeouts: suites that block the concurrency pool's threads (a gateway starting)
        // can keep a test's task from reading its answer for seconds, and an idle read times out.
        var configuration = S3Configuration(endpoint: endpoint, region: region, bucket: bucket, credentials: credentials,
                                            connectTimeoutSeconds: 5, readTimeoutSeconds: 60, requestTimeoutSeconds: 120)
        change(&configuration)
        return configuration
    }

    static func start() async throws -> FakeS3 {
        let server = FakeS3()
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(server: server))
                }
            }
        server.channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        return server
    }

    func stop() async {
        try? await channel?.close()
    }

    // MARK: - Test access

    func inject(_ fault: Fault) { lock.withLock { faults.append(fault) } }
    var requests: [Received] { lock.withLock { log } }
    func object(_ key: String) -> [UInt8]? { lock.withLock { objects[key]?.bytes } }
    func store(_ key: String, _ bytes: [UInt8]) {
        lock.withLock { objects[key] = Stored(bytes: bytes, etag: SigV4Encoding.hex(ContentDigest.md5(bytes)), contentType: "application/octet-stream") }
    }
    var openUploads: Int { lock.withLock { uploads.count } }
    /// Answer CompleteMultipartUpload with `<ETag></ETag>`, as Ceph's gateway does.
    func answerCompletionWithoutETag() { lock.withLock { completionETagEmpty = true } }

    // MARK: - Answers

    struct Answer {
        var status: Int
        var headers: [(String, String)] = []
        var body: [UInt8] = []
    }

    static func errorDocument(_ code: String, _ message: String) -> [UInt8] {
        Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>\(code)</Code><Message>\(message)</Message><RequestId>fake-1</RequestId></Error>".utf8)
    }

    static func error(_ status: Int, _ code: String, _ message: String = "fake") -> Answer {
        Answer(status: status, headers: [("Content-Type", "application/xml")], body: errorDocument(code, message))
    }

    /// Answers one request (called on the event loop, state under the lock).
    func answer(method: String, uri: String, headers: HTTPHeaders, body: [UInt8]) -> Answer {
        let (rawPath, rawQuery) = uri.firstIndex(of: "?").map { (String(uri[..<$0]), String(uri[uri.index(after: $0)...])) } ?? (uri, "")
        var query: [String: String] = [:]
        var queryFields: [SigV4Signer.Field] = []
        for pair in rawQuery.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? ""
            let value = parts.count > 1 ? String(parts[1]).removingPercentEncoding ?? "" : ""
            query[name] = value
            queryFields.append(.init(name, value))
        }
        let path = rawPath.removingPercentEncoding ?? rawPath
        let key = path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).dropFirst().first
            .map { $0.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false) }
            .flatMap { $0.count > 1 ? String($0[1]) : nil } ?? ""
        let valid = verify(method: method, rawPath: rawPath, path: path, query: queryFields, headers: headers, body: body)
        var received = Received(method: method, uri: uri, key: key, query: query,
                                headers: headers.map { ($0.name, $0.value) }, bodyCount: body.count, signatureValid: valid, status: 0)
        let answer = lock.withLock { () -> Answer in
            let answer: Answer
            if !valid {
                answer = Self.error(403, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided.")
            } else if let index = faults.firstIndex(where: { $0.times > 0 && $0.matches(received) }) {
                faults[index].times -= 1
                let fault = faults[index]
                let body = fault.code.map { Self.errorDocument($0, "injected") } ?? []
                answer = Answer(status: fault.inBody200 ? 200 : fault.status, headers: fault.headers, body: method == "HEAD" ? [] : body)
            } else {
                answer = route(method: method, key: key, query: query, headers: headers, body: body)
            }
            received.status = answer.status
            log.append(received)
            return answer
        }
        return answer
    }

    /// Recomputes the request's signature from what arrived, as S3 does.
    private func verify(method: String, rawPath: String, path: String, query: [SigV4Signer.Field], headers: HTTPHeaders, body: [UInt8]) -> Bool {
        guard let authorization = headers.first(name: "Authorization"),
              let amzDate = headers.first(name: "x-amz-date"),
              let payloadHash = headers.first(name: "x-amz-content-sha256")
        else { return false }
        // The path on the wire is the canonical one: what was signed is what was sent.
        guard SigV4Encoding.canonicalURI(path) == rawPath else { return false }
        guard payloadHash == "UNSIGNED-PAYLOAD" || payloadHash == SigV4Encoding.sha256Hex(body) else { return false }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0] == "AWS4-HMAC-SHA256" else { return false }
        var fields: [String: String] = [:]
        for item in parts[1].split(separator: ",") {
            let pair = item.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if pair.count == 2 { fields[String(pair[0])] = String(pair[1]) }
        }
        guard let credential = fields["Credential"], let signedHeaders = fields["SignedHeaders"], let signature = fields["Signature"],
              credential.hasPrefix(credentials.accessKey + "/"), credential.hasSuffix("/\(region)/s3/aws4_request"),
              signedHeaders.contains("host"), signedHeaders.contains("x-amz-date"), signedHeaders.contains("x-amz-content-sha256")
        else { return false }
        let signed = signedHeaders.split(separator: ";").map(String.init)
        let headerFields = signed.flatMap { name in headers[name].map { SigV4Signer.Field(name, $0) } }
        guard let date = Self.parseAmzDate(amzDate) else { return false }
        let signer = SigV4Signer(credentials: credentials, region: region)
        let request = SigV4Signer.Request(method: method, path: path, query: query, headers: headerFields)
        let payload: SigV4Signer.Payload = payloadHash == "UNSIGNED-PAYLOAD" ? .unsigned : .sha256(payloadHash)
        return signer.signature(for: request, payload: payload, date: date).signature == signature
    }

    static func parseAmzDate(_ text: String) -> Date? {
        let b = Array(text.utf8)
        guard b.count == 16 else { return nil }
        func n(_ r: Range<Int>) -> Int? { Int(String(decoding: b[r], as: UTF8.self)) }
        guard let y = n(0..<4), let m = n(4..<6), let d = n(6..<8), let hh = n(9..<11), let mm = n(11..<13), let ss = n(13..<15) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(UTCCalendar.seconds(year: y, month: m, day: d, hour: hh, minute: mm, second: ss)))
    }

    private func md5Matches(_ headers: HTTPHeaders, _ body: [UInt8]) -> Bool {
        guard let sent = headers.first(name: "Content-MD5") else { return true }
        return sent == ContentDigest.contentMD5(ContentDigest.md5(body))
    }

    /// The operations, on the state (the lock is held).
    private func route(method: String, key: String, query: [String: String], headers: HTTPHeaders, body: [UInt8]) -> Answer {
        let lastModified = ("Last-Modified", "Wed, 12 Oct 2009 17:50:00 GMT")
        switch (method, key.isEmpty) {
        case ("GET", true):
            guard query["list-type"] == "2" else { return Self.error(400, "InvalidArgument") }
            let prefix = query["prefix"] ?? ""
            let maxKeys = Int(query["max-keys"] ?? "1000") ?? 1000
            let after = query["continuation-token"].flatMap { Data(base64Encoded: $0) }.map { String(decoding: $0, as: UTF8.self) }
            let keys = objects.keys.filter { $0.hasPrefix(prefix) && (after == nil || $0 > after!) }.sorted()
            let page = keys.prefix(maxKeys)
            var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            xml += "<Name>\(bucket)</Name><Prefix>\(S3XML.escape(prefix))</Prefix><KeyCount>\(page.count)</KeyCount><MaxKeys>\(maxKeys)</MaxKeys>"
            let truncated = keys.count > page.count
            xml += "<IsTruncated>\(truncated)</IsTruncated>"
            if truncated, let last = page.last {
                xml += "<NextContinuationToken>\(Data(last.utf8).base64EncodedString())</NextContinuationToken>"
            }
            for key in page {
                let object = objects[key]!
                xml += "<Contents><Key>\(S3XML.escape(key))</Key><LastModified>2009-10-12T17:50:00.000Z</LastModified>"
                xml += "<ETag>&quot;\(object.etag)&quot;</ETag><Size>\(object.bytes.count)</Size><StorageClass>STANDARD</StorageClass></Contents>"
            }
            return Answer(status: 200, headers: [("Content-Type", "application/xml")], body: Array((xml + "</ListBucketResult>").utf8))

        case ("PUT", false) where query["uploadId"] != nil:
            guard let id = query["uploadId"], uploads[id] != nil, let number = query["partNumber"].flatMap(Int.init) else {
                return Self.error(404, "NoSuchUpload")
            }
            guard md5Matches(headers, body) else { return Self.error(400, "BadDigest") }
            uploads[id]![number] = body
            return Answer(status: 200, headers: [("ETag", "\"\(SigV4Encoding.hex(ContentDigest.md5(body)))\"")])

        case ("PUT", false):
            guard md5Matches(headers, body) else { return Self.error(400, "BadDigest", "The Content-MD5 you specified did not match what we received.") }
            let etag = SigV4Encoding.hex(ContentDigest.md5(body))
            objects[key] = Stored(bytes: body, etag: etag, contentType: headers.first(name: "Content-Type") ?? "binary/octet-stream")
            return Answer(status: 200, headers: [("ETag", "\"\(etag)\"")])

        case ("POST", false) where query["uploads"] != nil:
            let id = "upload-\(nextUpload)"
            nextUpload += 1
            uploads[id] = [:]
            let xml = "<InitiateMultipartUploadResult><Bucket>\(bucket)</Bucket><Key>\(S3XML.escape(key))</Key><UploadId>\(id)</UploadId></InitiateMultipartUploadResult>"
            return Answer(status: 200, body: Array(xml.utf8))

        case ("POST", false) where query["uploadId"] != nil:
            guard let id = query["uploadId"], let parts = uploads[id] else { return Self.error(404, "NoSuchUpload") }
            guard let document = try? S3XML.parse(body), document.name == "CompleteMultipartUpload" else { return Self.error(400, "MalformedXML") }
            var bytes: [UInt8] = []
            var md5s: [[UInt8]] = []
            for (index, part) in document.all("Part").enumerated() {
                guard let number = part.value("PartNumber").flatMap(Int.init), number == index + 1, let data = parts[number],
                      ContentDigest.normalizedETag(part.value("ETag") ?? "") == SigV4Encoding.hex(ContentDigest.md5(data))
                else { return Self.error(400, "InvalidPart") }
                bytes += data
                md5s.append(ContentDigest.md5(data))
            }
            let etag = ContentDigest.multipartETag(partMD5s: md5s)
            objects[key] = Stored(bytes: bytes, etag: etag, contentType: "application/octet-stream")
            uploads[id] = nil
            let xml = "<CompleteMultipartUploadResult><Bucket>\(bucket)</Bucket><Key>\(S3XML.escape(key))</Key><ETag>\(completionETagEmpty ? "" : "\"\(etag)\"")</ETag></CompleteMultipartUploadResult>"
            return Answer(status: 200, body: Array(xml.utf8))

        case ("DELETE", false) where query["uploadId"] != nil:
            guard let id = query["uploadId"], uploads.removeValue(forKey: id) != nil else { return Self.error(404, "NoSuchUpload") }
            return Answer(status: 204)

        case ("DELETE", false):
            objects[key] = nil
            return Answer(status: 204)

        case ("HEAD", false):
            guard let object = objects[key] else { return Answer(status: 404) }
            return Answer(status: 200, headers: [("Content-Length", String(object.bytes.count)), ("ETag", "\"\(object.etag)\""),
                                                  ("Content-Type", object.contentType), lastModified])

        case ("GET", false):
            guard let object = objects[key] else { return Self.error(404, "NoSuchKey", "The specified key does not exist.") }
            if let range = headers.first(name: "Range"), range.hasPrefix("bytes=") {
                let bounds = range.dropFirst(6).split(separator: "-").compactMap { Int($0) }
                guard bounds.count == 2, bounds[0] < object.bytes.count, bounds[0] <= bounds[1] else { return Self.error(416, "InvalidRange") }
                let last = min(bounds[1], object.bytes.count - 1)
                return Answer(status: 206, headers: [("ETag", "\"\(object.etag)\""), ("Content-Type", object.contentType), lastModified,
                                                      ("Content-Range", "bytes \(bounds[0])-\(last)/\(object.bytes.count)")],
                              body: Array(object.bytes[bounds[0]...last]))
            }
            return Answer(status: 200, headers: [("ETag", "\"\(object.etag)\""), ("Content-Type", object.contentType), lastModified],
                          body: object.bytes)

        default:
            return Self.error(405, "MethodNotAllowed")
        }
    }

    /// Reads each request whole, answers it.
    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let server: FakeS3
        var head: HTTPRequestHead?
        var body: [UInt8] = []

        init(server: FakeS3) { self.server = server }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = []
            case .body(let buffer):
                body += buffer.readableBytesView
            case .end:
                guard let head else { return }
                let answer = server.answer(method: head.method.rawValue, uri: head.uri, headers: head.headers, body: body)
                var headers = HTTPHeaders(answer.headers)
                if head.method != .HEAD || headers["Content-Length"].isEmpty {
                    headers.replaceOrAdd(name: "Content-Length", value: String(answer.body.count))
                }
                let response = HTTPResponseHead(version: head.version, status: HTTPResponseStatus(statusCode: answer.status), headers: headers)
                context.write(wrapOutboundOut(.head(response)), promise: nil)
                if !answer.body.isEmpty, head.method != .HEAD {
                    context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: answer.body)))), promise: nil)
                }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                self.head = nil
                body = []
            }
        }
    }
}
