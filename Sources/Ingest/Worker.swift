import Catalog
import CRuntime
import Failures
import Foundation
import Logging
import Settings
import Storage
import Terminal

/// How `darkroom run` runs.
public struct RunOptions: Sendable {
    /// Drain `incoming/` and exit (batch drop folders), rather than watch it.
    public var once: Bool
    /// Draw a progress bar on a terminal.
    public var progress: Bool
    /// The `nice` step by which the processing threads lower their own CPU priority (0: none),
    /// so that the rest of the process (an HTTP server) runs first.
    public var niceness: Int

    public init(once: Bool, progress: Bool, niceness: Int = 0) {
        self.once = once
        self.progress = progress
        self.niceness = niceness
    }
}

/// The spool worker: claims photos from `incoming/`, processes them on a pool of
/// threads bounded by cores and a pixel budget, commits each to the catalog, and removes it from
/// the spool, or moves it to `failed/` with its reason.
public final class Worker: Sendable {
    public let configuration: Configuration
    public let spool: Spool
    public let library: any BlobStore
    public let catalog: any PictureCatalog
    public let identity: WorkerIdentity
    public let processor: PhotoProcessor
    public let logger: Logger
    public let stopSignal = StopSignal()
    /// The photos waiting for this worker's threads, urgent ones first.
    let queue = WorkQueue()
    /// The shared job queue of a catalog several machines use (PostgreSQL); nil: the spool's
    /// own claims (one machine, or a spool on a shared mount).
    public let jobs: (any PhotoJobQueue)?
    /// Told of every photo this process finishes (its source name, outcome, the category of its
    /// failure, and the seconds from claim to the end): what `serve` counts in its metrics.
    let onPhoto: (@Sendable (String, JobRecord.Outcome, FailureCategory?, Double) -> Void)?
    /// The photos this worker holds from the shared queue.
    let sharedHand = SharedQueueHand()

    /// Opens the spool, library and catalog of `configuration` (creating them when missing).
    public convenience init(configuration: Configuration, logger: Logger) throws {
        self.init(configuration: configuration,
                  spool: try Spool(root: configuration.spoolRoot, settleSeconds: configuration.settleSeconds),
                  library: try Library(root: configuration.libraryRoot, backupRoot: configuration.backupDir),
                  catalog: try Catalog(path: configuration.catalogPath, momentRules: configuration.moments),
                  logger: logger)
    }

    /// A worker over stores already open: any blob store and any catalog that photo
    /// processing can commit to.
    /// With `jobs`, photos go through that shared queue: each found in `incoming/` becomes a job,
    /// and the threads claim jobs that any machine's process admitted.
    public init(configuration: Configuration, spool: Spool, library: any BlobStore, catalog: any PictureCatalog,
                jobs: (any PhotoJobQueue)? = nil, logger: Logger,
                onPhoto: (@Sendable (String, JobRecord.Outcome, FailureCategory?, Double) -> Void)? = nil) {
        self.jobs = jobs
        self.onPhoto = onPhoto
        self.configuration = configuration
        self.logger = logger
        self.spool = spool
        self.library = library
        self.catalog = catalog
        identity = .current
        processor = PhotoProcessor(configuration: configuration, library: library, catalog: catalog,
                                   budget: PixelBudget(limit: configuration.pixelBudget))
    }

    /// Hands a photo just placed in `incoming/` (an upload) straight to this process's threads,
    /// ahead of the backlog, without waiting for a scan to find it. The spool file stays the
    /// durable record: should this process stop first, a later scan finds it.
    public func handOff(_ sourceName: String) {
        guard jobs == nil else {
            // Admitted by the caller already: the threads waiting for a job look again now.
            sharedHand.wake()
            return
        }
        queue.offer([sourceName], urgent: [sourceName])
    }

    /// Asks a running `run` to stop: photos in hand finish, nothing new is taken.
    public func stop() {
        stopSignal.raise()
        // During an outage of the database, what waits on it (a commit, a claim, a renewal)
        // fails now instead of at its deadline: the photos in hand stay the queue's either way.
        if let jobs, jobs.availability.outage != nil { jobs.interruptWaits() }
    }

    /// Runs until stopped (or, with `once`, until `incoming/` is drained). Returns the tally.
    public func run(_ options: RunOptions) -> RunTally {
        let started = Date()
        sweepAndRecover()
        if let jobs { return runShared(options, jobs: jobs, started: started) }

        let pool = WorkerPool()
        pool.start("worker", count: configuration.effectiveConcurrency, niceness: options.niceness, refused: { [logger] reason in
            logger.warning("cannot lower the workers' CPU priority", metadata: ["reason": "\(reason)"])
        }) { [self] _ in
            self.workLoop(queue)
        }
        pool.startOne("lease-renewer") { [self] in self.renewLeases(queue) }
        let watcher = options.once ? nil : SpoolWatcher(directory: spool.incoming, wake: stopSignal)
        var lastRecovery = Date()
        var lastRetry = Date()
        let progress = options.progress ? ProgressBar(start: started) : nil

        var scan = SpoolScan()
        // A run --once wakes after every photo; listing incoming/ then costs a stat per waiting
        // photo, which through a drop folder of thousands made the run quadratic (at 3,000
        // photos the listing took a third of its CPU). While the queue still holds more than
        // the workers take before the next look, the last listing stands; the folder is listed
        // again when the queue runs low or the scan interval has passed, and always before the
        // run decides it is done. A watching daemon also lists for arrivals, at the pace
        // `ListingPace` keeps.
        let lowWater = max(16, 4 * configuration.effectiveConcurrency)
        var pace = ListingPace()
        while !stopSignal.isRaised {
            let required = queue.waiting < lowWater || Date().timeIntervalSince(pace.scanned) >= configuration.scanIntervalSeconds
            if pace.isDue(watching: watcher != nil, required: required, urgentNames: spool.urgentNames) {
                scan = pace.list(spool, watching: watcher != nil)
                queue.offer(scan.ready, urgent: scan.urgent)
            }
            progress?.draw(queue.tally, waiting: queue.waiting + scan.settling)
            if options.once, scan.ready.isEmpty, scan.settling == 0, queue.isIdle {
                // One last look: a photo may have arrived while the last one was processed.
                if spool.scan().ready.isEmpty && spool.scan().settling == 0 { break }
                continue
            }
            // A photo still being written is looked at again at its own settle deadline, not at
            // the next periodic scan; the watcher wakes the loop at once when one arrives.
            // A watching daemon sleeps until inotify reports an arrival even while it works: the
            // queue already holds everything found, and a backlog of thousands is not listed
            // again every quarter of a second (a bar on a terminal is redrawn twice a second).
            var recheck = min(scan.recheckIn ?? .infinity, configuration.scanIntervalSeconds, progress == nil ? .infinity : 0.5)
            // A wake whose arrivals were left for later comes back when the listing may run again.
            if let resume = pace.resumeIn() { recheck = min(recheck, resume) }
            if let watcher {
                watcher.wait(timeout: recheck)
            } else {
                queue.waitForProgress(timeout: min(0.25, recheck))
            }
            if Date().timeIntervalSince(lastRecovery) > configuration.leaseSeconds / 2 {
                recoverAbandonedClaims()
                lastRecovery = Date()
            }
            if Date().timeIntervalSince(lastRetry) > configuration.scanIntervalSeconds {
                for name in spool.retryChanged() {
                    logger.notice("trying again a failed photo that changed since it failed", metadata: ["file": "\(name)"])
                }
                lastRetry = Date()
            }
        }
        if stopSignal.isRaised { logger.info("stopping: finishing the photos in hand") }
        queue.stop()
        queue.drainInHand()
        stopSignal.raise()
        pool.join()
        progress?.finish()
        return finished(queue.tally, started: started)
    }

    /// Removes what killed runs left and takes back the claims of stopped workers.
    private func sweepAndRecover() {
        let swept = library.sweepTemporaries(olderThan: configuration.photoTimeoutSeconds, now: Date())
            + FileSystem.sweepTemporaries(under: spool.root, olderThan: configuration.photoTimeoutSeconds)
        if swept > 0 { logger.info("swept temporary files left by a killed run", metadata: ["count": "\(swept)"]) }
        recoverAbandonedClaims()
    }

    /// Ends a run: removes the process's claim folder if it is empty, logs the tally and returns it.
    func finished(_ tally: RunTally, started: Date) -> RunTally {
        spool.releaseWorkerFolder(identity.name)
        let seconds = Date().timeIntervalSince(started)
        logger.info("run finished", metadata: [
            "added": "\(tally.added)", "duplicates": "\(tally.duplicates)", "failed": "\(tally.failed)",
            "seconds": "\(String(format: "%.1f", seconds))",
            "photos_per_second": "\(String(format: "%.2f", seconds > 0 ? Double(tally.done) / seconds : 0))",
        ])
        return tally
    }

    func recoverAbandonedClaims() {
        let recovered = spool.recover(leaseSeconds: configuration.leaseSeconds, except: identity) { path in
            (try? catalog.finishedJob(claimPath: path)) != nil
        }
        for item in recovered {
            switch item {
            case .alreadyDone(let name): logger.info("recovered a committed claim", metadata: ["file": "\(name)"])
            case .requeued(let name): logger.notice("took back the claim of a stopped worker", metadata: ["file": "\(name)"])
            }
        }
        // A server killed while it published an upload leaves the upload's priority mark with
        // no photo: removed once it is older than a lease.
        for name in spool.removeOrphanPriorityMarkers(olderThan: configuration.leaseSeconds) {
            logger.info("removed the priority mark of an upload that never arrived", metadata: ["file": "\(name)"])
        }
    }

    private func workLoop(_ queue: WorkQueue) {
        while let name = queue.next() {
            queue.finished(name, handle(name, queue))
        }
    }

    private func renewLeases(_ queue: WorkQueue) {
        while !stopSignal.isRaised {
            stopSignal.sleep(configuration.leaseSeconds / 3)
            for claim in queue.claimsInHand() { spool.renew(claim) }
        }
    }

    /// Claims and processes one photo, retrying transient failures with exponential backoff.
    private func handle(_ name: String, _ queue: WorkQueue) -> RunTally.Result {
        // A writer that stalled past the settle time still holds its file open: it is waited for
        // (a later scan offers the photo again), never taken half written.
        if FileSystem.isOpenForWriting(spool.incoming + "/" + name) == true { return .stillWriting }
        let claim: Claim
        do {
            guard let claimed = try spool.claim(name, worker: identity.name) else { return .lost }
            claim = claimed
        } catch {
            logger.error("cannot claim photo", metadata: ["file": "\(name)", "reason": "\(error)"])
            return .lost
        }
        queue.holding(claim)
        let started = Date()
        switch tries(claim, with: processor, failWhenStopped: true, started: started) {
        case .failed(let failure, let attempts), .stopped(let failure, let attempts):
            return fail(claim, failure, attempts: attempts, started: started)
        case .done(let outcome):
            spool.complete(claim)
            return logged(outcome, name: name, started: started)
        }
    }

    /// What every claimed photo goes through, whichever queue it came from: an entry that is
    /// not a photo and a photo that stopped its workers too often are refused (checked on the
    /// claimed entry itself: a link is never followed, a FIFO never opened); any other is
    /// processed, transient failures tried again with backoff.
    /// `input`: the photo as the processor takes it, when it is not the claim's own (an
    /// imported photo's, from its ticket).
    func tries(_ claim: Claim, with processor: PhotoProcessor, failWhenStopped: Bool, started: Date,
               input: PhotoInput? = nil) -> TriesOutcome {
        if let refusal = EntryKind(at: claim.path).refusal {
            return .failed(ProcessingFailure.permanent(refusal, .badInput), attempts: 1)
        }
        if claim.recoveries > configuration.maxRecoveries {
            let reason = "crashed the worker: a worker died while processing this photo \(claim.recoveries) times "
                + "(worker.max_recoveries is \(configuration.maxRecoveries)); check the file, then run `darkroom retry` to try it again"
            return .failed(ProcessingFailure.permanent(reason, .crashed), attempts: claim.recoveries)
        }
        return processor.withRetries(started: started, stop: stopSignal, failWhenStopped: failWhenStopped,
                                     availability: jobs?.availability, retrying: { [logger] failure, attempt, delay in
            logger.warning("retrying after a transient failure", metadata: [
                "file": "\(claim.sourceName)", "attempt": "\(attempt)", "delay_s": "\(delay)", "reason": "\(failure.reason)"])
        }) { attempt, deadline in
            if let input { return try processor.process(input, attempt: attempt, deadline: deadline, startedAt: started) }
            return try processor.process(claim, attempt: attempt, deadline: deadline, startedAt: started)
        }
    }

    /// Logs what became of a photo; returns it as a tally's result.
    func logged(_ outcome: PhotoOutcome, name: String, started: Date) -> RunTally.Result {
        var fields: Logger.Metadata = ["file": "\(name)", "outcome": "\(outcome.label)", "ms": "\(Self.milliseconds(since: started))"]
        switch outcome {
        case .added(let picture, let moment):
            fields["picture"] = "\(picture)"
            fields["moment"] = "\(moment.map(String.init) ?? "-")"
            logger.info("photo", metadata: fields)
            onPhoto?(name, .added, nil, Date().timeIntervalSince(started))
            return .added
        case .duplicate(let picture):
            fields["duplicate_of"] = "\(picture)"
            logger.info("photo", metadata: fields)
            onPhoto?(name, .duplicate, nil, Date().timeIntervalSince(started))
            return .duplicate
        }
    }

    private func fail(_ claim: Claim, _ failure: ProcessingFailure, attempts: Int, started: Date) -> RunTally.Result {
        // A transient cause (a full disk, a busy catalog) outlasted its tries: the photo waits in
        // failed/ until someone moves it back, and the reason says so rather than promise a retry.
        let reason = Self.failureReason(failure, attempts: attempts, sourceName: claim.sourceName)
        do {
            try spool.fail(claim, reason: reason, category: failure.category.rawValue, attempts: attempts)
        } catch {
            // The photo stays claimed in processing/ and is taken back by the next recovery.
            logger.error("cannot move failed photo", metadata: ["file": "\(claim.sourceName)", "reason": "\(error)"])
            return .failed
        }
        try? catalog.recordFailure(Self.failedJob(claim, reason: reason, category: failure.category, attempts: attempts, started: started))
        logger.warning("photo", metadata: ["file": "\(claim.sourceName)", "outcome": "failed", "reason": "\(reason)",
                                           "category": "\(failure.category.rawValue)", "ms": "\(Self.milliseconds(since: started))"])
        onPhoto?(claim.sourceName, .failed, failure.category, Date().timeIntervalSince(started))
        return .failed
    }

    /// The reason recorded for a photo that failed: a transient cause (a full disk, a busy
    /// catalog) that outlasted its tries says so rather than promise a retry.
    static func failureReason(_ failure: ProcessingFailure, attempts: Int, sourceName: String) -> String {
        failure.isTransient
            ? failure.reason + "; gave up after \(attempts) tries: once that is fixed, run `darkroom retry \(sourceName)`"
            : failure.reason
    }

    /// The job row of a photo that failed.
    static func failedJob(_ claim: Claim, reason: String, category: FailureCategory, attempts: Int, started: Date) -> JobRecord {
        JobRecord(sourceName: claim.sourceName, claimPath: claim.path, sha256: nil, outcome: .failed,
                  pictureId: nil, attempts: attempts, error: reason, sidecarJson: nil,
                  worker: claim.worker, startedAt: started.timeIntervalSince1970, finishedAt: Date().timeIntervalSince1970,
                  failureCategory: category)
    }

    static func milliseconds(since start: Date) -> Int {
        Int(Date().timeIntervalSince(start) * 1000)
    }
}
