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

/// The catalog as `darkroom import` sees it beyond each photo: its runs and its journal of
/// files, so that an interrupted import continues where it stopped.
public protocol ImportJournal: PictureCatalog {
    /// Records the start of a run; returns its id.
    func startImport(_ run: ImportRunRecord) throws(CatalogError) -> Int64
    /// Records how a run ended, with its report.
    func finishImport(id: Int64, outcome: ImportRunRecord.Outcome, reportJSON: String?, at instant: Double) throws(CatalogError)
    /// Marks runs still recorded as running whose process is gone as abandoned; how many.
    func markAbandonedImports(isGone: @Sendable (String) -> Bool) throws(CatalogError) -> Int
    /// The journal's rows of one folder, by file name.
    func importedFiles(inDirectory directory: String) throws(CatalogError) -> [String: ImportFileRecord]
    /// Records (or updates) one file's row in the journal.
    func recordImportedFile(_ file: ImportFileRecord) throws(CatalogError)
    /// The highest outbox id so far.
    func outboxHighWater() throws(CatalogError) -> Int64
    /// Outbox events of one kind after an id.
    func outboxEvents(_ event: OutboxEvent.Name, after id: Int64) throws(CatalogError) -> Int
    /// Moments holding the pictures one run added.
    func momentCount(ofImport importId: Int64) throws(CatalogError) -> Int
}

extension Catalog: ImportJournal {}
