import Foundation
import Moments

/// The catalog as photo processing sees it: what the worker, the import and the upload hook
/// write for each photo, and the few reads they make. The SQLite `Catalog` is the first
/// implementation; another store (PostgreSQL) plugs in here without the worker changing.
public protocol PictureCatalog: Sendable {
    /// The picture with these bytes, if one exists (duplicates are found by content).
    func picture(sha256: String) throws(CatalogError) -> PictureRecord?
    /// Commits a picture, its variants, the job that brought it, its moment assignment and its
    /// outbox events in one transaction; a concurrent commit of the same bytes makes a duplicate
    /// (which completes the picture as `recordDuplicate` with facts does).
    func commitPicture(_ picture: PictureRecord, variants: [VariantRecord], job: JobRecord) throws(CatalogError) -> CommitOutcome
    /// Records a job whose photo was already a picture; with `facts` (what its metadata says),
    /// the picture takes the trusted time or location it lacks from them, in the same transaction.
    func recordDuplicate(_ job: JobRecord, of pictureId: Int64, facts: CaptureFacts?) throws(CatalogError)
    /// Records a job whose photo could not be processed.
    func recordFailure(_ job: JobRecord) throws(CatalogError)
    /// The finished job that held a claim, if its commit happened.
    func finishedJob(claimPath: String) throws(CatalogError) -> JobRecord?
    /// The newest job recorded under a claim path.
    func latestJob(claimPath: String) throws(CatalogError) -> JobRecord?
}

extension Catalog: PictureCatalog {}

/// The catalog as the commands that work on either store see it (SQLite's `Catalog`, and
/// `PostgresCatalog`): what photo processing writes, plus declarations, moment reads, counts,
/// the rebuild check and webhook delivery.
public protocol CatalogStore: PictureCatalog, WebhookStore {
    /// Declares a new place for the backend; an id already taken is refused.
    func declarePlace(id: Int64?, name: String?, center: Coordinate, radiusMetres: Double) throws(CatalogError) -> Place
    /// Declares or changes a moment for the backend; the pictures it matches join it.
    func declareMoment(_ moment: Moment, id: Int64?, as declaration: Declaration) throws(CatalogError) -> (Moment, [MomentEvent])
    /// Every moment (or those of one place), by start time then id.
    func moments(atPlace placeId: Int64?) throws(CatalogError) -> [Moment]
    /// How many pictures each moment holds.
    func pictureCounts() throws(CatalogError) -> [Int64: Int]
    /// Recomputes every moment and returns what changed; with `apply` false, only reports.
    func rebuildMoments(apply: Bool) throws(CatalogError) -> [MomentEvent]
    /// Counts of everything in the catalog, as of `now`.
    func counts(now: Date) throws(CatalogError) -> CatalogCounts
    /// Changes an existing place; the declared moments held there are re-evaluated.
    func updatePlace(id: Int64, name: String?, center: Coordinate, radiusMetres: Double) throws(CatalogError) -> Place
    /// Sets (or, with nil, hands back to the policy) a moment's cover as its creator.
    func setCover(momentId: Int64, pictureId: Int64?, by user: String) throws(CatalogError) -> [MomentEvent]
    /// Every place, by id.
    func places() throws(CatalogError) -> [Place]
    /// Names the automatic places and titles the automatic moments that have none.
    func nameAutomatic() throws(CatalogError) -> NamingOutcome
    /// Places whose centre lies within `radiusMetres` of `center`, nearest first.
    func places(around center: Coordinate, radiusMetres: Double) throws(CatalogError) -> [Place]
    /// A place by id.
    func place(id: Int64) throws(CatalogError) -> Place?
    /// A moment by id.
    func moment(id: Int64) throws(CatalogError) -> Moment?
    /// How many pictures one moment holds.
    func pictureCount(inMoment id: Int64) throws(CatalogError) -> Int
    /// One page of a moment's pictures in the stable order; with a nil id, of the pictures in no moment.
    func pictures(inMoment id: Int64?, after cursor: PictureCursor?, limit: Int) throws(CatalogError) -> PicturePageRecords
    /// A picture by id.
    func picture(id: Int64) throws(CatalogError) -> PictureRecord?
    /// The variants of one picture.
    func variants(ofPicture id: Int64) throws(CatalogError) -> [VariantRecord]
    /// The latest job of a photo that arrived under any of these spool names (an upload's status).
    func latestJob(sourceNames: [String]) throws(CatalogError) -> JobRecord?
    /// Throws when the catalog cannot be read (a readiness probe).
    func checkReachable() throws(CatalogError)
    /// Outcome and failure counts of every job, with a histogram of their durations.
    func jobFigures(durationBoundsMs: [Double]) throws(CatalogError) -> JobFigures
}

extension Catalog: CatalogStore {}

/// A photo job as a worker holds it from the shared queue: the file under the spool's
/// `queued/` it names, and the lease it is held under.
public struct QueuedPhoto: Sendable, Equatable {
    /// The job's id in the queue.
    public let jobId: Int64
    /// The photo's place under `queued/`: `TOKEN/NAME`, unique for ever.
    public let file: String
    /// 1 on the first claim; a job taken back from a worker that died counts again.
    public let attempts: Int
    /// Who holds the lease: renewals and the completing commit must come from it.
    public let owner: String
    /// Who held it before, when this claim took it over from a lease that lapsed (a machine
    /// that died, or stopped answering): nil for a photo that was waiting.
    public let takenOverFrom: String?

    public init(jobId: Int64, file: String, attempts: Int, owner: String, takenOverFrom: String? = nil) {
        self.jobId = jobId
        self.file = file
        self.attempts = attempts
        self.owner = owner
        self.takenOverFrom = takenOverFrom
    }

    /// The name the photo arrived under (its place under `queued/` less the token).
    public var sourceName: String { Self.sourceName(ofFile: file) }

    /// The name a photo arrived under, from its place under `queued/` (`TOKEN/NAME`).
    public static func sourceName(ofFile file: String) -> String {
        guard let slash = file.firstIndex(of: "/") else { return file }
        return String(file[file.index(after: slash)...])
    }
}

/// Where a queued photo's job stands, for the reconciliation of `queued/` with the queue.
public enum QueuedPhotoState: Sendable, Equatable {
    /// Waiting for a worker, or held by one.
    case waiting
    /// Committed (a picture or a duplicate): its file is only left over.
    case done
    /// Failed for good, with its reason: its file belongs in `failed/`.
    case failed(String?)
}

/// The shared job queue of a catalog that several machines use (PostgreSQL): a photo that
/// arrives (an upload, a drop-folder file) becomes a job row; workers on any machine claim jobs
/// under a lease they renew; the commit that records the photo completes its job in the same
/// transaction, and only while the lease is still the committer's, so no photo is done twice.
public protocol PhotoJobQueue: Sendable {
    /// Records photos placed under `queued/` as jobs (a file already recorded: nothing, the
    /// file is the key).
    func admitPhotos(files: [String], urgent: Bool) throws(CatalogError)
    /// Takes the next photo for `owner` (a lease lapsed more than `lapsedFor` seconds ago
    /// first, then urgent, then the oldest); nil when none is waiting.
    func claimPhoto(owner: String, leaseSeconds: Double, lapsedFor: Double) throws(CatalogError) -> QueuedPhoto?
    /// Moves a held photo's lease on; false when it is no longer this owner's.
    func renew(_ photo: QueuedPhoto, leaseSeconds: Double) throws(CatalogError) -> Bool
    /// The catalog whose commits (picture, duplicate, failure) also complete this photo's job,
    /// in the same transaction; they throw `CatalogError.leaseLost` when the lease is gone.
    func completing(_ photo: QueuedPhoto) -> any PictureCatalog
    /// The state of the jobs of these `queued/` files; a file with no job is absent.
    func photoStates(files: [String]) throws(CatalogError) -> [String: QueuedPhotoState]
    /// Photos a worker could claim now (waiting, or held under a lapsed lease), and photos held.
    func photoQueueDepth() throws(CatalogError) -> (claimable: Int, held: Int)
    /// Whether a photo that arrived under any of these names waits for a worker (false) or is
    /// held by one (true); nil when none of them has an unfinished job (an upload's status).
    func isPhotoHeld(sourceNames: [String]) throws(CatalogError) -> Bool?
    /// Removes up to `limit` done photo jobs that finished before `instant` (their pictures and
    /// the `jobs` history stay); returns how many went. Failed jobs stay.
    func pruneDonePhotos(finishedBefore instant: Date, limit: Int) throws(CatalogError) -> Int

    /// Whether the queue's database answers now, as this process last saw it (probed several
    /// times a second once asked for): what the workers pause on and readiness reports.
    var availability: any CatalogAvailability { get }
    /// Gives a held photo back to the queue after a transient failure that outlasted its tries
    /// (the library's bucket does not answer): claimable again after `retryAfter` seconds, its
    /// reason kept; false when it is no longer `photo`'s holder's.
    func release(_ photo: QueuedPhoto, retryAfter: Double, reason: String) throws(CatalogError) -> Bool
    /// Ends every wait on the database at once: the calls in flight fail as unreachable (a
    /// process stopping during an outage, which should not wait out their deadlines).
    func interruptWaits()

    /// Records that the process `instance` is alive (its heartbeat), with who it is for people
    /// (`host`, `pid`) and the machine it runs on (`machine`: boot and PID namespace).
    func heartbeat(_ instance: InstanceRecord) throws(CatalogError)
    /// Records that `instance` stopped cleanly: its heartbeat ends.
    func instanceStopped(_ name: String) throws(CatalogError)
    /// Gives back at once the photos held by `instances` (processes known to be dead: a
    /// restarted machine's earlier self), for any worker to claim; returns how many.
    func releaseClaims(ofInstances instances: [String]) throws(CatalogError) -> Int
    /// The processes known to the queue: those that hold photos, and those seen within `recent` seconds.
    func instances(recent: Double) throws(CatalogError) -> [InstanceRecord]
    /// Tells `ended` the `queued/` file (`TOKEN/NAME`) of each photo whose job ends (done, or
    /// failed for good) as it is committed, on whichever machine, until the feed is stopped.
    func followOutcomes(_ ended: @escaping @Sendable (String) -> Void) -> any OutcomeFeed
}

/// What `PhotoJobQueue.followOutcomes` returns.
public protocol OutcomeFeed: Sendable {
    /// Whether outcomes reach the feed now; while they do not (the database is away), a caller
    /// waiting for one looks for itself.
    var isLive: Bool { get }
    func stop()
}

/// A process of a shared queue, as its heartbeats record it.
public struct InstanceRecord: Sendable, Equatable, Codable {
    /// Its identity: `host.pid.instance` (`WorkerIdentity.name`), the owner of its leases.
    public var name: String
    public var host: String
    public var pid: Int32
    /// Its machine: boot id and PID namespace, so that a process can tell its own machine's dead.
    public var machine: String
    public var startedAt: Date
    public var heartbeatAt: Date
    /// When it stopped cleanly; nil while it runs or after it died.
    public var stoppedAt: Date?
    /// Photos it holds under a lease now.
    public var holding: Int

    public init(name: String, host: String, pid: Int32, machine: String, startedAt: Date, heartbeatAt: Date,
                stoppedAt: Date? = nil, holding: Int = 0) {
        self.name = name
        self.host = host
        self.pid = pid
        self.machine = machine
        self.startedAt = startedAt
        self.heartbeatAt = heartbeatAt
        self.stoppedAt = stoppedAt
        self.holding = holding
    }

    /// Alive when it has not stopped and its last heartbeat is younger than `leaseSeconds`.
    public func isAlive(leaseSeconds: Double, now: Date = Date()) -> Bool {
        stoppedAt == nil && now.timeIntervalSince(heartbeatAt) <= leaseSeconds
    }
}

/// Whether the database of a shared catalog answers now (see `PhotoJobQueue.availability`).
public protocol CatalogAvailability: Sendable {
    /// Nil while it answers; else since when it has not, and why.
    var outage: CatalogOutage? { get }
    /// Waits until it answers again, at most `timeout` seconds; true when it does.
    func waitUntilReachable(timeout: Double) -> Bool
    /// Tells it that a call just failed for want of the database, so that it looks again at once.
    func suspect()
}

/// An outage of a catalog's database in progress.
public struct CatalogOutage: Sendable, Equatable {
    public var since: Date
    public var reason: String

    public init(since: Date, reason: String) {
        self.since = since
        self.reason = reason
    }
}

/// Where the webhook dispatcher keeps its state: which outbox events each endpoint has taken
/// on, which are due, claimed, failing or delivered. The SQLite `Catalog` and `PostgresCatalog`
/// keep it with the same meaning (`webhook_deliveries`), so one dispatcher serves either store.
///
/// Each call is short and stands alone, so that delivery never holds the catalog while an
/// endpoint answers. Claims are exclusive: dispatchers in several processes, on several machines
/// when the catalog is shared, never claim the same delivery at once.
public protocol WebhookStore: Sendable {
    /// Whether `endpoint` has new outbox events or deliveries due by `instant` (a read: no lock).
    func webhookWorkIsDue(endpoint: String, by instant: Double) throws(CatalogError) -> Bool
    /// Takes on new outbox events for `endpoint` and claims up to `limit` deliveries due by
    /// `instant`, oldest first, until `leaseUntil`.
    func claimWebhookDeliveries(endpoint: String, dueBy instant: Double, leaseUntil: Double,
                                limit: Int) throws(CatalogError) -> [WebhookDeliveryRecord.Claim]
    /// Records a 2xx answer; marks the outbox row delivered once every one of `endpoints` has it.
    func recordWebhookDelivered(outboxId: Int64, endpoint: String, status: Int, at instant: Double,
                                endpoints: [String]) throws(CatalogError)
    /// Records a failed try, due again at `retryAt`.
    func recordWebhookFailure(outboxId: Int64, endpoint: String, status: Int?, reason: String,
                              retryAt: Double) throws(CatalogError)
    /// Gives back a claim without counting a try.
    func releaseWebhookClaim(outboxId: Int64, endpoint: String, at instant: Double) throws(CatalogError)
    /// Makes due the first waiting event of every moment of `endpoint` (run when a dispatcher starts).
    func promoteWaitingWebhookDeliveries(endpoint: String) throws(CatalogError)
    /// The delivery rows of one endpoint, in outbox order.
    func webhookDeliveries(endpoint: String) throws(CatalogError) -> [WebhookDeliveryRecord]
    /// Delivery totals over every endpoint, as of `now`.
    func webhookStatistics(now: Date) throws(CatalogError) -> WebhookStatistics
}

extension Catalog: WebhookStore {}
