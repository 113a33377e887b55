import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A small S3 client on AsyncHTTPClient for one bucket: objects put (with `Content-MD5` and the
/// payload's SHA-256 signed), files uploaded in parts, objects read whole or streamed, heads,
/// deletes, listings and presigned URLs, all signed with Signature Version 4.
///
/// Transient failures (connection errors, timeouts, 500/502/503/504, `SlowDown`,
/// `RequestTimeout`, `InternalError`) are retried inside the client as `configuration.retry`
/// says; every request it sends and every byte is counted in `statistics`. Call `shutdown()`
/// (or `shutdownBlocking()` on a plain thread) once done. Code on plain threads (the worker's)
/// calls the async operations through `blocking`.
public final class S3Client: Sendable {
    public let configuration: S3Configuration
    public let statistics: ObjectStorageStatistics
    let endpoint: S3Configuration.Endpoint
    let signer: SigV4Signer
    let http: HTTPClient
    /// Waits between attempts; tests replace it to run without sleeping.
    let sleep: @Sendable (Double) async throws -> Void
    /// A draw in [0, 1) for the backoff's jitter.
    let random: @Sendable () -> Double
    /// The signing time.
    let now: @Sendable () -> Date

    /// A client for `configuration`, whose settings are checked first (`.configuration` names
    /// what is wrong).
    public convenience init(configuration: S3Configuration, statistics: ObjectStorageStatistics = ObjectStorageStatistics()) throws(ObjectStorageError) {
        try self.init(configuration: configuration, statistics: statistics,
                      sleep: { seconds in try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9)) },
                      random: { Double.random(in: 0..<1) }, now: { Date() })
    }

    init(configuration: S3Configuration, statistics: ObjectStorageStatistics,
         sleep: @escaping @Sendable (Double) async throws -> Void, random: @escaping @Sendable () -> Double,
         now: @escaping @Sendable () -> Date) throws(ObjectStorageError) {
        endpoint = try configuration.validated()
        self.configuration = configuration
        self.statistics = statistics
        self.sleep = sleep
        self.random = random
        self.now = now
        signer = SigV4Signer(credentials: configuration.credentials, region: configuration.region, service: "s3")
        var http = HTTPClient.Configuration()
        http.timeout = .init(connect: .nanoseconds(Int64(configuration.connectTimeoutSeconds * 1e9)),
                             read: .nanoseconds(Int64(configuration.readTimeoutSeconds * 1e9)))
        // An S3 redirect (a bucket in another region) is an error to report, not to follow.
        http.redirectConfiguration = .disallow
        // A refused connection is a failed attempt, retried on this client's own backoff.
        http.connectionPool.retryConnectionEstablishment = false
        self.http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: http)
    }

    /// Closes the HTTP client's connections. Call it once, when no operation is in flight: a
    /// client released without it leaks them (and traps in debug builds).
    public func shutdown() async throws {
        try await http.shutdown()
    }

    /// `shutdown()` for a plain thread (not an event loop, not a task): waits until it is done.
    @available(*, noasync, message: "use shutdown() from async code")
    public func shutdownBlocking() throws {
        try http.syncShutdown()
    }

    // MARK: - Requests

    /// What a request carries.
    enum Body: Sendable {
        case none
        /// Bytes in memory: sent again as they are when the request is retried.
        case bytes([UInt8])
        /// A stream that can be read once: a request with it is never retried.
        case stream(HTTPClientRequest.Body, length: Int)

        var isReplayable: Bool {
            if case .stream = self { return false }
            return true
        }

        var length: Int {
            switch self {
            case .none: 0
            case .bytes(let bytes): bytes.count
            case .stream(_, let length): length
            }
        }
    }

    /// One S3 request before it is signed.
    struct Call: Sendable {
        var operation: S3Operation
        var method: HTTPMethod
        /// The object's key, or nil for the bucket itself.
        var key: String?
        var query: [SigV4Signer.Field] = []
        /// Headers to sign besides `Host` and the `x-amz-*` ones the signer adds.
        var headers: [SigV4Signer.Field] = []
        var body: Body = .none
        var payload: SigV4Signer.Payload = .empty
        /// The statuses that are answers rather than failures.
        var accepted: Set<Int> = [200]
    }

    /// The path of an object (or of the bucket), not yet encoded.
    func path(for key: String?) -> String {
        switch configuration.addressing {
        case .pathStyle: key.map { "/\(configuration.bucket)/\($0)" } ?? "/\(configuration.bucket)"
        case .virtualHosted: key.map { "/\($0)" } ?? "/"
        }
    }

    /// `host[:port]` of the requests: the endpoint's, with the bucket in front when virtual-hosted.
    var authority: String {
        switch configuration.addressing {
        case .pathStyle: endpoint.authority
        case .virtualHosted: "\(configuration.bucket).\(endpoint.authority)"
        }
    }

    /// The URL of a path and encoded query.
    func url(path: String, encodedQuery: String) -> String {
        "\(endpoint.scheme)://\(authority)\(SigV4Encoding.canonicalURI(path))" + (encodedQuery.isEmpty ? "" : "?\(encodedQuery)")
    }

    /// The HTTP request of `call`, signed now.
    func prepare(_ call: Call) -> HTTPClientRequest {
        let path = path(for: call.key)
        let unsigned = SigV4Signer.Request(method: call.method.rawValue, path: path, query: call.query,
                                           headers: [SigV4Signer.Field("Host", authority)] + call.headers)
        let signed = signer.sign(unsigned, payload: call.payload, date: now())
        var request = HTTPClientRequest(url: url(path: path, encodedQuery: SigV4Encoding.canonicalQuery(call.query)))
        request.method = call.method
        for field in signed.headers { request.headers.add(name: field.name, value: field.value) }
        request.headers.add(name: "User-Agent", value: "darkroom-objectstorage")
        switch call.body {
        case .none: break
        case .bytes(let bytes): request.body = .bytes(bytes)
        case .stream(let body, _): request.body = body
        }
        return request
    }

    func context(_ call: Call, attempts: Int = 1) -> ObjectStorageError.Context {
        ObjectStorageError.Context(operation: call.operation, bucket: configuration.bucket, key: call.key, attempts: attempts)
    }

    /// Sends `call` until it is answered with an accepted status and `handle` has read the answer,
    /// retrying transient failures (of the send, of the status, or of `handle`, which reads the
    /// body) as the retry policy allows. The response given to `handle` must be read or drained.
    func perform<T>(
        _ call: Call,
        _ handle: (HTTPClientResponse, ObjectStorageError.Context) async throws(ObjectStorageError) -> T
    ) async throws(ObjectStorageError) -> T {
        var attempt = 1
        while true {
            let context = context(call, attempts: attempt)
            var retryAfter: Double?
            let failure: ObjectStorageError
            let clock = ContinuousClock()
            let start = clock.now
            func elapsed() -> Double {
                let duration = start.duration(to: clock.now)
                return Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
            }
            do throws(ObjectStorageError) {
                let response: HTTPClientResponse
                do {
                    response = try await http.execute(prepare(call), deadline: .now() + .nanoseconds(Int64(configuration.requestTimeoutSeconds * 1e9)))
                } catch {
                    statistics.recordRequest(call.operation, .transportError, seconds: elapsed())
                    throw ObjectStorageError.fromTransport(error, context: context)
                }
                statistics.addSent(call.body.length)
                let status = Int(response.status.code)
                if call.accepted.contains(status) {
                    statistics.recordRequest(call.operation, .success, seconds: elapsed())
                    return try await handle(response, context)
                }
                statistics.recordRequest(call.operation, status >= 500 ? .serverError : .clientError, seconds: elapsed())
                let body = (try? await collect(response, limit: 1 << 20, context: context)) ?? []
                let error = S3XML.errorBody(body)
                retryAfter = RetryPolicy.retryAfterSeconds(response.headers.first(name: "Retry-After"))
                throw ObjectStorageError.server(context, status: status, code: error?.code, message: error?.message,
                                                requestId: error?.requestId ?? response.headers.first(name: "x-amz-request-id"))
            } catch {
                failure = error
            }
            guard failure.isTransient, call.body.isReplayable, configuration.retry.allowsRetry(afterAttempt: attempt), !Task.isCancelled else {
                throw failure
            }
            let delay = configuration.retry.delay(afterAttempt: attempt, retryAfterSeconds: retryAfter, unitRandom: random())
            do {
                try await sleep(delay)
            } catch {
                throw .cancelled(context)
            }
            statistics.recordRetry()
            attempt += 1
        }
    }

    /// The whole body of `response` (at most `limit` bytes), counted as received.
    func collect(_ response: HTTPClientResponse, limit: Int, context: ObjectStorageError.Context) async throws(ObjectStorageError) -> [UInt8] {
        var bytes: [UInt8] = []
        if let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length <= limit {
            bytes.reserveCapacity(length)
        }
        do {
            for try await buffer in response.body {
                statistics.addReceived(buffer.readableBytes)
                guard bytes.count + buffer.readableBytes <= limit else {
                    throw ObjectStorageError.badResponse(context, reason: "the answer is longer than \(limit) bytes")
                }
                bytes.append(contentsOf: buffer.readableBytesView)
            }
        } catch {
            throw ObjectStorageError.fromTransport(error, context: context)
        }
        return bytes
    }

    /// Reads and drops whatever body `response` has, so that its connection can serve again.
    func drain(_ response: HTTPClientResponse, context: ObjectStorageError.Context) async throws(ObjectStorageError) {
        do {
            for try await buffer in response.body { statistics.addReceived(buffer.readableBytes) }
        } catch {
            throw ObjectStorageError.fromTransport(error, context: context)
        }
    }

    /// Checks that a key can name an object.
    func check(key: String, _ operation: S3Operation) throws(ObjectStorageError) {
        let context = ObjectStorageError.Context(operation: operation, bucket: configuration.bucket, key: key)
        guard !key.isEmpty else { throw .invalidRequest(context, reason: "the key is empty") }
        guard key.utf8.count <= 1024 else { throw .invalidRequest(context, reason: "the key is longer than 1,024 bytes") }
    }
}
