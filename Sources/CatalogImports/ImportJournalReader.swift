import Catalog
import Foundation
import GRDB

/// The import journal of an existing catalog, opened read-only, for `darkroom import --dry-run`:
/// it tells which files are done without creating, migrating or writing the catalog.
public struct ImportJournalReader: ImportedFilesReader {
    private let queue: DatabaseQueue?

    /// Opens the catalog at `path` read-only. A missing catalog, or one that has never imported
    /// anything, reads as an empty journal.
    public init(path: String) throws(CatalogError) {
        guard FileManager.default.fileExists(atPath: path) else {
            queue = nil
            return
        }
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            let hasJournal = try queue.read { db in try db.tableExists(ImportFileRecord.databaseTableName) }
            self.queue = hasJournal ? queue : nil
        } catch {
            throw CatalogError(error, path: path)
        }
    }

    /// The journal rows of the files of one folder, by absolute path.
    public func importedFiles(inDirectory directory: String) throws(CatalogError) -> [String: ImportFileRecord] {
        guard let queue else { return [:] }
        do {
            return try queue.read { db in try ImportFileRecord.inDirectory(directory, in: db) }
        } catch {
            throw CatalogError(error, path: queue.path)
        }
    }
}
