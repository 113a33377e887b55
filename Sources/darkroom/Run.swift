import ArgumentParser
import Catalog
import Dispatch
import Failures
import Foundation
import Logging
import Ingest
import Storage
import Terminal

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Process the spool: watch it (daemon) or drain it once.",
        discussion: """
        Without --once, runs until SIGTERM or SIGINT, woken by inotify on spool/incoming/ with a \
        periodic scan as the fallback; on a signal it finishes the photos in hand and exits.

        With --once, processes what is in spool/incoming/ (waiting for files still being written \
        to settle) and exits: 0 when every photo was added or was a duplicate, 1 when any failed \
        (see `darkroom status` for the reasons, `darkroom retry` to try them again).

        Several `darkroom run` processes may share one spool and catalog: each photo is claimed by \
        exactly one of them, and the claims of a process that died are taken back after \
        spool.lease_seconds. One log line per photo goes to standard error.

        With the catalog in PostgreSQL (catalog.url or DARKROOM_CATALOG_URL), processes on \
        several machines share it, with spool.root and library.root on a mount they all reach: \
        each photo found in spool/incoming/ moves to spool/queued/ and becomes a job in the \
        database, and the workers of every machine claim jobs there under a lease they renew; a \
        machine that dies lets its leases lapse and another takes its photos over.

        With webhooks.urls set, the catalog's outbox events are delivered as `darkroom serve` \
        delivers them (signed, retried, in order per moment); with --once, one last pass sends \
        what the run produced before it exits, and what an endpoint did not take stays pending \
        for the next run or `serve`.
        """)

    @OptionGroup var options: ConfigOption

    @Flag(help: "Drain spool/incoming/ and exit, for batch drop folders.")
    var once = false

    @Option(help: ArgumentHelp("Log lines as human-readable text or as JSON objects.", valueName: "text|json"))
    var logFormat: LogFormatArgument = .text

    @Option(help: ArgumentHelp("Photos processed at once (default: worker.concurrency, or one per core, one more with a PostgreSQL catalog).", valueName: "n"))
    var concurrency: Int?

    @Flag(help: "Do not draw a progress bar, even on a terminal.")
    var noProgress = false

    @Flag(help: "A log line for every photo even under the progress bar (always when standard error is not a terminal).")
    var verbose = false

    func validate() throws {
        if let concurrency, concurrency < 1 {
            throw ValidationError("--concurrency must be at least 1 (got \(concurrency))")
        }
    }

    func run() throws {
        var configuration = try options.load(starting: .run)
        if let concurrency { configuration.concurrency = concurrency }
        let drawsProgress = !noProgress && logFormat == .text && Console.shared.isTerminal
        // Under the progress bar, the line of each photo would scroll it away: only notices and
        // worse are written, unless --verbose.
        let logger = logFormat.bootstrap(minimum: drawsProgress && !verbose ? .notice : .info)
        let worker: Worker
        let catalog: CatalogChoice
        let library: LibraryChoice
        do {
            catalog = try CatalogChoice.open(configuration)
            library = try LibraryChoice.open(configuration, shared: catalog.jobs != nil)
            worker = Worker(configuration: configuration,
                            spool: library.staged(try Spool(root: configuration.spoolRoot, settleSeconds: configuration.settleSeconds)),
                            library: library.store, catalog: catalog.store, jobs: catalog.jobs, logger: logger)
        } catch let error as CommandFailure {
            throw error
        } catch {
            throw CommandFailure("cannot open the spool, library or catalog: \(error)", 
                                 status: (error as? any CategorizedError).map { ExitStatus.status(of: $0.category) } ?? ExitStatus.cannotCreate)
        }
        // A missing secret is one line ("Error: webhooks.urls lists ..."), before any photo is taken.
        // Delivery runs on the catalog that holds the outbox, whichever store it is.
        let webhooks = try RunWebhooks.start(configuration, catalog: catalog.store, logger: logger)
        let signals = StopSignals {
            ServiceManager.notify("STOPPING=1")
            worker.stop()
        }
        logger.info("darkroom run", metadata: [
            "spool": "\(configuration.spoolRoot)", "catalog": "\(catalog.location)",
            "library": "\(configuration.libraryRoot)", "workers": "\(configuration.effectiveConcurrency)",
            "mode": "\(once ? "once" : "daemon")",
        ])
        // The catalog is open and the spool was created; a spool that cannot be written to would
        // fail every photo, so it is checked before the service manager is told all is well.
        guard access(configuration.spoolRoot + "/incoming", W_OK) == 0 else {
            throw CommandFailure("cannot write to \(configuration.spoolRoot)/incoming: \(String(cString: strerror(errno))); check its owner and permissions",
                                 status: ExitStatus.cannotCreate)
        }
        ServiceManager.notify("READY=1\nSTATUS=processing photos from \(configuration.spoolRoot)/incoming")
        let options = RunOptions(once: once, progress: !noProgress && logFormat == .text)
        let tally = try onPlainThread {
            let tally = worker.run(options)
            library.close()
            return tally
        }
        signals.cancel()
        webhooks?.finish(lastPass: once)
        if once && tally.failed > 0 { throw ExitCode(1) }
    }
}

/// `--log-format` values.
enum LogFormatArgument: String, ExpressibleByArgument, CaseIterable {
    case text, json
    var format: LogFormat { self == .json ? .json : .text }

    /// Sends every log line of `minimum` or above to standard error in this format; returns the
    /// command's logger.
    func bootstrap(minimum: Logger.Level = .info) -> Logger {
        let format = format
        LoggingSystem.bootstrap { label in
            var handler = ConsoleLogHandler(label: label, format: format)
            handler.logLevel = minimum
            return handler
        }
        return Logger(label: "darkroom")
    }
}
