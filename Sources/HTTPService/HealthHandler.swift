import BucketStorage
import Catalog
import Foundation
import ServiceObservability
import Storage
import Hummingbird

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

    /// 200 when the catalog answers, a file can be created in the spool and the library can be
    /// reached, else 503 with what is wrong (without paths: the log has them under the answer's
    /// request id). The three checks run at once on `ReadinessProbes`' threads, each waited for
    /// at most `checkSeconds`: a file system or a bucket that does not answer makes the server
    /// not ready, never a readiness request that hangs. A shared catalog's database is judged by
    /// the process's own probe (`PhotoJobQueue.availability`), so that an outage is answered at
    /// once, without a thread waiting on the database.
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
        async let catalog = environment.jobs != nil ? Self.passed : check("catalog", requestID: requestID, what: "the catalog") {
            try environment.catalog.checkReachable()
            if environment.catalog is Catalog { try Self.checkCatalogWritable(environment.configuration.catalogPath) }
        }
        async let spool = check("spool", requestID: requestID, what: "the spool") {
            try environment.spool.checkWritable()
            try Self.checkSpace(of: "spool", at: environment.spool.root, needed: environment.maxBodyBytes)
        }
        let library = "the library at \(environment.library.location)"
        async let libraryReport = check("library", requestID: requestID, what: library,
                                        explain: { ($0 as? APIError)?.description ?? "\(library) cannot be reached: \($0)" }) {
            try LibraryStores.checkReachable(environment.library)
            if environment.library is Library {
                try Self.checkSpace(of: "library", at: environment.configuration.libraryRoot, needed: environment.maxBodyBytes)
            }
        }
        var report = Readiness(catalog: await catalog, spool: await spool)
        report.library = await libraryReport
        if !report.ready { report.requestId = requestID }
        return JSONBody.response(report, status: report.ready ? .ok : .serviceUnavailable)
    }

    /// The check `kind` on the probes' threads: `passed`, or one line on what is wrong (`explain`
    /// of its error, scrubbed of paths; the log has the detail), or that `what` did not answer
    /// within `checkSeconds`.
    func check(_ kind: String, requestID: String?, what: String, explain: (any Error) -> String = { APIError($0).description },
               _ body: @escaping @Sendable () throws -> Void) async -> String {
        let environment = environment
        let outcome = await environment.probes.check(kind, within: Self.checkSeconds, on: environment.executor, body)
        // The log has the error itself, paths and all; the answer a sentence without them.
        let sentence: String, reason: String
        switch outcome {
        case .success?:
            return Self.passed
        case .failure(let error)?:
            (sentence, reason) = (explain(error), "\(error)")
        case nil:
            sentence = "\(what) did not answer within \(Int(Self.checkSeconds)) s"
            reason = sentence
        }
        environment.logger.warning("not ready", metadata: [
            "request_id": "\(requestID ?? "-")", "check": "\(kind)", "reason": "\(reason)"])
        return environment.redaction.scrub(sentence)
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

    /// How long readiness waits for each of its checks.
    static let checkSeconds = 1.0

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
