import Catalog
import Foundation
import Ingest
import Logging
import Settings
import Storage
import Synchronization

/// A temporary place with a real spool, library and SQLite catalog, removed afterwards.
final class Stores {
    let root = NSTemporaryDirectory() + "darkroom-ingest-" + UUID().uuidString
    var configuration: Configuration
    let spool: Spool
    let library: Library
    let catalog: Catalog

    init(_ adjust: (inout Configuration) -> Void = { _ in }) throws {
        var configuration = Configuration.defaults
        configuration.spoolRoot = root + "/spool"
        configuration.libraryRoot = root + "/library"
        configuration.catalogPath = root + "/catalog.sqlite"
        configuration.retryBaseSeconds = 0.01
        configuration.concurrency = 2
        adjust(&configuration)
        self.configuration = configuration
        spool = try Spool(root: configuration.spoolRoot, settleSeconds: 0)
        library = try Library(root: configuration.libraryRoot, backupRoot: nil)
        catalog = try Catalog(path: configuration.catalogPath, momentRules: configuration.moments)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// A processor over these stores, or over another catalog in front of this one.
    func processor(catalog: (any PictureCatalog)? = nil) -> PhotoProcessor {
        PhotoProcessor(configuration: configuration, library: library, catalog: catalog ?? self.catalog,
                       budget: PixelBudget(limit: configuration.pixelBudget))
    }

    /// Writes `bytes` as a file under the root and returns its path.
    func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = root + "/in/" + name
        try FileManager.default.createDirectory(atPath: root + "/in", withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Every file below the library's root (temporaries included).
    func libraryFiles() -> [String] {
        let walker = FileManager.default.enumerator(atPath: configuration.libraryRoot)
        var files: [String] = []
        while let relative = walker?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: configuration.libraryRoot + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append(relative)
            }
        }
        return files.sorted()
    }

    static let quiet = Logger(label: "darkroom.test") { _ in SwiftLogNoOpLogHandler() }
}

/// The bundled sample photos, by name.
enum Samples {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("samples").path

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
    }
}

/// The real catalog behind a catalog that refuses its first commits as busy: a transient
/// failure of the kind another writer causes, on demand.
final class BusyFirstCatalog: PictureCatalog {
    let catalog: Catalog
    private let refusalsLeft: Mutex<Int>

    init(_ catalog: Catalog, refusals: Int) {
        self.catalog = catalog
        refusalsLeft = Mutex(refusals)
    }

    var refused: Bool { refusalsLeft.withLock { $0 } == 0 }

    func picture(sha256: String) throws(CatalogError) -> PictureRecord? { try catalog.picture(sha256: sha256) }

    func commitPicture(_ picture: PictureRecord, variants: [VariantRecord], job: JobRecord) throws(CatalogError) -> CommitOutcome {
        let refuse = refusalsLeft.withLock { left in
            guard left > 0 else { return false }
            left -= 1
            return true
        }
        if refuse { throw .busy(path: catalog.path) }
        return try catalog.commitPicture(picture, variants: variants, job: job)
    }

    func recordDuplicate(_ job: JobRecord, of pictureId: Int64, facts: CaptureFacts?) throws(CatalogError) {
        try catalog.recordDuplicate(job, of: pictureId, facts: facts)
    }
    func recordFailure(_ job: JobRecord) throws(CatalogError) { try catalog.recordFailure(job) }
    func finishedJob(claimPath: String) throws(CatalogError) -> JobRecord? { try catalog.finishedJob(claimPath: claimPath) }
    func latestJob(claimPath: String) throws(CatalogError) -> JobRecord? { try catalog.latestJob(claimPath: claimPath) }
}

/// Runs blocking work (a worker's whole run) on a thread of its own, so that it does not hold
/// one of the few threads Swift's concurrency pool has on a 2-core machine while other suites
/// answer HTTP requests in this process.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
