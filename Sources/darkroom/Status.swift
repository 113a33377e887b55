import ArgumentParser
import Catalog
import CatalogImports
import Foundation
import Storage

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the queue, the failures and the catalog.",
        discussion: """
        Queue depth (photos waiting in spool/incoming/), photos in progress, failed photos with \
        their reasons, pictures, moments and throughput (photos finished in the last minute and \
        hour), and the latest `darkroom import` runs with what their files became (a run whose \
        process is gone without saying how it ended shows as abandoned: run the same import again \
        to continue it). Reads the spool and the catalog; changes nothing.
        """)

    @OptionGroup var options: ConfigOption

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    @Option(help: ArgumentHelp("Failed photos to list (text output).", valueName: "n"))
    var failures = 10

    @Option(help: ArgumentHelp("Import runs to list, newest first.", valueName: "n"))
    var imports = 3

    func validate() throws {
        if failures < 0 { throw ValidationError("--failures must be 0 or more (got \(failures))") }
        if imports < 0 { throw ValidationError("--imports must be 0 or more (got \(imports))") }
    }

    func run() throws {
        let configuration = try options.load()
        // Read-only: a spool or an SQLite catalog that is not there yet is read as an empty one
        // in a scratch folder, removed at the end, so that nothing is created where it runs.
        let scratch = NSTemporaryDirectory() + "darkroom-status-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let spoolThere = FileManager.default.fileExists(atPath: configuration.spoolRoot)
        let spool = try Spool(root: spoolThere ? configuration.spoolRoot : scratch + "/spool", settleSeconds: configuration.settleSeconds)
        var opened = configuration
        let catalogThere = configuration.effectiveCatalogURL() != nil || FileManager.default.fileExists(atPath: configuration.catalogPath)
        if !catalogThere { opened.catalogPath = scratch + "/catalog.sqlite" }
        let catalog = try CatalogChoice.open(opened)
        let catalogLocation = catalogThere ? catalog.location : configuration.catalogPath
        let depth = spool.depth()
        let counts = try catalog.store.counts(now: Date())
        let failed = spool.failures()
        // With the shared queue, a photo found in incoming/ waits as a job (its file under queued/).
        let queue = try catalog.jobs.map { jobs in
            let depth = try jobs.photoQueueDepth()
            return QueueDepth(queued: depth.claimable, held: depth.held)
        }
        // The shared queue's processes: alive while their heartbeat is younger than a lease.
        let now = Date()
        let holders = try catalog.jobs.map { jobs in
            try jobs.instances(recent: configuration.leaseSeconds * 10).map { instance in
                HolderReport(name: instance.name, host: instance.host, pid: instance.pid,
                             alive: instance.isAlive(leaseSeconds: configuration.leaseSeconds, now: now),
                             stopped: instance.stoppedAt != nil, holding: instance.holding,
                             lastHeartbeatSecondsAgo: max(0, now.timeIntervalSince(instance.heartbeatAt)))
            }
        }
        // Shown as abandoned when their process is gone (on this machine, or by its heartbeat in
        // the shared queue); the next import records it.
        let runs = try catalog.importRuns.importRuns(limit: imports).map { run -> ImportRunSummary in
            var run = run
            let holder = holders?.first { $0.name == run.worker }
            if run.outcome == .running && (WorkerIdentity.isGone(run.worker) || holder.map { !$0.alive } == true) {
                run.outcome = .abandoned
            }
            return run
        }
        if json {
            let report = StatusReport(spool: configuration.spoolRoot, catalog: catalogLocation,
                                      library: configuration.libraryRoot, incoming: depth.incoming,
                                      processing: depth.processing, failed: depth.failed, counts: counts,
                                      queue: queue, holders: holders, failures: failed, imports: runs)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            encoder.keyEncodingStrategy = .convertToSnakeCase
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
            return
        }
        print("spool     \(configuration.spoolRoot)")
        print("  waiting     \(depth.incoming)")
        if let queue {
            print("  queued      \(queue.queued)  (jobs of the shared queue, waiting for a worker on any machine)")
            print("  processing  \(queue.held)  (held by a worker under a lease)")
            // Every process seen lately that did not stop cleanly, and any that holds photos.
            for holder in holders ?? [] where holder.holding > 0 || !holder.stopped {
                let state = holder.alive ? "live" : holder.stopped ? "stopped" : "dead, its leases lapse for others to take"
                print("    \(holder.name)  \(state), last heartbeat \(Int(holder.lastHeartbeatSecondsAgo.rounded())) s ago, holding \(holder.holding)")
            }
        } else {
            print("  processing  \(depth.processing)")
        }
        let byCategory = Dictionary(grouping: failed) { $0.category ?? "unrecorded" }.mapValues(\.count)
        let categories = byCategory.keys.sorted().map { "\($0) \(byCategory[$0] ?? 0)" }.joined(separator: ", ")
        print("  failed      \(depth.failed)" + (categories.isEmpty ? "" : "  (\(categories))"))
        print("catalog   \(catalogLocation)" + (catalogThere ? "" : "  (not created yet: `darkroom run` or `serve` creates it)"))
        print("  pictures    \(counts.pictures)  (\(counts.variants) variants)")
        print("  moments     \(counts.moments) in \(counts.places) places")
        print("  jobs        \(counts.jobsAdded) added, \(counts.jobsDuplicate) duplicates, \(counts.jobsFailed) failed")
        print("  throughput  \(counts.finishedLastMinute) photos in the last minute, \(counts.finishedLastHour) in the last hour")
        print("  outbox      \(counts.outboxPending) events not yet delivered")
        print("library   \(configuration.libraryRoot)")
        if !failed.isEmpty {
            print("failed photos (spool/failed/; `darkroom retry` moves them back):")
            for report in failed.prefix(failures) {
                print("  \(report.failedPath ?? report.file): [\(report.category ?? "unrecorded")] \(report.reason)")
            }
            if failed.count > failures { print("  … and \(failed.count - failures) more (--failures N, or --json)") }
        }
        if !runs.isEmpty {
            print("imports (newest first; `darkroom import` the same folders again to continue one):")
            for run in runs { print("  " + Self.describe(run)) }
        }
    }

    /// One line for an import run: number, state and times, folders, counts.
    static func describe(_ run: ImportRunSummary, now: Date = Date()) -> String {
        let started = Date(timeIntervalSince1970: run.startedAt).formatted(.iso8601)
        let state: String
        switch run.outcome {
        case .running: state = "running since \(started) (\(run.worker))"
        case .abandoned: state = "abandoned, started \(started) (\(run.worker) ended without finishing)"
        case .finished, .interrupted:
            let seconds = (run.finishedAt ?? run.startedAt) - run.startedAt
            state = "\(run.outcome.rawValue) \(started), took \(Int(seconds.rounded())) s"
        }
        return "#\(run.id) \(state): \(run.roots.joined(separator: ", ")) — \(run.added) added, "
            + "\(run.duplicates) duplicates, \(run.failed) failed"
    }
}

struct StatusReport: Encodable {
    var spool: String
    var catalog: String
    var library: String
    var incoming: Int
    var processing: Int
    var failed: Int
    var counts: CatalogCounts
    /// The shared queue's photo jobs (a PostgreSQL catalog); absent otherwise.
    var queue: QueueDepth?
    /// The shared queue's processes, live and dead, with what they hold (PostgreSQL); absent otherwise.
    var holders: [HolderReport]?
    var failures: [FailureReport]
    var imports: [ImportRunSummary]
}

/// A process of the shared queue: who it is, whether its heartbeat is live, what it holds.
struct HolderReport: Encodable {
    var name: String
    var host: String
    var pid: Int32
    var alive: Bool
    var stopped: Bool
    var holding: Int
    var lastHeartbeatSecondsAgo: Double
}

/// Photo jobs of the shared queue: waiting (or held under a lapsed lease), and held.
struct QueueDepth: Encodable {
    var queued: Int
    var held: Int
}

struct Retry: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Move failed photos back into the spool for another try.",
        discussion: """
        Moves photos from spool/failed/ (with their sidecars) back into spool/incoming/ and removes \
        their reason files. Without a name, every failed photo; with names (as `darkroom status` \
        lists them), only those. Run it once the cause is fixed (disk space, a sidecar, a limit).
        """)

    @OptionGroup var options: ConfigOption

    @Argument(help: ArgumentHelp("Failed photos to retry, as listed by `darkroom status`.", valueName: "name"))
    var names: [String] = []

    func run() throws {
        let configuration = try options.load()
        let spool = try Spool(root: configuration.spoolRoot, settleSeconds: configuration.settleSeconds)
        let wanted = Set(names)
        let known = Set(spool.failures().compactMap(\.failedPath))
        for name in wanted where !known.contains(name) {
            throw CommandFailure("\(name) is not in \(spool.failed); `darkroom status` lists the failed photos", status: ExitStatus.dataError)
        }
        let moved = try spool.retryFailed { wanted.isEmpty || wanted.contains($0.failedPath ?? "") }
        print("moved \(moved) photo\(moved == 1 ? "" : "s") back to \(spool.incoming)")
    }
}
