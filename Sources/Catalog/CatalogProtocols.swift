import Foundation
import Moments

/// The catalog as photo processing sees it: what the worker, the import and the upload hook
/// write for each photo, and the few reads they make. The SQLite `Catalog` is the first
/// implementation; another store (PostgreSQL) plugs in here without the worker changing.
public protocol PictureCatalog: Sendable {
    /// The picture with these bytes, if one exists (duplicates are found by content).
    func picture(sha256: String) throws(CatalogError) -> PictureRecord?
    /// Commits a picture, its variants, the job that brought it, its moment assignment and its
    /// outbox events in one transaction; a concurrent commit of the same bytes makes a duplicate.
    func commitPicture(_ picture: PictureRecord, variants: [VariantRecord], job: JobRecord) throws(CatalogError) -> CommitOutcome
    /// Records a job whose photo was already a picture.
    func recordDuplicate(_ job: JobRecord, of pictureId: Int64) throws(CatalogError)
    /// Records a job whose photo could not be processed.
    func recordFailure(_ job: JobRecord) throws(CatalogError)
    /// The finished job that held a claim, if its commit happened.
    func finishedJob(claimPath: String) throws(CatalogError) -> JobRecord?
    /// The newest job recorded under a claim path.
    func latestJob(claimPath: String) throws(CatalogError) -> JobRecord?
}

extension Catalog: PictureCatalog {}

/// The catalog as the commands that work on either store see it (SQLite's `Catalog`, and
/// `PostgresCatalog`): what photo processing writes, plus declarations, moment reads, counts
/// and the rebuild check.
public protocol CatalogStore: PictureCatalog {
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
    /// Places whose centre lies within `radiusMetres` of `center`, nearest first.
    func places(around center: Coordinate, radiusMetres: Double) throws(CatalogError) -> [Place]
    /// A place by id.
    func place(id: Int64) throws(CatalogError) -> Place?
    /// A moment by id.
    func moment(id: Int64) throws(CatalogError) -> Moment?
    /// How many pictures one moment holds.
    func pictureCount(inMoment id: Int64) throws(CatalogError) -> Int
    /// One page of a moment's pictures in the stable order.
    func pictures(inMoment id: Int64, after cursor: PictureCursor?, limit: Int) throws(CatalogError) -> PicturePageRecords
    /// A picture by id.
    func picture(id: Int64) throws(CatalogError) -> PictureRecord?
    /// The variants of one picture.
    func variants(ofPicture id: Int64) throws(CatalogError) -> [VariantRecord]
}

extension Catalog: CatalogStore {}
