import Catalog
import Foundation
import GRDB

extension Catalog {
    /// Records the start of an import run and returns its id.
    public func startImport(_ run: ImportRunRecord) throws(CatalogError) -> Int64 {
        try write { db in
            var run = run
            try run.insert(db)
            guard let id = run.id else { throw CatalogError.other("inserted import run has no id") }
            return id
        }
    }

    /// Records how an import run ended, with its report.
    public func finishImport(id: Int64, outcome: ImportRunRecord.Outcome, reportJSON: String?, at instant: Double) throws(CatalogError) {
        try write { db in
            try db.execute(sql: "UPDATE imports SET outcome = ?, finished_at = ?, report_json = ? WHERE id = ?",
                           arguments: [outcome.rawValue, instant, reportJSON, id])
        }
    }

    /// The newest import runs first, with what their files became.
    public func importRuns(limit: Int) throws(CatalogError) -> [ImportRunSummary] {
        try read { db in try ImportRunSummary.latest(limit: limit, in: db) }
    }

    /// Marks `abandoned` the runs still said to be `running` whose process `isGone` says has
    /// ended (killed before it could record its end). Returns how many.
    @discardableResult
    public func markAbandonedImports(isGone: @Sendable (String) -> Bool) throws(CatalogError) -> Int {
        try write { db in
            let running = try ImportRunRecord.filter(Column("outcome") == ImportRunRecord.Outcome.running.rawValue).fetchAll(db)
            var marked = 0
            for run in running where isGone(run.worker) {
                try db.execute(sql: "UPDATE imports SET outcome = ? WHERE id = ?", arguments: [ImportRunRecord.Outcome.abandoned.rawValue, run.id])
                marked += 1
            }
            return marked
        }
    }

    /// The journal rows of the files of one folder, by absolute path.
    public func importedFiles(inDirectory directory: String) throws(CatalogError) -> [String: ImportFileRecord] {
        try read { db in try ImportFileRecord.inDirectory(directory, in: db) }
    }

    /// Records what became of one file of an import, replacing an older row of the same path
    /// (a file that changed since it was last imported).
    public func recordImportedFile(_ file: ImportFileRecord) throws(CatalogError) {
        try write { db in try file.save(db) }
    }

    /// The id of the newest outbox event (0 when there is none): events after it are newer.
    public func outboxHighWater() throws(CatalogError) -> Int64 {
        try read { db in try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(id), 0) FROM outbox") ?? 0 }
    }

    /// How many outbox events of one kind were written after the event `id`.
    public func outboxEvents(_ event: OutboxEvent.Name, after id: Int64) throws(CatalogError) -> Int {
        try read { db in
            try OutboxEvent.filter(Column("event") == event.rawValue && Column("id") > id).fetchCount(db)
        }
    }

    /// How many distinct moments hold the pictures an import added.
    public func momentCount(ofImport importId: Int64) throws(CatalogError) -> Int {
        try read { db in try ImportFileRecord.momentCount(ofImport: importId, in: db) }
    }
}
