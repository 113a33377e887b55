import AsyncHTTPClient
import Catalog
import Foundation
import PostgresCatalog
import PostgresHarness
import Logging
import NIOCore
import NIOHTTP1
import Settings
import Storage
import Synchronization
import ServiceLifecycle
import Testing
@testable import HTTPService

/// The catalog store a test service runs on: the behaviour suites run on both.
enum TestStore: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    /// SQLite always; PostgreSQL where its server programs are installed (`make deps`).
    static var available: [TestStore] { SharedCluster.available ? allCases : [.sqlite] }
}

/// A `darkroom serve` in this process on a free loopback port, over its own temporary spool,
/// library and catalog (an SQLite file, or a fresh database of a temporary PostgreSQL cluster):
/// the tests talk to it over real HTTP, with no mock anywhere.
final class TestService: Sendable {
    static let token = "test-token-\(UUID().uuidString)"

    let root: String
    let configuration: Configuration
    let server: APIServer
    let port: Int
    /// What the service logged, each event as message and metadata.
    let log = LogRecorder()
    private let group: ServiceGroup
    private let running: Task<Void, any Error>

    var base: String { "http://127.0.0.1:\(port)" }

    /// Starts a service; `configure` adjusts the configuration first.
    /// The PostgreSQL catalog served, when the store is PostgreSQL.
    let postgres: PostgresCatalog?

    private init(workers: Bool, store: TestStore, library: (any BlobStore)?, configure: (inout Configuration) -> Void) async throws {
        root = NSTemporaryDirectory() + "darkroom-http-" + UUID().uuidString
        var configuration = Configuration.defaults
        configuration.spoolRoot = root + "/spool"
        configuration.libraryRoot = root + "/library"
        configuration.catalogPath = root + "/catalog.sqlite"
        configuration.settleSeconds = 0
        configuration.scanIntervalSeconds = 0.2
        configuration.concurrency = 2
        configuration.retryBaseSeconds = 0.05
        configuration.server.host = "127.0.0.1"
        configuration.server.port = 0
        configuration.server.token = Self.token
        configure(&configuration)
        self.configuration = configuration
        let log = log
        let logger = Logger(label: "test") { _ in RecordingLogHandler(recorder: log) }
        switch store {
        case .sqlite:
            postgres = nil
            server = try APIServer(configuration: configuration, catalog: try Catalog(path: configuration.catalogPath, momentRules: configuration.moments),
                                   jobs: nil, runWorkers: workers, library: library, logger: logger, environment: [:])
        case .postgres:
            let catalog = try PostgresCatalog(location: try SharedCluster.freshDatabase(), momentRules: configuration.moments,
                                              maximumConnections: 12)
            postgres = catalog
            server = try APIServer(configuration: configuration, catalog: catalog, jobs: catalog, runWorkers: workers,
                                   library: library, logger: logger, environment: [:])
        }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        group = server.serviceGroup { port in continuation.yield(port) }
        let group = group
        running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        self.port = port
    }

    /// Runs `body` against a fresh service, then stops it (gracefully: the server, then the
    /// workers) and removes its files. `library`: a store other than the directory (a bucket).
    static func with<T>(store: TestStore = .sqlite, workers: Bool = true, library: (any BlobStore)? = nil,
                        configure: (inout Configuration) -> Void = { _ in },
                        _ body: (TestService) async throws -> T) async throws -> T {
        let service = try await TestService(workers: workers, store: store, library: library, configure: configure)
        do {
            let result = try await body(service)
            await service.stop()
            return result
        } catch {
            await service.stop()
            throw error
        }
    }

    private func stop() async {
        await group.triggerGracefulShutdown()
        _ = await running.result
        postgres?.close()
        try? FileManager.default.removeItem(atPath: root)
    }

    /// The catalog served: the SQLite file opened as another process would, or the
    /// PostgreSQL catalog.
    func catalog() throws -> any CatalogStore {
        if let postgres { return postgres }
        return try Catalog(path: configuration.catalogPath)
    }

    /// The SQLite catalog, for what only SQL on its file can check.
    func sqliteCatalog() throws -> Catalog {
        try Catalog(path: configuration.catalogPath)
    }

    /// Sends a request; `token` nil sends none.
    func request(_ method: HTTPMethod, _ path: String, body: [UInt8]? = nil, chunked: Bool = false,
                 headers: [(String, String)] = [], token: String? = TestService.token,
                 client: HTTPClient = .shared) async throws -> Answer {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(body, length: chunked ? .unknown : .known(Int64(body.count))) }
        let response = try await client.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 1 << 26)
        return Answer(status: Int(response.status.code), headers: response.headers, body: Array(bytes.readableBytesView))
    }

    /// Sends a JSON body.
    func send(_ method: HTTPMethod, _ path: String, json: String, token: String? = TestService.token) async throws -> Answer {
        try await request(method, path, body: Array(json.utf8), headers: [("Content-Type", "application/json")], token: token)
    }

    /// Uploads a photo as the raw body, its fields in the query string.
    func upload(_ photo: [UInt8], query: String = "", contentType: String = "image/jpeg") async throws -> Answer {
        try await request(.POST, "/v1/uploads" + (query.isEmpty ? "" : "?" + query), body: photo,
                          headers: [("Content-Type", contentType)])
    }

    /// Polls an upload until it leaves `queued` and `processing`.
    func settled(_ id: String, timeout: Double = 30) async throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let answer = try await request(.GET, "/v1/uploads/\(id)")
            let state = try answer.object()
            let status = state["status"] as? String
            guard status != nil else {
                Issue.record("upload \(id)'s status answered \(answer.status) without a status: \(answer.text)")
                return state
            }
            if status != "queued" && status != "processing" { return state }
            guard Date() < deadline else {
                Issue.record("upload \(id) still \(status ?? "?") after \(timeout) s")
                return state
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The files of accepted photos not yet processed, by name: in `incoming/` (the spool's own
    /// claims on SQLite); with the shared queue, under `queued/` (a folder per photo) once its
    /// admission has moved it there, and still in `incoming/` when the answer came first (the
    /// answer waits for the admission only `UploadHandler.admissionWaitSeconds`).
    func waiting() -> [String] {
        let incoming = files(under: configuration.spoolRoot + "/incoming")
        guard postgres != nil else { return incoming }
        return (incoming + files(under: configuration.spoolRoot + "/queued").map { String($0.drop { $0 != "/" }.dropFirst()) }).sorted()
    }

    /// The path of a waiting file (see `waiting`), nil when there is none.
    func waitingPath(_ name: String) -> String? {
        let queued = configuration.spoolRoot + "/queued"
        if postgres != nil, let file = files(under: queued).first(where: { $0.drop { $0 != "/" }.dropFirst() == name }) {
            return queued + "/" + file
        }
        let path = configuration.spoolRoot + "/incoming/" + name
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    /// Every regular file under a directory, relative to it.
    func files(under directory: String) -> [String] {
        let manager = FileManager.default
        return (manager.subpaths(atPath: directory) ?? []).filter { relative in
            (try? manager.attributesOfItem(atPath: directory + "/" + relative))?[.type] as? FileAttributeType == .typeRegular
        }.sorted()
    }
}

/// A response: status, headers and body.
struct Answer: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object.
    func object() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw AnswerError.notAnObject(text)
        }
        return object
    }

    /// The `error` of an error body.
    var error: String? { (try? object())?["error"] as? String }
}

enum AnswerError: Error {
    case notAnObject(String)
}

/// Sample photos of the repository.
enum Samples {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("samples").path

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
    }

    /// A small JPEG (128×128, 6 KB, no EXIF).
    static func hopper() throws -> [UInt8] { try bytes("hopper.jpg") }

    /// A small JPEG with GPS (47.354184, 10.191316) and a local time without offset
    /// (2019-10-03T09:10:11, so 07:10:11Z in the zone of that place, Europe/Vienna, in October).
    static func gpsPhoto() throws -> [UInt8] { try bytes("issue-exifr-13.jpg") }

    /// A JPEG made distinct by a comment segment right after its start marker.
    static func distinct(_ jpeg: [UInt8], _ comment: String) -> [UInt8] {
        let text = Array(comment.utf8)
        let length = text.count + 2
        return Array(jpeg[0..<2]) + [0xFF, 0xFE, UInt8(length >> 8), UInt8(length & 0xFF)] + text + Array(jpeg[2...])
    }
}

/// A multipart/form-data body.
struct Form {
    let boundary = "darkroom-test-\(UUID().uuidString)"
    var body: [UInt8] = []

    mutating func field(_ name: String, _ value: String) {
        body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
    }

    mutating func file(_ name: String, fileName: String, contentType: String, _ bytes: [UInt8]) {
        body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"; filename=\"\(fileName)\"\r\nContent-Type: \(contentType)\r\n\r\n".utf8)
        body += bytes + Array("\r\n".utf8)
    }

    var closed: [UInt8] { body + Array("--\(boundary)--\r\n".utf8) }
    var contentType: String { "multipart/form-data; boundary=\(boundary)" }
}

/// The events a service logged, kept for a test to read.
final class LogRecorder: Sendable {
    private let events = Mutex<[(message: String, metadata: [String: String])]>([])

    func record(_ message: String, _ metadata: [String: String]) {
        events.withLock { $0.append((message, metadata)) }
    }

    /// The events whose metadata has `key` equal to `value`.
    func events(where key: String, is value: String) -> [(message: String, metadata: [String: String])] {
        events.withLock { $0.filter { $0.metadata[key] == value } }
    }
}

/// A log handler that hands every event to a `LogRecorder`.
struct RecordingLogHandler: LogHandler {
    let recorder: LogRecorder
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields = metadata
        if let extra = event.metadata { fields.merge(extra) { _, new in new } }
        recorder.record("\(event.message)", fields.mapValues { "\($0)" })
    }
}
