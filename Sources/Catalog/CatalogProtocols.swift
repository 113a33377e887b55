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
