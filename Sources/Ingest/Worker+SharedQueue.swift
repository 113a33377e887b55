import Catalog
import Failures
import Foundation
import Logging
import Storage

/// `darkroom run` over a shared job queue (the catalog in PostgreSQL, workers on several
/// machines, the spool on storage every machine reaches):
/// - the scanning thread admits each ready photo of `incoming/`: one `rename` into its own
///   folder under `queued/` (only one process anywhere wins it), then its job row;
/// - the processing threads claim jobs from the queue, whichever machine admitted them, under
///   a lease the renewer moves on; a machine that dies lets its leases lapse, and another
///   takes the photos over;
/// - a photo's commit completes its job in the same transaction, only while the lease is the
///   committer's: a photo is a picture once, whoever else worked on it;
/// - a failure is recorded in the catalog first, then the photo moves to `failed/`;
/// - a reconciliation mends what a kill between two of these steps left: a queued file with
///   no job gets one; a file whose job is done is removed; one whose job failed goes to `failed/`.
extension Worker {
    func runShared(_ options: RunOptions, jobs: any PhotoJobQueue, started: Date) -> RunTally {
        let hand = sharedHand
        let availability = jobs.availability
        announce(jobs)
        let pool = WorkerPool()
        pool.start("worker", count: configuration.effectiveConcurrency, niceness: options.niceness, refused: { [logger] reason in
            logger.warning("cannot lower the workers' CPU priority", metadata: ["reason": "\(reason)"])
        }) { [self] _ in
            self.claimLoop(jobs, hand)
        }
        pool.startOne("lease-renewer") { [self] in self.renewSharedLeases(jobs, hand) }
        let watcher = options.once ? nil : SpoolWatcher(directory: spool.incoming, wake: stopSignal)
        let progress = options.progress ? ProgressBar(start: started) : nil
        var lastReconciliation = Date.distantPast
        var lastRetry = Date()
        // Every ready photo is admitted out of incoming/ when found, but a copy pouring files in
        // keeps each one there for the settle time: a watching daemon lists the folder for
        // arrivals at the pace `ListingPace` keeps, as the local queue's loop does.
        var pace = ListingPace()
        var scan = SpoolScan()

        while !stopSignal.isRaised {
            if availability.outage != nil {
                // Paused: photos stay where they are (incoming/ is durable) until the database is back.
                _ = availability.waitUntilReachable(timeout: 0.25)
                continue
            }
            let required = watcher == nil || Date().timeIntervalSince(pace.scanned) >= configuration.scanIntervalSeconds
            if pace.isDue(watching: watcher != nil, required: required, urgentNames: spool.urgentNames) {
                scan = pace.list(spool, watching: watcher != nil)
                admit(scan.ready, urgent: scan.urgent, jobs, hand)
            }
            if Date().timeIntervalSince(lastReconciliation) > configuration.leaseSeconds / 2 {
                reconcileQueued(jobs)
                pruneDoneJobs(jobs)
                recoverAbandonedClaims()
                lastReconciliation = Date()
            }
            // The queue's depth is asked for only where it is shown or decides the end: a
            // daemon wakes on every arrival.
            let depth = progress != nil || options.once ? try? jobs.photoQueueDepth() : nil
            progress?.draw(hand.snapshot, waiting: (depth?.claimable ?? 0) + scan.settling)
            if options.once, scan.ready.isEmpty, scan.settling == 0, hand.inHand.isEmpty, let depth, depth.claimable == 0 {
                // One last look: a photo may have arrived, or been admitted elsewhere, meanwhile.
                let again = spool.scan()
                if again.ready.isEmpty, again.settling == 0, hand.inHand.isEmpty, (try? jobs.photoQueueDepth().claimable) == 0 { break }
                continue
            }
            if Date().timeIntervalSince(lastRetry) > configuration.scanIntervalSeconds {
                for name in spool.retryChanged() {
                    logger.notice("trying again a failed photo that changed since it failed", metadata: ["file": "\(name)"])
                }
                lastRetry = Date()
            }
            var recheck = min(scan.recheckIn ?? .infinity, configuration.scanIntervalSeconds, progress == nil ? .infinity : 0.5)
            // A wake whose arrivals were left for later comes back when the listing may run again.
            if let resume = pace.resumeIn() { recheck = min(recheck, resume) }
            if let watcher {
                watcher.wait(timeout: recheck)
            } else {
                hand.waitForWork(timeout: min(0.25, recheck))
            }
        }
        if stopSignal.isRaised { logger.info("stopping: finishing the photos in hand") }
        stopSignal.raise()
        hand.wake()
        pool.join()
        progress?.finish()
        if availability.outage == nil { try? jobs.instanceStopped(identity.name) }
        return finished(hand.snapshot, started: started)
    }

    /// Records this process in the queue (its first heartbeat) and gives back at once the photos
    /// that earlier processes of this same machine and PID namespace held when they died (a
    /// restart after a kill): they need not wait out their leases. Processes elsewhere, even
    /// under the same host name, are judged by their heartbeats alone.
    private func announce(_ jobs: any PhotoJobQueue) {
        do {
            try jobs.heartbeat(instanceRecord)
            let dead = try jobs.instances(recent: configuration.leaseSeconds * 4).filter { instance in
                instance.stoppedAt == nil && instance.name != identity.name && instance.machine == WorkerIdentity.machineKey
                    && WorkerIdentity.isGone(instance.name)
            }
            guard !dead.isEmpty else { return }
            let released = try jobs.releaseClaims(ofInstances: dead.map(\.name))
            logger.log(level: released > 0 ? .notice : .info, "gave back the photos of this machine's processes that died", metadata: [
                "instances": "\(dead.map(\.name).joined(separator: ","))", "photos": "\(released)"])
        } catch {
            // The database is out at start: the heartbeats begin once it is back.
            logger.warning("cannot record this process in the job queue yet", metadata: ["reason": "\(error)"])
        }
    }

    /// This process as the queue's heartbeats record it.
    var instanceRecord: InstanceRecord {
        InstanceRecord(name: identity.name, host: identity.host, pid: identity.pid, machine: WorkerIdentity.machineKey,
                       startedAt: Date(), heartbeatAt: Date())
    }

    /// Admits photos found ready in `incoming/`: each into `queued/`, then their jobs, by the
    /// hundred in one statement (urgent ones, the uploads, first, in the urgent lane). A photo
    /// another process took first is passed over.
    func admit(_ names: [String], urgent: Set<String>, _ jobs: any PhotoJobQueue, _ hand: SharedQueueHand) {
        let ordered = names.filter { urgent.contains($0) } + names.filter { !urgent.contains($0) }
        var batch: [String] = []
        var batchIsUrgent = true
        func record() {
            guard !batch.isEmpty else { return }
            do {
                try jobs.admitPhotos(files: batch, urgent: batchIsUrgent)
                hand.wake()
            } catch {
                // The photos are in `queued/` without their jobs: the next reconciliation records them.
                logger.error("cannot record queued photos in the job queue", metadata: ["count": "\(batch.count)", "reason": "\(error)"])
            }
            batch.removeAll()
        }
        for name in ordered where !stopSignal.isRaised {
            // A writer that stalled past the settle time still holds its file open: it is waited for.
            if FileSystem.isOpenForWriting(spool.incoming + "/" + name) == true { continue }
            let isUrgent = urgent.contains(name)
            if isUrgent != batchIsUrgent || batch.count >= Self.admissionBatch {
                record()
                batchIsUrgent = isUrgent
            }
            let file: String
            do {
                guard let admitted = try spool.admit(name) else { continue }
                file = admitted
                spool.clearUrgent(name)
            } catch {
                // The photo stays in `incoming/` for the next scan.
                logger.error("cannot queue photo", metadata: ["file": "\(name)", "reason": "\(error)"])
                continue
            }
            do {
                // Without a shared directory, the photo is published for any machine before its job exists.
                try spool.publishQueued(file)
                batch.append(file)
            } catch {
                // Kept in this machine's queued/ without a job: the reconciliation publishes it and records its job.
                logger.warning("cannot stage a photo in the bucket yet", metadata: ["file": "\(name)", "reason": "\(error)"])
            }
        }
        record()
    }

    /// Photos admitted in one statement: a backlog's first jobs are claimable at once.
    static let admissionBatch = 100

    /// Takes jobs from the shared queue and processes them until the worker stops.
    private func claimLoop(_ jobs: any PhotoJobQueue, _ hand: SharedQueueHand) {
        let availability = jobs.availability
        var reported = false
        var outageEnded: Date?
        while !stopSignal.isRaised {
            if availability.outage != nil {
                // Paused with the database out: nothing is claimed until it is back (the probe
                // backs off with jitter; its return wakes every waiting thread at once).
                _ = availability.waitUntilReachable(timeout: 0.5)
                outageEnded = Date()
                continue
            }
            // Right after an outage every machine's leases may have lapsed together, and their
            // holders renew them as soon as they see the database back: a lease is then taken
            // over only once it has lapsed for longer than that takes, not counted as a death.
            let recovering = outageEnded.map { Date().timeIntervalSince($0) < configuration.leaseSeconds } ?? false
            let photo: QueuedPhoto?
            do {
                photo = try jobs.claimPhoto(owner: identity.name, leaseSeconds: configuration.leaseSeconds,
                                            lapsedFor: recovering ? Self.postOutageGraceSeconds : 0)
                reported = false
            } catch {
                if case .unavailable = error {
                    // The probe says so, once; the next turn of the loop waits for its return.
                    availability.suspect()
                } else if !reported {
                    logger.error("cannot claim from the job queue", metadata: ["reason": "\(error)"])
                    reported = true
                }
                hand.waitForWork(timeout: Double.random(in: 0.2...0.6))
                continue
            }
            guard let photo else {
                hand.waitForWork(timeout: Self.claimPollSeconds)
                continue
            }
            if let previous = photo.takenOverFrom {
                logger.notice("took over a photo whose holder stopped renewing its lease", metadata: [
                    "file": "\(photo.sourceName)", "from": "\(previous)", "attempt": "\(photo.attempts)"])
            }
            hand.holding(photo)
            hand.finished(photo, handleQueued(photo, jobs))
        }
    }

    /// How long after an outage a lapsed lease is left to its holder's renewal before it is
    /// taken over: more than the probes of two machines can differ in seeing the database back.
    static let postOutageGraceSeconds = 5.0

    /// How long a photo whose staged copy could not be fetched waits before its next claim.
    static let fetchRetrySeconds = 2.0

    /// The longest a photo given back for its storage's outage waits before its next claim.
    static let longestRelease = 60.0

    /// How often an idle thread asks the queue for a job admitted on another machine.
    static let claimPollSeconds = 0.25

    /// Moves the leases of the photos in hand on, and keeps their files looking alive to other
    /// machines' reconciliations.
    private func renewSharedLeases(_ jobs: any PhotoJobQueue, _ hand: SharedQueueHand) {
        let availability = jobs.availability
        var wasOut = false
        while !stopSignal.isRaised {
            // Every third of a lease, and at once when the database comes back from an outage,
            // so that the photos in hand are renewed before anyone takes them over.
            if wasOut {
                _ = availability.waitUntilReachable(timeout: 0.5)
            } else {
                stopSignal.sleep(configuration.leaseSeconds / 3)
            }
            wasOut = availability.outage != nil
            if wasOut || stopSignal.isRaised { continue }
            try? jobs.heartbeat(instanceRecord)
            for photo in hand.inHand {
                spool.renewQueued(photo.file)
                if (try? jobs.renew(photo, leaseSeconds: configuration.leaseSeconds)) == false {
                    logger.warning("lost the lease of a photo in hand; another worker has it", metadata: ["file": "\(photo.sourceName)"])
                }
            }
        }
    }

    /// Processes one claimed photo and completes its job with the outcome. A photo an import
    /// handed over is processed as that import would, from its ticket.
    private func handleQueued(_ photo: QueuedPhoto, _ jobs: any PhotoJobQueue) -> RunTally.Result {
        let started = Date()
        do {
            // Admitted on another machine, without a shared directory: fetched from the staging area.
            _ = try spool.fetchQueued(photo.file)
        } catch {
            // The bucket does not answer now: the job goes back to the queue for a later try,
            // by any machine (should that fail too, its lease lapses).
            logger.warning("cannot fetch a queued photo from the staging area; it is tried again",
                           metadata: ["file": "\(photo.sourceName)", "reason": "\(error)"])
            _ = try? jobs.release(photo, retryAfter: Self.fetchRetrySeconds, reason: "\(error)")
            return .lost
        }
        var claim = spool.queuedClaim(photo.file, sourceName: photo.sourceName, worker: identity.name, recoveries: photo.attempts - 1)
        let catalog = jobs.completing(photo)
        guard FileSystem.entryStatus(claim.path) != nil else {
            // Its bytes are gone from the shared storage (removed by hand, or a rename the file
            // system lost in a crash): nothing to process, and nothing to move.
            let reason = "its file is gone from the spool's queued/ (\(photo.file)); send the photo again"
            return failQueued(claim, photo, catalog, ProcessingFailure.permanent(reason, .storage), attempts: photo.attempts, started: started)
        }
        let ticket: ImportTicket?
        do {
            ticket = try spool.importTicket(of: photo.file).map { bytes throws(ProcessingFailure) in
                try ImportTicket.decode(bytes, file: photo.file)
            }
        } catch {
            return failQueued(claim, photo, catalog, ProcessingFailure(error), attempts: photo.attempts, started: started)
        }
        if let ticket { claim.sourceName = ticket.sourceName }
        let processor = PhotoProcessor(configuration: configuration, library: library, catalog: catalog, budget: processor.budget)
        let input = ticket?.input(path: claim.path, worker: identity.name)
        switch tries(claim, with: processor, failWhenStopped: false, started: started, input: input) {
        case .failed(let failure, let attempts) where failure.isTransient && failure.category == .storage:
            // The library's storage does not answer (a bucket down, a full disk): the photo goes
            // back to the queue for any machine to try again later, as often as it takes, never
            // to failed/ for an outage.
            let delay = min(Self.longestRelease, configuration.retryBaseSeconds * pow(2, Double(attempts)))
            do {
                _ = try jobs.release(photo, retryAfter: delay, reason: failure.reason)
                logger.warning("storage did not answer; the photo goes back to the queue", metadata: [
                    "file": "\(claim.sourceName)", "retry_in_s": "\(String(format: "%.1f", delay))", "reason": "\(failure.reason)"])
            } catch {
                logger.warning("cannot give a photo back to the queue; its lease lapses instead", metadata: [
                    "file": "\(claim.sourceName)", "reason": "\(error)"])
            }
            return .lost
        case .failed(let failure, let attempts):
            return failQueued(claim, photo, catalog, failure, attempts: attempts, started: started, ticket: ticket)
        case .stopped:
            // Stopping with a transient failure in hand: the job stays the queue's, and its lease
            // lapses for a worker that is not stopping.
            return .lost
        case .done(let outcome):
            spool.consumeQueued(photo.file)
            return logged(outcome, name: claim.sourceName, started: started)
        }
    }

    /// Records a failure in the catalog (which fails the job, while the lease is still this
    /// worker's), then moves the photo to `failed/` with its reason; an imported photo's queued
    /// copy is removed instead, its source still in the imported folder and the reason in the
    /// catalog, where its import reads it. A lost lease leaves the photo to the worker that took
    /// it over.
    private func failQueued(_ claim: Claim, _ photo: QueuedPhoto, _ catalog: any PictureCatalog, _ failure: ProcessingFailure,
                            attempts: Int, started: Date, ticket: ImportTicket? = nil) -> RunTally.Result {
        let reason = Self.failureReason(failure, attempts: attempts, sourceName: claim.sourceName)
        var job = Self.failedJob(claim, reason: reason, category: failure.category, attempts: attempts, started: started)
        if let ticket {
            job.claimPath = ticket.jobKey
            job.sidecarJson = ticket.sidecarJson
        }
        do {
            try catalog.recordFailure(job)
        } catch CatalogError.leaseLost {
            logger.notice("another worker took this photo over; leaving it to it", metadata: ["file": "\(photo.sourceName)"])
            return .lost
        } catch {
            // Not recorded: the job's lease lapses and the photo is tried again.
            logger.error("cannot record a failed photo", metadata: ["file": "\(photo.sourceName)", "reason": "\(error)"])
            return .lost
        }
        if ticket != nil {
            spool.consumeQueued(photo.file)
        } else if FileSystem.entryStatus(claim.path) != nil {
            do {
                try spool.failQueued(claim, reason: reason, category: failure.category.rawValue, attempts: attempts)
            } catch {
                // The job is failed: the next reconciliation moves the file.
                logger.error("cannot move failed photo", metadata: ["file": "\(photo.sourceName)", "reason": "\(error)"])
            }
        }
        logger.warning("photo", metadata: ["file": "\(claim.sourceName)", "outcome": "failed", "reason": "\(reason)",
                                           "category": "\(failure.category.rawValue)", "ms": "\(Self.milliseconds(since: started))"])
        onPhoto?(claim.sourceName, .failed, failure.category, Date().timeIntervalSince(started))
        return .failed
    }
}
