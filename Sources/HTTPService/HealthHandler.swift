import BucketStorage
import Catalog
import Foundation
import Storage
import Hummingbird
import Synchronization

/// `GET /healthz` (the process answers), `GET /healthz/ready` (it can take uploads: the catalog
/// answers and the spool is writable) and `GET /metrics` (Prometheus text).
struct HealthHandler: Sendable {
    let environment: ServiceEnvironment

    /// The Prometheus text format's content type.
    static let metricsContentType = "text/plain; version=0.0.4"

    /// What a check reports when it passes.
    static let passed = "ok"

    /// 200 while the process serves requests.
    func liveness() -> Response {
        JSONBody.response(["status": Self.passed])
    }

    /// 200 when the catalog answers and a file can be created in the spool, else 503 with what
    /// is wrong (without paths: the log has them under the answer's request id). A shared
    /// catalog's database is judged by the process's own probe (`PhotoJobQueue.availability`),
    /// so that an outage is answered at once, without a thread waiting on the database.
    func readiness() async throws -> Response {
        let environment = environment
        let requestID = RequestID.current
        if let outage = environment.jobs?.availability.outage {
            var report = Readiness(catalog: Self.outageSentence(outage), spool: Self.passed)
            report.requestId = requestID
            // The outage itself is logged once, by the probe that saw it.
            environment.logger.debug("not ready", metadata: [
                "request_id": "\(requestID ?? "-")", "check": "catalog", "reason": "\(outage.reason)"])
            return JSONBody.response(report, status: .serviceUnavailable, headers: [.retryAfter: APIError.retryAfterSeconds])
        }
        let shared = environment.jobs != nil
        var report = try await environment.blocking { () -> Readiness in
            func check(_ name: String, _ body: () throws -> Void) -> String {
                do {
                    try body()
                    return Self.passed
                } catch {
                    environment.logger.warning("not ready", metadata: [
                        "request_id": "\(requestID ?? "-")", "check": "\(name)", "reason": "\(error)"])
                    return environment.redaction.scrub(APIError(error).description)
                }
            }
            return Readiness(catalog: shared ? Self.passed : check("catalog") {
                                 try environment.catalog.checkReachable()
                                 if environment.catalog is Catalog { try Self.checkCatalogWritable(environment.configuration.catalogPath) }
                             },
                             spool: check("spool") {
                                 try environment.spool.checkWritable()
                                 try Self.checkSpace(of: "spool", at: environment.spool.root, needed: environment.maxBodyBytes)
                             })
        }
        report.library = await libraryReadiness(requestID: requestID)
        if !report.ready { report.requestId = requestID }
        return JSONBody.response(report, status: report.ready ? .ok : .serviceUnavailable)
    }

    /// Whether the library answers (a bucket: one listing of its prefix), within a second: a
    /// bucket that does not answer makes the server not ready, never a readiness that hangs.
    /// A directory is looked at at once (a stat and the free space): no second's bound, which
    /// a busy thread pool, not the directory, could overrun.
    func libraryReadiness(requestID: String?) async -> String {
        let environment = environment
        if environment.library is Library {
            do {
                try LibraryStores.checkReachable(environment.library)
                try Self.checkSpace(of: "library", at: environment.configuration.libraryRoot, needed: environment.maxBodyBytes)
                return Self.passed
            } catch {
                environment.logger.warning("not ready", metadata: [
                    "request_id": "\(requestID ?? "-")", "check": "library", "reason": "\(error)"])
                return environment.redaction.scrub((error as? APIError)?.description
                    ?? "the library at \(environment.library.location) cannot be reached: \(error)")
            }
        }
        let result = Mutex<String?>(nil)
        let asked = Task(executorPreference: environment.executor) {
            let said: String
            do {
                try await environment.blocking { try LibraryStores.checkReachable(environment.library) }
                said = Self.passed
            } catch let error as APIError {
                environment.logger.warning("not ready", metadata: [
                    "request_id": "\(requestID ?? "-")", "check": "library", "reason": "\(error)"])
                said = environment.redaction.scrub(error.description)
            } catch {
                environment.logger.warning("not ready", metadata: [
                    "request_id": "\(requestID ?? "-")", "check": "library", "reason": "\(error)"])
                said = environment.redaction.scrub("the library at \(environment.library.location) cannot be reached: \(error)")
            }
            result.withLock { $0 = said }
        }
        guard await ServiceEnvironment.wait(for: asked, atMost: Self.libraryCheckSeconds, on: environment.executor), let said = result.withLock({ $0 }) else {
            return "the library at \(environment.library.location) did not answer within \(Int(Self.libraryCheckSeconds)) s"
        }
        return said
    }

    /// Throws when the file system of `path` has less than `needed` bytes free (one upload of
    /// `server.max_upload_bytes`): the spool or library is full for practical purposes.
    static func checkSpace(of name: String, at path: String, needed: Int) throws(APIError) {
        var figures = statvfs()
        guard statvfs(path, &figures) == 0 else { return }
        let free = Int(figures.f_bavail) * Int(figures.f_frsize)
        guard free < needed else { return }
        throw .unavailable("the \(name) is full: \(free) bytes free, less than one upload of server.max_upload_bytes (\(needed)); free some space")
    }

    /// Throws when the SQLite catalog cannot be written: its file, its journal or its folder
    /// refuses writing (read-only, immutable, another owner), or its file system is full.
    static func checkCatalogWritable(_ path: String) throws(APIError) {
        let folder = (path as NSString).deletingLastPathComponent
        for file in [path, path + "-wal", path + "-shm", folder.isEmpty ? "." : folder] where FileManager.default.fileExists(atPath: file) {
            guard access(file, W_OK) == 0 else {
                let reason = String(cString: strerror(errno))
                throw .unavailable("the catalog cannot be written (\(reason)); make its file and folder writable by the server's user")
            }
        }
        var figures = statvfs()
        if statvfs(path, &figures) == 0, Int(figures.f_bavail) * Int(figures.f_frsize) < minimumCatalogFreeBytes {
            throw .unavailable("the catalog cannot be written: its file system is full; free some space")
        }
    }

    /// The least free space the catalog's file system must have: a few transactions' worth.
    static let minimumCatalogFreeBytes = 1 << 20

    /// How long readiness waits for the library.
    static let libraryCheckSeconds = 1.0

    /// What readiness says of a database outage: which database, since when.
    static func outageSentence(_ outage: CatalogOutage) -> String {
        "the catalog's database (PostgreSQL) cannot be reached for \(Int(Date().timeIntervalSince(outage.since).rounded())) s; work is paused until it is back"
    }

    /// `GET /openapi.json`: the API's description, as built into the binary.
    static func openAPI() -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: PackageResources.openapi_json)))
    }

    /// The metrics in the Prometheus text format.
    func metrics() async throws -> Response {
        let environment = environment
        let reachable = environment.jobs?.availability.outage == nil
        let text = try await environment.blocking {
            environment.metrics.render(catalog: environment.catalog, spool: environment.spool, catalogReachable: reachable,
                                       library: environment.library)
        }
        return Response(status: .ok, headers: [.contentType: Self.metricsContentType],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}

/// What `GET /healthz/ready` answers: each check's result, `ok` or what is wrong.
struct Readiness: Encodable, Sendable {
    var ready: Bool
    var catalog: String
    var spool: String
    /// The library: a directory that can be written, or a bucket that answers.
    var library: String = HealthHandler.passed {
        didSet { judge() }
    }
    /// One line on what is wrong, when something is.
    var error: String?
    /// The request's id, when something is wrong: the log has the detail under it.
    var requestId: String?

    init(catalog: String, spool: String) {
        self.catalog = catalog
        self.spool = spool
        ready = false
        judge()
    }

    private mutating func judge() {
        let problems = [("catalog", catalog), ("spool", spool), ("library", library)].filter { $0.1 != HealthHandler.passed }
        ready = problems.isEmpty
        error = problems.isEmpty ? nil : problems.map { "\($0.0): \($0.1)" }.joined(separator: "; ")
    }
}
