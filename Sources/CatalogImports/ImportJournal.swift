import Catalog

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
