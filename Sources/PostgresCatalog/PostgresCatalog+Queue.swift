import Catalog
import Foundation
import PostgresNIO
import PostgresQueue
import PostgresStore

/// The shared queue of photo jobs, in the catalog's own database (`queue_jobs`, the queue's
/// table and statements): workers on every machine claim from it through the catalog's pool,
/// and a photo's commit completes its job in the same transaction.
extension PostgresCatalog: PhotoJobQueue {
    /// The job kind of a photo under `queued/`.
    static let photoKind = "photo"

    /// From the notices the queue's trigger sends as a photo's job ends (`LISTEN`, on a
    /// connection of its own that comes back after an outage).
    public func followOutcomes(_ ended: @escaping @Sendable (String) -> Void) -> any OutcomeFeed {
        PostgresOutcomeFeed(notifications: PostgresNotifications(location: location, channel: JobQueue.photoOutcomesChannel,
                                                                 deadlines: pool.deadlines, logger: pool.logger, received: ended))
    }

    /// In one statement, whatever their number (a scan that finds a thousand files).
    public func admitPhotos(files: [String], urgent: Bool) throws(CatalogError) {
        guard !files.isEmpty else { return }
        let lane: Int16 = urgent ? 0 : 1
        _ = try leased { session in
            try session.execute("""
                INSERT INTO queue_jobs (kind, payload, lane) SELECT \(Self.photoKind), file, \(lane) FROM unnest(\(files)) AS file
                ON CONFLICT (payload) WHERE kind = 'photo' DO NOTHING
                """)
        }
    }

    public func claimPhoto(owner: String, leaseSeconds: Double, lapsedFor: Double) throws(CatalogError) -> QueuedPhoto? {
        var binds = PostgresBindings(capacity: 3)
        binds.append(owner)
        binds.append(leaseSeconds)
        binds.append(lapsedFor)
        let query = PostgresQuery(unsafeSQL: QueueSQL.claim, binds: binds)
        return try leased { session in
            try session.rows(query).first.map { row in
                let (id, _, payload, attempts, previous) = try row.decode((Int64, String, String, Int32, String?).self)
                return QueuedPhoto(jobId: id, file: payload, attempts: Int(attempts), owner: owner, takenOverFrom: previous)
            }
        }
    }

    public func renew(_ photo: QueuedPhoto, leaseSeconds: Double) throws(CatalogError) -> Bool {
        var binds = PostgresBindings(capacity: 3)
        binds.append(leaseSeconds)
        binds.append(photo.jobId)
        binds.append(photo.owner)
        let query = PostgresQuery(unsafeSQL: QueueSQL.renew, binds: binds)
        return try leased { session in try !session.rows(query).isEmpty }
    }

    /// The claim it was held under is not counted: a release is no death of its worker.
    public func release(_ photo: QueuedPhoto, retryAfter: Double, reason: String) throws(CatalogError) -> Bool {
        try leased { session in
            try session.value("""
                UPDATE queue_jobs SET state = 'queued', last_error = \(reason), lease_owner = NULL, lease_expires_at = NULL,
                    run_after = now() + make_interval(secs => \(retryAfter)), attempts = greatest(attempts - 1, 0)
                WHERE id = \(photo.jobId) AND state = 'running' AND lease_owner = \(photo.owner) RETURNING id
                """, as: Int64.self) != nil
        }
    }

    public func completing(_ photo: QueuedPhoto) -> any PictureCatalog {
        LeasedPostgresCatalog(catalog: self, photo: photo)
    }

    public func photoStates(files: [String]) throws(CatalogError) -> [String: QueuedPhotoState] {
        guard !files.isEmpty else { return [:] }
        return try readOne { session in
            var states: [String: QueuedPhotoState] = [:]
            for row in try session.rows("""
                SELECT payload, state, last_error FROM queue_jobs WHERE kind = 'photo' AND payload = ANY(\(files))
                """) {
                let (file, state, reason) = try row.decode((String, String, String?).self)
                switch state {
                case "done": states[file] = .done
                case "failed": states[file] = .failed(reason)
                default: states[file] = .waiting
                }
            }
            return states
        }
    }

    public func photoQueueDepth() throws(CatalogError) -> (claimable: Int, held: Int) {
        try readOne { session in
            let row = try session.rows("""
                SELECT count(*) FILTER (WHERE (state = 'queued' AND run_after <= now()) OR (state = 'running' AND lease_expires_at < now())),
                       count(*) FILTER (WHERE state = 'running' AND lease_expires_at >= now())
                FROM queue_jobs WHERE kind = 'photo' AND state IN ('queued', 'running')
                """).first
            guard let (claimable, held) = try row?.decode((Int64, Int64).self) else { return (0, 0) }
            return (Int(claimable), Int(held))
        }
    }

    public func isPhotoHeld(sourceNames: [String]) throws(CatalogError) -> Bool? {
        // The place under queued/ is TOKEN/NAME (see `QueuedPhoto.sourceName`).
        try readOne { session in
            try session.values("""
                SELECT state = 'running' FROM queue_jobs
                WHERE kind = 'photo' AND state IN ('queued', 'running') AND substr(payload, strpos(payload, '/') + 1) = ANY(\(sourceNames))
                ORDER BY id DESC LIMIT 1
                """, as: Bool.self).first
        }
    }

    public func pruneDonePhotos(finishedBefore instant: Date, limit: Int) throws(CatalogError) -> Int {
        // Machines pruning at once skip each other's rows instead of waiting for them.
        try leased { session in
            Int(try session.value("""
                WITH gone AS (
                    DELETE FROM queue_jobs WHERE id IN (
                        SELECT id FROM queue_jobs WHERE state = 'done' AND finished_at < \(instant) AND kind = 'photo'
                        ORDER BY finished_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                    RETURNING 1)
                SELECT count(*) FROM gone
                """, as: Int64.self) ?? 0)
        }
    }

    /// Completes `photo`'s job in the caller's transaction (done, or failed with `failure`);
    /// throws `leaseLost` when the job is no longer the photo's holder's, which rolls back
    /// everything the transaction did. Nothing when there is no queue job.
    static func complete(_ photo: QueuedPhoto?, _ session: PostgresSession, failure: String? = nil) throws {
        guard let photo else { return }
        let changed: Int64?
        if let failure {
            changed = try session.value("""
                UPDATE queue_jobs SET state = 'failed', last_error = \(failure), finished_at = now(),
                    lease_owner = NULL, lease_expires_at = NULL
                WHERE id = \(photo.jobId) AND state = 'running' AND lease_owner = \(photo.owner) RETURNING id
                """, as: Int64.self)
        } else {
            var binds = PostgresBindings(capacity: 2)
            binds.append(photo.jobId)
            binds.append(photo.owner)
            changed = try session.value(PostgresQuery(unsafeSQL: QueueSQL.complete, binds: binds), as: Int64.self)
        }
        guard changed != nil else {
            throw CatalogError.leaseLost("the lease on \(photo.sourceName) lapsed and another worker took it over; nothing was committed here")
        }
    }
}

/// The catalog as one leased photo's processing sees it: its commits complete the photo's
/// queue job in the same transaction, or fail with `leaseLost` and commit nothing.
struct LeasedPostgresCatalog: PictureCatalog {
    let catalog: PostgresCatalog
    let photo: QueuedPhoto

    func picture(sha256: String) throws(CatalogError) -> PictureRecord? { try catalog.picture(sha256: sha256) }

    func commitPicture(_ picture: PictureRecord, variants: [VariantRecord], job: JobRecord) throws(CatalogError) -> CommitOutcome {
        try catalog.commitPicture(picture, variants: variants, job: job, completing: photo)
    }

    func recordDuplicate(_ job: JobRecord, of pictureId: Int64, facts: CaptureFacts?) throws(CatalogError) {
        try catalog.recordDuplicate(job, of: pictureId, facts: facts, completing: photo)
    }

    func recordFailure(_ job: JobRecord) throws(CatalogError) {
        try catalog.recordFailure(job, completing: photo)
    }

    func finishedJob(claimPath: String) throws(CatalogError) -> JobRecord? { try catalog.finishedJob(claimPath: claimPath) }

    func latestJob(claimPath: String) throws(CatalogError) -> JobRecord? { try catalog.latestJob(claimPath: claimPath) }
}

/// The outcomes of photo jobs, as PostgreSQL notifies them.
struct PostgresOutcomeFeed: OutcomeFeed {
    let notifications: PostgresNotifications

    var isLive: Bool { notifications.isListening }

    func stop() { notifications.stop() }
}
