import Catalog
import CatalogImports
import Foundation
import Imaging
import Logging
#if canImport(Glibc)
import Glibc
import Ingest
import Settings
import Storage
import Terminal
#endif

/// Bulk import of a photo library: walks folders, reads the sidecars real libraries carry
/// (Google Takeout's JSON, XMP, Darkroom's own), and feeds every JPEG and PNG through the same
/// `PhotoProcessor` and catalog commit as the spool, on threads bounded like the worker's
/// (`worker.concurrency` and `worker.pixel_budget`).
///
/// Resumable and idempotent: each file's outcome goes into the catalog's import journal (path,
/// size, modification time), so a second run skips what is done. A commit whose journal row was
/// lost to a kill is found again by its job row. The same bytes twice, here or through the spool,
/// make one picture. A stop (SIGINT, SIGTERM) finishes the photos in hand; the rest waits for
/// the next run. Sources are never touched, except with `--move`, after their commit.
public final class Importer: Sendable {
    /// The settings of `pipeline.json`.
    public let configuration: Configuration
    /// What this import was asked to do.
    public let options: ImportOptions
    /// The folders to walk: absolute, symlinks resolved, none inside another.
    public let roots: [String]
    let logger: Logger
    let identity = WorkerIdentity.current
    let stopSignal = StopSignal()
    let queue: ImportQueue
    let services: Services?
    /// What a dry run reads the journal from (a real run reads it from its catalog).
    let journalReader: (any ImportedFilesReader)?

    /// What a real (not dry) run writes to.
    struct Services: Sendable {
        /// The local library: `--link` and `--move` need to know its file system.
        let library: Library
        let catalog: any ImportJournal
        let processor: PhotoProcessor
        /// The shared queue the photos are handed to (a PostgreSQL catalog), nil to process them here.
        let shared: ImportSharedQueue?
    }

    /// The bytes read from each file to tell its type.
    static let headBytes = 512

    /// Checks the folders and opens the library and the SQLite catalog at `catalog.path` (for a
    /// dry run, only the catalog's journal, read-only; nothing is created).
    public convenience init(configuration: Configuration, options: ImportOptions, logger: Logger) throws(ImportError) {
        if options.dryRun {
            try self.init(configuration: configuration, options: options, logger: logger) { () throws(CatalogError) in
                try ImportJournalReader(path: configuration.catalogPath)
            }
            return
        }
        // Folders refused before anything is created: no library, no catalog file.
        _ = try ImportWalker.roots(options.folders)
        let library = try Self.openLibrary(configuration)
        let catalog: Catalog
        do {
            catalog = try Catalog(path: configuration.catalogPath, momentRules: configuration.moments)
        } catch {
            throw .cannotOpen(error.description)
        }
        try self.init(configuration: configuration, options: options, library: library, catalog: catalog, logger: logger)
    }

    /// An import (not a dry run) into a catalog already open, whichever store keeps its import
    /// journal; opens the local library. With `sharedQueue`, the photos become jobs of that queue,
    /// processed by the workers of every machine (this process's own among them).
    public convenience init(configuration: Configuration, options: ImportOptions, catalog: any ImportJournal,
                            sharedQueue: ImportSharedQueue? = nil, logger: Logger) throws(ImportError) {
        try self.init(configuration: configuration, options: options, library: try Self.openLibrary(configuration),
                      catalog: catalog, sharedQueue: sharedQueue, logger: logger)
    }

    /// A dry run (`options.dryRun`): walks and reports, reading which files are done from the
    /// journal that `openJournal` opens read-only. When it cannot, every photo counts as new.
    public init(configuration: Configuration, options: ImportOptions, logger: Logger,
                openJournal: () throws(CatalogError) -> any ImportedFilesReader) throws(ImportError) {
        precondition(options.dryRun, "a dry run's importer writes nothing; give options.dryRun")
        self.configuration = configuration
        self.options = options
        self.logger = logger
        roots = try ImportWalker.roots(options.folders)
        queue = ImportQueue(capacity: 2 * configuration.effectiveConcurrency)
        services = nil
        do {
            journalReader = try openJournal()
        } catch {
            logger.warning("cannot read the import journal; the dry run counts every photo as new", metadata: ["reason": "\(error)"])
            journalReader = nil
        }
    }

    /// An import (not a dry run) into stores already open: the local library and any catalog
    /// that keeps an import journal.
    public init(configuration: Configuration, options: ImportOptions, library: Library, catalog: any ImportJournal,
                sharedQueue: ImportSharedQueue? = nil, logger: Logger) throws(ImportError) {
        self.configuration = configuration
        self.options = options
        self.logger = logger
        roots = try ImportWalker.roots(options.folders)
        queue = ImportQueue(capacity: 2 * configuration.effectiveConcurrency)
        services = Services(library: library, catalog: catalog,
                            processor: PhotoProcessor(configuration: configuration, library: library, catalog: catalog,
                                                      budget: PixelBudget(limit: configuration.pixelBudget)),
                            shared: sharedQueue)
        journalReader = nil
    }

    /// The library of originals and variants at `library.root`, created when missing.
    private static func openLibrary(_ configuration: Configuration) throws(ImportError) -> Library {
        do {
            return try Library(root: configuration.libraryRoot, backupRoot: configuration.backupDir)
        } catch {
            throw .cannotOpen(error.description)
        }
    }

    /// Asks a running import to stop: photos in hand finish, nothing new is taken.
    public func stop() {
        stopSignal.raise()
        queue.stop()
    }

    /// Runs the import to its end (or to a stop) and returns its report.
    public func run() -> ImportReport {
        let started = Date()
        let ledger = ImportLedger(ImportReport(roots: roots, mode: options.placement, dryRun: options.dryRun, startedAt: started))
        var importId: Int64?
        var outboxMark: Int64 = 0
        if let services {
            let swept = services.library.sweepTemporaries(olderThan: configuration.photoTimeoutSeconds)
            if swept > 0 { logger.info("swept temporary files left by a killed run", metadata: ["count": "\(swept)"]) }
            if let abandoned = try? services.catalog.markAbandonedImports(isGone: WorkerIdentity.isGone), abandoned > 0 {
                logger.info("an earlier import was killed before it finished; this run continues it", metadata: ["runs": "\(abandoned)"])
            }
            outboxMark = (try? services.catalog.outboxHighWater()) ?? 0
            let rootsJSON = (try? JSONSerialization.data(withJSONObject: roots, options: [.withoutEscapingSlashes]))
                .map { String(decoding: $0, as: UTF8.self) } ?? "[]"
            importId = try? services.catalog.startImport(ImportRunRecord(roots: rootsJSON, mode: options.placement.rawValue,
                                                                         worker: identity.name, startedAt: started.timeIntervalSince1970))
        }
        let walker = ImportWalker(roots: roots, excluded: excludedFolders())

        // A first, quick walk counts the photo files, so that progress has a total.
        var found = 0
        walker.walk { folder in
            found += folder.files.lazy.filter { !ImportSidecarMatcher.isSidecarName($0) }.count
            return !stopSignal.isRaised
        }
        ledger.startProcessing(found: found)
        let links = linkDecisions(ledger)
        let progress = ImportProgress(style: options.progress.resolved(isTerminal: Console.shared.isTerminal),
                                      interval: options.progressInterval, logger: logger) { ledger.snapshot() }
        progress.start()
        if let services, let shared = services.shared {
            processShared(shared, services, walker: walker, links: links, ledger, progress, importId: importId)
        } else {
            processHere(walker: walker, links: links, ledger, progress, importId: importId)
        }
        progress.finish()

        let interrupted = stopSignal.isRaised && ledger.snapshot().settled < found
        var created = 0
        var holding = 0
        if let services {
            created = (try? services.catalog.outboxEvents(.momentCreated, after: outboxMark)) ?? 0
            holding = importId.flatMap { try? services.catalog.momentCount(ofImport: $0) } ?? 0
        }
        let report = ledger.finish(interrupted: interrupted, momentsCreated: created, momentsWithImportedPictures: holding,
                                   importId: importId, startedAt: started)
        if let services, let importId {
            try? services.catalog.finishImport(id: importId, outcome: interrupted ? .interrupted : .finished,
                                               reportJSON: report.json(), at: Date().timeIntervalSince1970)
        }
        return report
    }

    /// Processes the photos on this machine's threads as the walk finds them.
    private func processHere(walker: ImportWalker, links: [String: Bool], _ ledger: ImportLedger, _ progress: ImportProgress,
                             importId: Int64?) {
        let pool = WorkerPool()
        // Below the spool's workers: uploads processed beside an import go first.
        pool.start("import", count: configuration.effectiveConcurrency, niceness: options.niceness, refused: { [logger] reason in
            logger.warning("cannot lower the import's CPU priority", metadata: ["reason": "\(reason)"])
        }) { [self] _ in
            while let item = queue.next() { handle(item, ledger, progress, importId: importId) }
        }
        walker.walk { folder in
            !stopSignal.isRaised && feed(folder, ledger, linking: links[root(of: folder.path)] ?? false)
        }
        queue.close()
        pool.join()
    }

    // MARK: Walking

    /// Darkroom's own folders, never imported even when they lie inside a folder given.
    private func excludedFolders() -> [String] {
        [configuration.libraryRoot, configuration.spoolRoot, configuration.backupDir].compactMap { $0 }.compactMap(ImportWalker.realPath)
    }

    func root(of path: String) -> String {
        roots.first { ImportWalker.contains($0, path) } ?? path
    }

    /// Whether each root's originals may be hard-linked: only on the library's file system.
    private func linkDecisions(_ ledger: ImportLedger) -> [String: Bool] {
        guard options.placement.prefersLink, let services else { return [:] }
        let libraryDevice = services.library.device
        var decisions: [String: Bool] = [:]
        for root in roots {
            let same = libraryDevice != nil && FileSystem.device(of: root) == libraryDevice
            decisions[root] = same
            if !same {
                let note = "\(root) is on another file system than the library (\(configuration.libraryRoot)): its originals are copied, not linked"
                ledger.placementNote(note)
                logger.notice("copying instead of linking", metadata: ["folder": "\(root)", "library": "\(configuration.libraryRoot)"])
            }
        }
        return decisions
    }

    /// Sorts one folder's files (photos, sidecars, other files) and queues its photos; false when
    /// the import is stopping.
    func feed(_ folder: ImportFolder, _ ledger: ImportLedger, linking: Bool) -> Bool {
        ledger.walked(folder)
        let photos = folder.files.filter { !ImportSidecarMatcher.isSidecarName($0) }
        let sidecarFiles = folder.files.filter(ImportSidecarMatcher.isSidecarName)
        let matches = ImportSidecarMatcher.match(photos: photos, sidecars: sidecarFiles)
        let used = Set(matches.values.flatMap { [$0.json, $0.xmp].compactMap { $0 } })
        for name in sidecarFiles where !used.contains(name) {
            let type = name.lowercased().hasSuffix(".xmp") ? "an XMP sidecar with no photo"
                : "a JSON file with no photo (album metadata, or a sidecar whose photo is missing)"
            ledger.skipped(folder.displayPath + "/" + name, type: type, countsAsPhotoFile: false)
        }
        let journal = journalRows(folder.path)
        for name in photos {
            guard !stopSignal.isRaised else { return false }
            let path = folder.path + "/" + name
            let display = folder.displayPath + "/" + name
            guard let version = FileSystem.version(of: path) else {
                ledger.skipped(display, type: "a file that vanished during the import", countsAsPhotoFile: true)
                continue
            }
            if let row = journal[path], row.matches(size: version.size, modifiedNs: version.modifiedNs) {
                if row.outcome != .failed {
                    ledger.alreadyImported(deleted: deleteSourceIfMoving(path))
                    continue
                }
                if !options.retryFailed {
                    ledger.failedBefore()
                    continue
                }
            }
            let head = FileSystem.head(path, count: Self.headBytes)
            guard let head, let format = Imaging.sniff(head) else {
                ledger.skipped(display, type: Self.typeName(head), countsAsPhotoFile: true)
                continue
            }
            let item = ImportItem(path: path, directory: folder.path, name: name, sourceName: display,
                                  size: version.size, modifiedNs: version.modifiedNs,
                                  fileExtension: PhotoFormat.fileExtension(format), sidecars: matches[name], linkOriginal: linking)
            guard queue.put(item) else { return false }
        }
        return true
    }

    private func journalRows(_ directory: String) -> [String: ImportFileRecord] {
        do {
            let journal: (any ImportedFilesReader)? = services?.catalog ?? journalReader
            return try journal?.importedFiles(inDirectory: directory) ?? [:]
        } catch {
            logger.error("cannot read the import journal; the folder's photos are processed again (duplicates are still caught)",
                         metadata: ["folder": "\(directory)", "reason": "\(error)"])
            return [:]
        }
    }

    /// With `--move`, deletes a source whose commit is in the journal; whether it did.
    func deleteSourceIfMoving(_ path: String) -> Bool {
        options.placement == .move && !options.dryRun && unlink(path) == 0
    }

    /// What a file that is neither JPEG nor PNG looks like, by its first bytes, as a group name.
    static func typeName(_ head: [UInt8]?) -> String {
        guard let head else { return "an unreadable file" }
        return Imaging.describe(head, showingBytes: false)
    }
}
