import ArgumentParser
import Catalog
import Dispatch
import Foundation
import Logging
import LibraryImport
import PostgresCatalog
import Settings
import Storage
import Terminal

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import a whole photo library: folders of JPEG, PNG, HEIC, HEIF and AVIF photos, with their sidecars.",
        discussion: """
        Walks each FOLDER (a phone backup, a Google Takeout export, a desktop photo manager's \
        tree) and processes every JPEG, PNG, HEIC, HEIF and AVIF photo exactly as the spool does: the same metadata, \
        variants, library, catalog commit and moments. Files are told apart by their bytes, not \
        their names; anything else is skipped and listed with its type. Hidden and system files \
        (.DS_Store, Thumbs.db, @eaDir, ...) are passed over. Symlinks are never followed: one that \
        points inside the folders names a file imported where it lies, one that points outside is \
        refused, and loops are reported.

        Sidecars: Google Takeout's JSON (IMG_1.jpg.json, its .supplemental-metadata and cut names, \
        IMG_1.jpg(1).json for IMG_1(1).jpg) gives photoTakenTime and geoData; an XMP sidecar \
        (IMG_1.xmp or IMG_1.jpg.xmp) gives exif:DateTimeOriginal and exif:GPSLatitude/Longitude; a \
        Darkroom sidecar (IMG_1.jpg.json with author_id, taken_at, ...) works as in the spool. They \
        fill what the photo's EXIF lacks; where they disagree with EXIF, EXIF wins and the conflict \
        is recorded. Each picture's warnings say which sidecar gave what.

        Resumable: every file's outcome goes into the catalog's import journal (path, size, \
        modification time). Run the same command again after an interruption (Ctrl-C, kill, \
        reboot) and it continues where it stopped; on a finished import it adds nothing. With \
        catalog.url (or DARKROOM_CATALOG_URL) the pictures and the journal go into that PostgreSQL \
        catalog, and --dry-run reads its journal there; no SQLite file is written. There each \
        photo becomes a job of the shared queue (the bulk lane, behind uploads): it is placed \
        under spool/queued/ with a ticket naming its source and its sidecars' values (hard-linked \
        with --link or --move, else copied), and the workers of every machine on that catalog \
        process it, this command's own among them; the import journals each outcome as it comes \
        and ends when all are in. Stopped, it leaves the rest in the queue for any machine, and \
        its next run journals them. The same \
        bytes twice, here or through the spool, make one picture, recorded as a duplicate. On \
        SIGINT or SIGTERM the photos in hand finish, then it stops. A photo that fails stays where \
        it is, with its reason in the summary and the journal; it is not tried again unless \
        --retry-failed is given.

        Sources are left as they are: --copy (the default) copies each original into the library, \
        --link hard-links it (no second copy of the bytes; on another file system it is copied, and \
        the summary says so; a linked original changes if its source is edited in place), --move \
        places it like --link and deletes the source once its catalog entry has committed (its \
        sidecars and other files stay).

        Progress: a live bar on a terminal, a log line every few seconds otherwise; at the end a \
        summary (imported, duplicates, skipped by type, failed by reason, moments created, time \
        taken), also written as JSON by --report. Exit status: 0 when every photo was imported or \
        was a duplicate, 1 when any failed, 2 when interrupted (run it again to continue).
        """)

    @OptionGroup var options: ConfigOption

    @Argument(help: ArgumentHelp("Folders to import.", valueName: "folder"))
    var folders: [String]

    @Option(help: ArgumentHelp("The author of every photo whose Darkroom sidecar names none (author_id).", valueName: "id"))
    var author: String?

    @Flag(help: "Walk and report what would happen; write nothing.")
    var dryRun = false

    @Flag(help: "How originals reach the library: --copy (default), --link (hard link), or --move (delete sources after commit).")
    var placement: ImportPlacementFlag = .copy

    @Flag(help: "Process again the photos that failed in an earlier run.")
    var retryFailed = false

    @Option(help: ArgumentHelp("Write the summary as JSON to this file.", valueName: "file"))
    var report: String?

    @Option(help: ArgumentHelp("Progress: auto (a bar on a terminal, log lines otherwise), bar, log or none.", valueName: "auto|bar|log|none"))
    var progress: ProgressArgument = .auto

    @Option(help: ArgumentHelp("Seconds between progress log lines.", valueName: "seconds"))
    var progressInterval: Double = ImportOptions.defaultProgressInterval

    @Option(help: ArgumentHelp("Photos processed at once (default: worker.concurrency, or one per core, one more with a PostgreSQL catalog).", valueName: "n"))
    var concurrency: Int?

    @Option(help: ArgumentHelp("Log lines as human-readable text or as JSON objects.", valueName: "text|json"))
    var logFormat: LogFormatArgument = .text

    @Option(help: ArgumentHelp("Nice steps by which the import's threads lower their CPU priority (0 to 19): below the spool's workers, so uploads go first.", valueName: "n"))
    var niceness: Int = ImportOptions.defaultNiceness

    @Flag(help: "Log one line per photo.")
    var verbose = false

    func validate() throws {
        if folders.isEmpty { throw ValidationError("name at least one folder to import") }
        if !(0...19).contains(niceness) { throw ValidationError("--niceness \(niceness): give a number of nice steps from 0 to 19") }
        for folder in folders {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("\(folder): not a folder; name the folders of the library to import")
            }
        }
        if let concurrency, concurrency < 1 { throw ValidationError("--concurrency must be at least 1 (got \(concurrency))") }
        if !(progressInterval > 0) { throw ValidationError("--progress-interval must be above 0 seconds (got \(progressInterval))") }
        if let author, author.isEmpty { throw ValidationError("--author must not be empty") }
        if dryRun && placement == .move { throw ValidationError("--dry-run writes nothing: drop --move, or drop --dry-run") }
    }

    func run() throws {
        var configuration = try options.load()
        if let concurrency { configuration.concurrency = concurrency }
        let logger = logFormat.bootstrap()
        let importOptions = ImportOptions(folders: folders, author: author, dryRun: dryRun, placement: placement.placement,
                                          retryFailed: retryFailed, progress: progress.style,
                                          progressInterval: progressInterval, verbose: verbose, niceness: niceness)
        // A dry run only reads the journal; a real one opens the configured store and writes there.
        // On PostgreSQL the import's own threads are the worker's, the scan, the renewer, the
        // hand-over and the collector of outcomes.
        let postgres = dryRun ? nil : try CatalogChoice.openPostgres(configuration, extraConnections: 4)
        defer { postgres?.close() }
        let library = postgres == nil ? nil : try LibraryChoice.open(configuration, shared: true)
        var spool = postgres == nil ? nil : try Self.openSpool(configuration)
        if let library, let opened = spool { spool = library.staged(opened) }
        let importer: Importer
        do {
            if dryRun {
                importer = try Importer(configuration: configuration, options: importOptions, logger: logger) { () throws(CatalogError) in
                    try CatalogChoice.importJournalReader(configuration)
                }
            } else if let postgres, let spool {
                importer = try Importer(configuration: configuration, options: importOptions, catalog: postgres,
                                        sharedQueue: ImportSharedQueue(spool: spool, jobs: postgres, library: library?.store), logger: logger)
            } else {
                importer = try Importer(configuration: configuration, options: importOptions, logger: logger)
            }
        } catch {
            throw CommandFailure(error.description, status: ExitStatus.cannotCreate)
        }
        // A dry run opens no catalog: its PostgreSQL address is named by the setting alone.
        let catalogName = postgres?.location.description
            ?? (configuration.effectiveCatalogURL() == nil ? configuration.catalogPath : "PostgreSQL (catalog.url)")
        let signals = StopSignals {
            logger.notice("stopping: finishing the photos in hand; run the same command again to continue")
            importer.stop()
        }
        logger.info("darkroom import", metadata: [
            "folders": "\(importer.roots.joined(separator: ","))", "mode": "\(dryRun ? "dry-run" : placement.placement.rawValue)",
            "catalog": "\(catalogName)", "library": "\(configuration.libraryRoot)",
            "workers": "\(configuration.effectiveConcurrency)",
        ])
        let result = try onPlainThread {
            let result = importer.run()
            library?.close()
            return result
        }
        signals.cancel()
        print(result.summary())
        if let report {
            do {
                try Data((result.json() + "\n").utf8).write(to: URL(fileURLWithPath: report), options: .atomic)
            } catch {
                throw CommandFailure(ImportError.reportNotWritten(report, reason: error.localizedDescription).description, status: ExitStatus.cannotCreate)
            }
        }
        if result.interrupted { throw ExitCode(2) }
        if result.failed > 0 && !dryRun { throw ExitCode(1) }
    }
}

extension Import {
    /// The spool whose `queued/` an import on PostgreSQL hands its photos to.
    static func openSpool(_ configuration: Configuration) throws -> Spool {
        do {
            return try Spool(root: configuration.spoolRoot, settleSeconds: configuration.settleSeconds)
        } catch {
            throw CommandFailure("cannot open the spool at \(configuration.spoolRoot), where the import's photos wait for the workers: \(error)",
                                 status: ExitStatus.cannotCreate)
        }
    }
}

/// `--copy`, `--link`, `--move`.
enum ImportPlacementFlag: String, EnumerableFlag {
    case copy, link, move

    var placement: ImportPlacement {
        switch self {
        case .copy: .copy
        case .link: .link
        case .move: .move
        }
    }

    static func help(for value: ImportPlacementFlag) -> ArgumentHelp? {
        switch value {
        case .copy: "Copy each original into the library (the default); sources stay as they are."
        case .link: "Hard-link each original into the library when on the same file system (else copy)."
        case .move: "Place each original in the library, then delete its source once committed."
        }
    }
}

/// `--progress` values.
enum ProgressArgument: String, ExpressibleByArgument, CaseIterable {
    case auto, bar, log, none

    var style: ImportProgressStyle {
        ImportProgressStyle(rawValue: rawValue) ?? .auto
    }
}
