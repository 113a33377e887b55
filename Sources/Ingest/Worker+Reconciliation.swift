import Catalog
import Failures
import Foundation
import Logging
import Storage

/// What mends the shared queue's leftovers, on every machine every half lease: photos under
/// `queued/` or in the staging area that a kill left between two steps, and done jobs a week old.
extension Worker {
    /// Removes done queue jobs a week after they finished, a batch per reconciliation: the
    /// pictures and their `jobs` history stay; only the queue's own record goes, which nothing
    /// needs once the photo's file has left `queued/`.
    func pruneDoneJobs(_ jobs: any PhotoJobQueue) {
        do {
            let removed = try jobs.pruneDonePhotos(finishedBefore: Date().addingTimeInterval(-Self.doneJobRetentionSeconds),
                                                   limit: Self.pruneBatch)
            if removed > 0 { logger.info("removed done jobs from the queue", metadata: ["count": "\(removed)"]) }
        } catch {
            logger.warning("cannot remove done jobs from the queue", metadata: ["reason": "\(error)"])
        }
    }

    /// How long a done job stays in the queue: a week.
    static let doneJobRetentionSeconds = 7 * 24 * 3600.0
    /// Done jobs removed by one machine's reconciliation at most (every half lease).
    static let pruneBatch = 5_000

    /// Mends what a process killed between two steps left under `queued/` (files quiet for a
    /// lease, so never one a live worker holds: its renewer keeps it fresh): a file with no job
    /// gets its job, unless its commit is in `jobs` (its queue job was removed since), when it
    /// goes; a file whose job is done is removed; one whose job failed goes to `failed/`.
    func reconcileQueued(_ jobs: any PhotoJobQueue) {
        reconcileStaged(jobs)
        // A sidecar or import ticket without its photo, quiet for two leases: its photo was
        // removed (or never placed) by a process killed in between.
        for companion in spool.removeOrphanCompanions(quietFor: 2 * configuration.leaseSeconds) {
            logger.info("removed a sidecar or import ticket left in queued/ without its photo", metadata: ["file": "\(companion)"])
        }
        let files = spool.queuedFiles(quietFor: configuration.leaseSeconds)
        guard !files.isEmpty else { return }
        let states: [String: QueuedPhotoState]
        do {
            states = try jobs.photoStates(files: files)
        } catch {
            logger.error("cannot read the job queue to reconcile queued/", metadata: ["reason": "\(error)"])
            return
        }
        for file in files {
            let name = QueuedPhoto.sourceName(ofFile: file)
            switch states[file] {
            case nil:
                let claim = spool.queuedClaim(file, sourceName: name, worker: identity.name, recoveries: 0)
                if let committed = try? catalog.finishedJob(claimPath: claim.path), committed.outcome != .failed {
                    // Committed, and its queue job removed since (`pruneDoneJobs`): only the file was left.
                    spool.consumeQueued(file)
                    logger.info("removed a committed photo left in queued/", metadata: ["file": "\(name)"])
                    continue
                }
                guard (try? spool.publishQueued(file)) != nil, (try? jobs.admitPhotos(files: [file], urgent: false)) != nil else { continue }
                logger.notice("queued a photo whose job was never recorded", metadata: ["file": "\(name)"])
            case .done?:
                spool.consumeQueued(file)
                logger.info("removed a committed photo left in queued/", metadata: ["file": "\(name)"])
            case .failed(let reason)?:
                if spool.hasImportTicket(file) {
                    // An imported photo: its source is still in its folder, its reason in the catalog.
                    spool.consumeQueued(file)
                    logger.notice("removed a failed imported photo left in queued/", metadata: ["file": "\(name)"])
                    continue
                }
                let claim = spool.queuedClaim(file, sourceName: name, worker: identity.name, recoveries: 0)
                let job = try? catalog.latestJob(claimPath: claim.path)
                _ = try? spool.failQueued(claim, reason: reason ?? job?.error ?? "failed", category: job?.failureCategory ?? FailureCategory.internal.rawValue,
                                          attempts: job?.attempts ?? 1)
                logger.notice("moved a failed photo left in queued/ to failed/", metadata: ["file": "\(name)"])
            case .waiting?:
                continue
            }
        }
    }

    /// Mends what a process killed between two steps left in the staging area (files quiet for a
    /// lease): a staged photo with no job gets its job; one whose job is done is removed; one
    /// whose job failed moves to the failed area with its reason.
    func reconcileStaged(_ jobs: any PhotoJobQueue) {
        guard let staging = spool.staging else { return }
        let files: [String]
        let states: [String: QueuedPhotoState]
        do {
            let sweep = try staging.sweep(now: Date(), quietFor: configuration.leaseSeconds)
            if sweep.removed > 0 {
                logger.info("removed staged uploads that will never be completed", metadata: ["count": "\(sweep.removed)"])
            }
            files = sweep.quietPhotos
            guard !files.isEmpty else { return }
            states = try jobs.photoStates(files: files)
        } catch {
            logger.warning("cannot reconcile the staging area", metadata: ["staging": "\(staging.location)", "reason": "\(error)"])
            return
        }
        for file in files {
            let name = QueuedPhoto.sourceName(ofFile: file)
            do {
                switch states[file] {
                case nil:
                    try jobs.admitPhotos(files: [file], urgent: false)
                    logger.notice("queued a staged photo whose job was never recorded", metadata: ["file": "\(name)"])
                case .done?:
                    try staging.discard(file, failure: nil)
                    logger.info("removed a committed photo left in the staging area", metadata: ["file": "\(name)"])
                case .failed(let reason)?:
                    try staging.discard(file, failure: Array((reason ?? "failed").utf8))
                    logger.notice("moved a failed photo left in the staging area to its failed area", metadata: ["file": "\(name)"])
                case .waiting?:
                    continue
                }
            } catch {
                logger.warning("cannot reconcile a staged photo", metadata: ["file": "\(name)", "reason": "\(error)"])
            }
        }
    }
}
