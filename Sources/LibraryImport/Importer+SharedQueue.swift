import Catalog
import CatalogImports
import Failures
import Foundation
import Ingest
import Logging
import PhotoMetadata
import Storage

/// Where an import hands its photos when the catalog is in PostgreSQL: the spool (on storage
/// every machine reaches, or this machine's with a bucket's staging area), the catalog's shared
/// job queue, and the library its worker writes to when that is not the local directory (a bucket).
public struct ImportSharedQueue: Sendable {
    public let spool: Spool
    public let jobs: any PhotoJobQueue
    public let library: (any BlobStore)?

    public init(spool: Spool, jobs: any PhotoJobQueue, library: (any BlobStore)? = nil) {
        self.spool = spool
        self.jobs = jobs
        self.library = library
    }
}

/// An import over the shared queue: each photo is placed under the spool's `queued/` with its
/// ticket (its name, its job key, its library's sidecars) and becomes a job of the bulk lane,
/// which the workers of every machine claim, this process's own among them. The import waits
/// for its jobs' outcomes and writes its journal from them, then (`--move`) deletes the sources
/// committed. A photo's place under `queued/` follows from its job key, so an import run again
/// after a kill finds the photos it had handed over, and their jobs, instead of adding them twice.
extension Importer {
    /// Photos handed over and not yet finished, at most: what the spool holds for this import.
    static let handOverWindow = 128

    /// Walks and hands over, runs a worker on the queue meanwhile, and journals the outcomes.
    func processShared(_ shared: ImportSharedQueue, _ services: Services, walker: ImportWalker, links: [String: Bool],
                       _ ledger: ImportLedger, _ progress: ImportProgress, importId: Int64?) {
        let handed = HandedOver(window: Self.handOverWindow, stop: stopSignal)
        var workerLogger = logger
        if !options.verbose { workerLogger.logLevel = max(logger.logLevel, .notice) }
        // This machine's worker: it claims photos from the queue, this import's or any other's.
        let worker = Worker(configuration: configuration, spool: shared.spool, library: shared.library ?? services.library,
                            catalog: services.catalog, jobs: shared.jobs, logger: workerLogger)
        let working = WorkerPool()
        working.startOne("import-worker") { [options] in
            _ = worker.run(RunOptions(once: false, progress: false, niceness: options.niceness))
        }
        let feeding = WorkerPool()
        feeding.startOne("import-handing") { [self] in
            while let item = queue.next() { handOver(item, shared, handed, ledger, progress, importId: importId) }
        }
        let collecting = WorkerPool()
        collecting.startOne("import-outcomes") { [self] in
            while true {
                collect(shared, handed, ledger, progress, importId: importId)
                if stopSignal.isRaised || handed.isFinished { return }
                handed.waitForChange(timeout: Self.outcomePollSeconds)
            }
        }
        walker.walk { folder in
            !stopSignal.isRaised && feed(folder, ledger, linking: links[root(of: folder.path)] ?? false)
        }
        queue.close()
        feeding.join()
        handed.finishFeeding()
        collecting.join()
        // Stopping, or every photo's outcome is in: the worker finishes the photos in hand, and
        // their outcomes are journaled; the rest wait in the queue for any machine's workers
        // and for this import's next run.
        worker.stop()
        working.join()
        collect(shared, handed, ledger, progress, importId: importId)
        if !handed.isEmpty {
            logger.notice("photos left in the shared queue; any machine's workers process them, and the next run of this import journals them",
                          metadata: ["count": "\(handed.count)"])
        }
    }

    /// How often the import asks the queue how its photos are doing.
    static let outcomePollSeconds = 0.2

    /// Places one photo under `queued/` with its ticket and records its job (bulk lane), unless
    /// the catalog has its outcome already.
    private func handOver(_ item: ImportItem, _ shared: ImportSharedQueue, _ handed: HandedOver, _ ledger: ImportLedger,
                          _ progress: ImportProgress, importId: Int64?) {
        // With the database out, the import pauses here (the photos handed over wait in the
        // queue); it goes on within a probe of the database's return.
        let availability = shared.jobs.availability
        while availability.outage != nil && !stopSignal.isRaised { _ = availability.waitUntilReachable(timeout: 0.5) }
        if stopSignal.isRaised { return }
        let started = Date()
        if settledEarlier(item, ledger, importId: importId) { return }
        guard let sidecars = loadSidecars(item, started: started, ledger, progress, importId: importId) else { return }
        let ticket = ImportTicket(sourceName: item.sourceName, jobKey: item.jobKey, sidecar: sidecars.sidecar,
                                  sidecarJson: sidecars.json, notes: sidecars.notes, linkOriginal: item.linkOriginal)
        // A photo that failed before and is tried again takes a new place: its old job stays failed.
        let token = options.retryFailed ? Self.randomToken() : Self.queueToken(jobKey: item.jobKey)
        let file: String
        do {
            file = try shared.spool.placeImported(from: item.path, token: token, name: item.name, ticket: ticket.encoded(),
                                                  link: item.linkOriginal)
        } catch {
            // Another machine may have committed the photo (and removed its folder under
            // `queued/`) while this run placed it again: then it is imported, not failed.
            if settledEarlier(item, ledger, importId: importId) { return }
            return fail(item, error, attempts: 1, sidecars: sidecars, started: started, ledger, progress, importId: importId)
        }
        guard handed.add(file, HandedOver.Entry(item: item, sidecars: sidecars.used, started: started)) else { return }
        do {
            // Without a shared directory, staged in the bucket for any machine before its job exists.
            try shared.spool.publishQueued(file)
            try shared.jobs.admitPhotos(files: [file], urgent: false)
        } catch {
            // The photo is in `queued/` without its job: the outcome collector records it again.
            logger.warning("cannot record an imported photo in the job queue; trying again", metadata: [
                "file": "\(item.sourceName)", "reason": "\(error)"])
        }
        handed.changed()
    }

    /// Reads the queue's state of the photos handed over and settles those that ended.
    private func collect(_ shared: ImportSharedQueue, _ handed: HandedOver, _ ledger: ImportLedger, _ progress: ImportProgress,
                         importId: Int64?) {
        let files = handed.files
        // During an outage of the database there is nothing to ask; the probe has said so once.
        guard !files.isEmpty, shared.jobs.availability.outage == nil else { return }
        // At most the hand-over window's worth of files: one statement.
        let states: [String: QueuedPhotoState]
        do {
            states = try shared.jobs.photoStates(files: files)
        } catch {
            logger.warning("cannot read the job queue; asking again", metadata: ["reason": "\(error)"])
            return
        }
        var unrecorded: [String] = []
        for file in files {
            switch states[file] {
            case nil:
                unrecorded.append(file)
            case .waiting?:
                continue
            case .done?:
                guard let entry = handed.remove(file) else { continue }
                concluded(entry, ledger, progress, importId: importId)
            case .failed(let reason)?:
                guard let entry = handed.remove(file) else { continue }
                failedInQueue(entry, queueReason: reason, ledger, progress, importId: importId)
            }
        }
        let published = unrecorded.filter { (try? shared.spool.publishQueued($0)) != nil }
        if !published.isEmpty { try? shared.jobs.admitPhotos(files: published, urgent: false) }
    }

    /// A photo whose job is done: its commit (a picture, or a duplicate of one) into the journal.
    private func concluded(_ entry: HandedOver.Entry, _ ledger: ImportLedger, _ progress: ImportProgress, importId: Int64?) {
        guard let services else { return }
        let item = entry.item
        let job = try? services.catalog.latestJob(claimPath: item.jobKey)
        let outcome = job?.outcome ?? .added
        let linked = isLinked(item, job: job)
        record(item, outcome: outcome, job: job, sidecars: entry.sidecars, importId: importId)
        let deleted = deleteSourceIfMoving(item.path)
        if outcome == .duplicate {
            ledger.duplicate(sidecars: entry.sidecars, deleted: deleted)
        } else {
            ledger.added(sidecars: entry.sidecars, linked: linked, deleted: deleted)
        }
        if options.verbose {
            var fields: Logger.Metadata = ["file": "\(item.sourceName)", "outcome": "\(outcome.rawValue)", "worker": "\(job?.worker ?? "-")",
                                           "ms": "\(Int(Date().timeIntervalSince(entry.started) * 1000))"]
            fields["picture"] = job?.pictureId.map { "\($0)" }
            progress.aside { logger.info("photo", metadata: fields) }
        }
    }

    /// A photo whose job failed: the worker's reason (or the queue's, for a photo whose workers
    /// kept dying) into the journal; the source stays where it is.
    private func failedInQueue(_ entry: HandedOver.Entry, queueReason: String?, _ ledger: ImportLedger, _ progress: ImportProgress,
                               importId: Int64?) {
        guard let services else { return }
        let item = entry.item
        let job = try? services.catalog.latestJob(claimPath: item.jobKey)
        let reason = job?.error ?? queueReason ?? "its job in the shared queue failed"
        let category = job?.failureCategory.flatMap(FailureCategory.init(rawValue:)) ?? .crashed
        record(item, outcome: .failed, job: job, sidecars: entry.sidecars, importId: importId, error: reason)
        ledger.failed(item.sourceName, reason: reason, category: category)
        // This process's worker logged its own failures already.
        guard job?.worker != identity.name else { return }
        progress.aside {
            logger.warning("photo", metadata: ["file": "\(item.sourceName)", "outcome": "failed", "reason": "\(reason)",
                                               "ms": "\(Int(Date().timeIntervalSince(entry.started) * 1000))"])
        }
    }

    /// The folder under `queued/` of one version of one file: the same on every run.
    static func queueToken(jobKey: String) -> String {
        "import-" + PhotoMetadata.sha256Hex(Array(jobKey.utf8)).prefix(24)
    }

    static func randomToken() -> String {
        "import-" + Spool.randomToken(length: 24)
    }
}

/// The photos an import handed to the shared queue and has not yet seen end, by their place
/// under `queued/`; the hand-over waits while the window is full.
final class HandedOver: @unchecked Sendable {
    // @unchecked: every mutable property is touched only while `condition` is locked.
    struct Entry: Sendable {
        let item: ImportItem
        /// The sidecar files used, for the journal.
        let sidecars: [String]
        let started: Date
    }

    private let condition = NSCondition()
    private let window: Int
    private let stop: StopSignal
    private var entries: [String: Entry] = [:]
    private var feeding = true
    private let wakeup = Wakeup()

    init(window: Int, stop: StopSignal) {
        self.window = max(1, window)
        self.stop = stop
    }

    /// Adds a photo, waiting while the window is full; false when the import is stopping (the
    /// photo, in `queued/` already, is left to any machine's workers and to the next run).
    func add(_ file: String, _ entry: Entry) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while entries.count >= window && feeding && !stop.isRaised { _ = condition.wait(until: Date(timeIntervalSinceNow: 0.2)) }
        guard feeding, !stop.isRaised else { return false }
        entries[file] = entry
        return true
    }

    func remove(_ file: String) -> Entry? {
        condition.lock()
        defer { condition.unlock() }
        let entry = entries.removeValue(forKey: file)
        condition.broadcast()
        return entry
    }

    /// No more photos come.
    func finishFeeding() {
        condition.lock()
        feeding = false
        condition.broadcast()
        condition.unlock()
    }

    /// Wakes the collector.
    func changed() { wakeup.wake() }

    /// Waits until a photo is handed over or `timeout` passes.
    func waitForChange(timeout: Double) { wakeup.wait(timeout: timeout) }

    var files: [String] {
        condition.lock()
        defer { condition.unlock() }
        return entries.keys.sorted()
    }

    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return entries.count
    }

    var isEmpty: Bool { count == 0 }

    /// Every photo handed over has ended, and no more come.
    var isFinished: Bool {
        condition.lock()
        defer { condition.unlock() }
        return !feeding && entries.isEmpty
    }
}
