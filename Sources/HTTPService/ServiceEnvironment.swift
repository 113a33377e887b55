import Catalog
import Hummingbird
import Logging
import NIOPosix
import Operations
import ServiceObservability
import Settings
import Storage
import Synchronization

/// What the handlers share: the spool, catalog and library of the configuration, the media
/// links, the metrics, and the thread pool that blocking work runs on.
struct ServiceEnvironment: Sendable {
    /// The configuration served.
    let configuration: Configuration
    /// Where uploads go.
    let spool: Spool
    /// What the read API reads: SQLite or PostgreSQL.
    let catalog: any CatalogStore
    /// The shared job queue of a catalog several machines use; nil: the spool's own claims.
    let jobs: (any PhotoJobQueue)?
    /// Where originals and variants are: the directory at `library.root`, or a bucket.
    let library: any BlobStore
    /// The counters of `/metrics`.
    let metrics: ServiceMetrics
    /// Where blocking work runs (the admin listener has a pool of its own).
    var threadPool: NIOThreadPool
    /// Where uploads are written into the spool (`server.upload_threads`): apart from the
    /// other blocking work, so that reads never queue behind fsyncs.
    let uploadWriters: NIOThreadPool
    /// Where `/healthz/ready` runs its checks, each bounded in time; both listeners share it.
    let probes = ReadinessProbes()
    let logger: Logger
    /// What answers leave out: the configured paths and the host name.
    let redaction: Redaction
    /// Gives an accepted upload straight to this process's workers (nil when they run elsewhere).
    let handOff: (@Sendable (String) -> Void)?
    /// The status requests waiting for an upload's outcome.
    let waiters: UploadWaiters
    /// Where the helper tasks of a request run: nil for Swift's concurrency pool, the admin
    /// listener's event loop for its requests.
    var executor: (any TaskExecutor)?

    /// The catalog's moments and pictures as the command line shows them.
    var moments: MomentCatalog { MomentCatalog(catalog: catalog) }

    /// Where variant files are fetched.
    var links: MediaLinks {
        MediaLinks(configuration: configuration, library: library, logger: logger)
    }

    /// The largest body taken (`server.max_upload_bytes`).
    var maxBodyBytes: Int { configuration.server.maxUploadBytes }

    /// Runs blocking work (file writes with fsync, SQLite, directory scans) on the thread pool,
    /// so that it never holds an event loop or a thread of the concurrency pool.
    func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await threadPool.runIfActive(body)
    }

    /// Runs an upload's durable write into the spool on the upload writers.
    func writing<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await uploadWriters.runIfActive(body)
    }

    /// The largest JSON body taken (a declaration or a cover): 1 MiB holds the longest moment the
    /// field limits allow (`FieldLimits`) several times over.
    static let jsonBodyBytes = 1 << 20

    /// The whole JSON body of a request, refused with 413 past `jsonBodyBytes`: at once when its
    /// Content-Length says so, else as soon as the bytes read pass it.
    func collectBody(_ request: Request) async throws -> [UInt8] {
        let limit = Self.jsonBodyBytes
        let refusal = APIError.overLimit("the JSON body is larger than \(limit) bytes; declarations and covers are small")
        let declared = request.headers[.contentLength].flatMap { Int($0) }
        if let declared, declared > limit { throw refusal }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(min(declared ?? 0, limit))
        for try await buffer in request.body {
            guard bytes.count + buffer.readableBytes <= limit else { throw refusal }
            bytes.append(contentsOf: buffer.readableBytesView)
        }
        return bytes
    }
}

extension ServiceEnvironment {
    /// Waits until `task` ends or `seconds` pass, whichever comes first (the task goes on);
    /// true when it ended.
    static func wait(for task: Task<Void, Never>, atMost seconds: Double, on executor: (any TaskExecutor)? = nil) async -> Bool {
        let once = OnceFlag()
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            Task(executorPreference: executor) {
                await task.value
                if once.take() { continuation.resume(returning: true) }
            }
            Task(executorPreference: executor) {
                try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                if once.take() { continuation.resume(returning: false) }
            }
        }
    }
}

/// True for the first caller of `take` only.
final class OnceFlag: Sendable {
    private let taken = Mutex(false)

    func take() -> Bool {
        taken.withLock { value in
            defer { value = true }
            return !value
        }
    }
}
