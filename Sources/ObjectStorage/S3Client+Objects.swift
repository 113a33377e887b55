import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

extension S3Client {
    // MARK: - Put

    /// Stores `bytes` under `key`, with `Content-MD5` (the server refuses bytes that do not match:
    /// `BadDigest`) and the payload's SHA-256 signed. Returns the ETag (unquoted).
    @discardableResult
    public func put(key: String, bytes: [UInt8], contentType: String = "application/octet-stream") async throws(ObjectStorageError) -> String {
        try check(key: key, .putObject)
        let call = Call(operation: .putObject, method: .PUT, key: key,
                        headers: [.init("Content-Type", contentType), .init("Content-MD5", ContentDigest.contentMD5(ContentDigest.md5(bytes)))],
                        body: .bytes(bytes), payload: .hashing(bytes))
        return try await perform(call) { (response, context) async throws(ObjectStorageError) -> String in
            try await drain(response, context: context)
            return ContentDigest.normalizedETag(response.headers.first(name: "ETag") ?? "")
        }
    }

    /// Stores `bytes` under `key` unless an object of the same size and MD5 is already there
    /// (its ETag, for an object stored in one part, is the hex MD5): a HEAD first, then the put
    /// only when needed. For content-addressed keys, where the same key always means the same bytes.
    public func putIfAbsent(key: String, bytes: [UInt8], contentType: String = "application/octet-stream") async throws(ObjectStorageError) -> PutOutcome {
        if let existing = try await head(key: key),
           ContentDigest.isSameObject(existing, size: bytes.count, md5: ContentDigest.md5(bytes)) {
            return .alreadyPresent(existing)
        }
        return .written(etag: try await put(key: key, bytes: bytes, contentType: contentType))
    }

    /// Stores what `body` yields (exactly `length` bytes) under `key` without holding it: the
    /// payload is `UNSIGNED-PAYLOAD`, there is no `Content-MD5`, and the request is never retried
    /// (a stream cannot be sent twice). Prefer `put` or `putFile` where the bytes can be read again.
    @discardableResult
    public func putStream<Bytes: AsyncSequence & Sendable>(
        key: String, length: Int, contentType: String = "application/octet-stream", body: Bytes
    ) async throws(ObjectStorageError) -> String where Bytes.Element == ByteBuffer {
        try check(key: key, .putObject)
        let call = Call(operation: .putObject, method: .PUT, key: key, headers: [.init("Content-Type", contentType)],
                        body: .stream(.stream(body, length: .known(Int64(length))), length: length), payload: .unsigned)
        return try await perform(call) { (response, context) async throws(ObjectStorageError) -> String in
            try await drain(response, context: context)
            return ContentDigest.normalizedETag(response.headers.first(name: "ETag") ?? "")
        }
    }

    // MARK: - Get

    /// The object's bytes, or the bytes of `range` (offsets of the first and last byte, both
    /// included). Holds the whole answer in memory: for large objects use `getStream`. A
    /// missing key throws `.server` with status 404 (`NoSuchKey`); see `isNotFound`.
    public func get(key: String, range: ClosedRange<Int>? = nil) async throws(ObjectStorageError) -> [UInt8] {
        try check(key: key, .getObject)
        let call = try getCall(key: key, range: range)
        return try await perform(call) { (response, context) async throws(ObjectStorageError) -> [UInt8] in
            let bytes = try await collect(response, limit: .max, context: context)
            // A server that ignores Range answers 200 with every byte: keep the ones asked for.
            if let range, response.status == .ok {
                guard range.lowerBound < bytes.count else { return [] }
                return Array(bytes[range.lowerBound...min(range.upperBound, bytes.count - 1)])
            }
            return bytes
        }
    }

    /// Streams the object (or `range` of it) to `consume` without holding it whole: `consume`
    /// gets what the answer's head says and the body as `ByteBuffer`s as they arrive (ready for
    /// an HTTP response body), and must read the stream before it returns. A failure to obtain the
    /// answer is retried as for `get`; once bytes are handed over nothing is retried: a broken
    /// connection fails the stream's iteration with `.transport`. Errors that `consume` throws are
    /// rethrown as they are.
    ///
    /// The HTTP client reads no further while `consume` does not ask for the next buffer, and
    /// counts that pause as idle: `consume` must ask at least every `readTimeoutSeconds`, and the
    /// whole transfer must end within `requestTimeoutSeconds`, or the stream fails with a
    /// (transient) timeout. Size them for the slowest reader served.
    public func getStream<Result>(
        key: String, range: ClosedRange<Int>? = nil,
        _ consume: (ObjectHead, ObjectByteStream) async throws -> Result
    ) async throws -> Result {
        try check(key: key, .getObject)
        let call = try getCall(key: key, range: range)
        let (response, context) = try await perform(call) { (response, context) async throws(ObjectStorageError) in (response, context) }
        let head = ObjectHead(response.headers, status: Int(response.status.code))
        return try await consume(head, ObjectByteStream(body: response.body, statistics: statistics, context: context))
    }

    private func getCall(key: String, range: ClosedRange<Int>?) throws(ObjectStorageError) -> Call {
        var call = Call(operation: .getObject, method: .GET, key: key, accepted: [200, 206])
        if let range {
            guard range.lowerBound >= 0 else {
                throw .invalidRequest(context(call), reason: "the range \(range) starts before the first byte")
            }
            call.headers.append(.init("Range", "bytes=\(range.lowerBound)-\(range.upperBound)"))
        }
        return call
    }

    // MARK: - Head, delete, list

    /// The object's size, ETag, last modification and content type; nil when there is no object
    /// under `key` (404).
    public func head(key: String) async throws(ObjectStorageError) -> ObjectInfo? {
        try check(key: key, .headObject)
        let call = Call(operation: .headObject, method: .HEAD, key: key, accepted: [200, 404])
        return try await perform(call) { (response, context) async throws(ObjectStorageError) -> ObjectInfo? in
            try await drain(response, context: context)
            guard response.status == .ok else { return nil }
            guard let size = response.headers.first(name: "Content-Length").flatMap(Int.init) else {
                throw .badResponse(context, reason: "no Content-Length in the answer to HEAD")
            }
            return ObjectInfo(size: size, etag: ContentDigest.normalizedETag(response.headers.first(name: "ETag") ?? ""),
                              lastModified: response.headers.first(name: "Last-Modified").flatMap(UTCCalendar.parseHTTPDate),
                              contentType: response.headers.first(name: "Content-Type"))
        }
    }

    /// Removes the object; removing one that is not there is not an error (S3 answers 204 either
    /// way; some gateways answer 404).
    public func delete(key: String) async throws(ObjectStorageError) {
        try check(key: key, .deleteObject)
        let call = Call(operation: .deleteObject, method: .DELETE, key: key, accepted: [200, 204, 404])
        try await perform(call) { (response, context) async throws(ObjectStorageError) in
            try await drain(response, context: context)
        }
    }

    /// Copies the object under `source` (in the same bucket) to `key` on the server, without
    /// its bytes passing through this process (CopyObject; objects up to 5 GB). Returns the
    /// copy's ETag (unquoted). A copy can fail after its 200 status line: the body then holds an
    /// `Error`, thrown like any other answer.
    @discardableResult
    public func copy(from source: String, to key: String) async throws(ObjectStorageError) -> String {
        try check(key: source, .copyObject)
        try check(key: key, .copyObject)
        let copySource = SigV4Encoding.canonicalURI("/\(configuration.bucket)/\(source)")
        let call = Call(operation: .copyObject, method: .PUT, key: key, headers: [.init("x-amz-copy-source", copySource)])
        return try await perform(call) { (response, context) async throws(ObjectStorageError) -> String in
            let body = try await collect(response, limit: 1 << 20, context: context)
            if let error = S3XML.errorBody(body) {
                throw .server(context, status: 200, code: error.code, message: error.message, requestId: error.requestId)
            }
            let text = String(decoding: body, as: UTF8.self)
            let etag = text.components(separatedBy: "<ETag>").dropFirst().first?.components(separatedBy: "</ETag>").first
            return ContentDigest.normalizedETag((etag ?? "").replacingOccurrences(of: "&quot;", with: "\""))
        }
    }

    /// One page of the keys under `prefix` (ListObjectsV2), in key order: at most `maxKeys`
    /// (1 to 1,000); pass the page's `nextContinuationToken` to get the next while `isTruncated`.
    /// With a `delimiter`, keys holding it after the prefix are grouped into `commonPrefixes`.
    public func list(prefix: String = "", continuationToken: String? = nil, maxKeys: Int = 1000,
                     delimiter: String? = nil) async throws(ObjectStorageError) -> ListPage {
        var call = Call(operation: .listObjects, method: .GET, key: nil, query: [.init("list-type", "2")])
        guard (1...1000).contains(maxKeys) else { throw .invalidRequest(context(call), reason: "maxKeys must be 1 to 1000 (got \(maxKeys))") }
        call.query.append(.init("max-keys", String(maxKeys)))
        if !prefix.isEmpty { call.query.append(.init("prefix", prefix)) }
        if let continuationToken { call.query.append(.init("continuation-token", continuationToken)) }
        if let delimiter { call.query.append(.init("delimiter", delimiter)) }
        return try await perform(call) { (response, context) async throws(ObjectStorageError) -> ListPage in
            let body = try await collect(response, limit: 64 << 20, context: context)
            do throws(S3XML.Malformed) {
                return try S3XML.listPage(body)
            } catch {
                throw .badResponse(context, reason: error.description)
            }
        }
    }

    // MARK: - Presigned URLs

    /// A URL that lets whoever holds it make one kind of request on `key` without credentials,
    /// until `expires` seconds (1 to 604,800) from `date`: `GET` to download, `PUT` to upload.
    /// `headers` are signed too (`host` always is): the request must then carry them with the
    /// same values (`Content-Type` of a PUT, say). The URL is a bearer credential: never log it.
    public func presignedURL(method: String = "GET", key: String, expires: Int, headers: [String: String] = [:],
                             date: Date? = nil) throws(ObjectStorageError) -> String {
        try check(key: key, .presign)
        let context = ObjectStorageError.Context(operation: .presign, bucket: configuration.bucket, key: key)
        guard (1...SigV4Signer.maximumExpiry).contains(expires) else {
            throw .invalidRequest(context, reason: "a presigned URL expires in 1 to \(SigV4Signer.maximumExpiry) seconds (got \(expires))")
        }
        let path = path(for: key)
        let extra = headers.sorted { $0.key.lowercased() < $1.key.lowercased() }
            .filter { $0.key.lowercased() != "host" }
            .map { SigV4Signer.Field($0.key, $0.value) }
        let request = SigV4Signer.Request(method: method.uppercased(), path: path,
                                          headers: [SigV4Signer.Field("host", authority)] + extra)
        let (query, _) = signer.presignedQuery(request, expires: expires, date: date ?? now())
        return url(path: path, encodedQuery: query)
    }
}

/// What the head of a GET answer says of the object.
public struct ObjectHead: Sendable, Equatable {
    /// The bytes this answer carries (the range's length for a range).
    public var contentLength: Int?
    /// The whole object's size (from `Content-Range` for a range).
    public var objectSize: Int?
    /// The first and last byte offsets of a range answer (206).
    public var range: ClosedRange<Int>?
    /// Unquoted.
    public var etag: String
    public var lastModified: Date?
    public var contentType: String?

    init(_ headers: HTTPHeaders, status: Int) {
        contentLength = headers.first(name: "Content-Length").flatMap(Int.init)
        etag = ContentDigest.normalizedETag(headers.first(name: "ETag") ?? "")
        lastModified = headers.first(name: "Last-Modified").flatMap(UTCCalendar.parseHTTPDate)
        contentType = headers.first(name: "Content-Type")
        objectSize = status == 206 ? nil : contentLength
        // Content-Range: bytes 0-9/443
        if status == 206, let value = headers.first(name: "Content-Range"), value.hasPrefix("bytes ") {
            let spec = value.dropFirst(6).split(separator: "/")
            let bounds = spec.first?.split(separator: "-").compactMap { Int($0) } ?? []
            if bounds.count == 2, bounds[0] <= bounds[1] { range = bounds[0]...bounds[1] }
            if spec.count == 2 { objectSize = Int(spec[1]) }
        }
    }
}

/// The body of a GET as it arrives, in `ByteBuffer`s; each byte is counted in the client's
/// statistics, and a broken connection ends the iteration with `ObjectStorageError.transport`.
public struct ObjectByteStream: AsyncSequence, Sendable {
    public typealias Element = ByteBuffer

    let body: HTTPClientResponse.Body
    let statistics: ObjectStorageStatistics
    let context: ObjectStorageError.Context

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: HTTPClientResponse.Body.AsyncIterator
        let statistics: ObjectStorageStatistics
        let context: ObjectStorageError.Context

        public mutating func next() async throws -> ByteBuffer? {
            do {
                let buffer = try await base.next()
                if let buffer { statistics.addReceived(buffer.readableBytes) }
                return buffer
            } catch {
                throw ObjectStorageError.fromTransport(error, context: context)
            }
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: body.makeAsyncIterator(), statistics: statistics, context: context)
    }
}
