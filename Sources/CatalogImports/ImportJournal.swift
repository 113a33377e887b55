import Catalog

/// The import journal's rows of files, as a dry run reads them: which files are done, with
/// nothing created or written. An open catalog is one; so is a journal opened read-only
/// (`ImportJournalReader` for SQLite, its PostgreSQL counterpart).
public protocol ImportedFilesReader: Sendable {
    /// The journal's rows of one folder, by absolute path.
    func importedFiles(inDirectory directory: String) throws(CatalogError) -> [String: ImportFileRecord]
}

/// The catalog as `darkroom import` sees it beyond each photo: its runs and its journal of
/// files, so that an interrupted import continues where it stopped.
public protocol ImportJournal: PictureCatalog, ImportedFilesReader {
    /// Records the start of a run; returns its id.
    func startImport(_ run: ImportRunRecord) throws(CatalogError) -> Int64
    /// Records how a run ended, with its report.
    func finishImport(id: Int64, outcome: ImportRunRecord.Outcome, reportJSON: String?, at instant: Double) throws(CatalogError)
    /// Marks runs still recorded as running whose process is gone as abandoned; how many.
    func markAbandonedImports(isGone: @Sendable (String) -> Bool) throws(CatalogError) -> Int
    /// Records (or updates) one file's row in the journal.
    func recordImportedFile(_ file: ImportFileRecord) throws(CatalogError)
    /// The highest outbox id so far.
    func outboxHighWater() throws(CatalogError) -> Int64
    /// Outbox events of one kind after an id.
    func outboxEvents(_ event: OutboxEvent.Name, after id: Int64) throws(CatalogError) -> Int
    /// Moments holding the pictures one run added.
    func momentCount(ofImport importId: Int64) throws(CatalogError) -> Int
}

/// The import runs of a catalog, for `darkroom status`, whichever store it is in.
public protocol ImportRunsReader: Sendable {
    /// The newest runs first, at most `limit`, with what their files became.
    func importRuns(limit: Int) throws(CatalogError) -> [ImportRunSummary]
}

extension Catalog: ImportJournal, ImportRunsReader {}
