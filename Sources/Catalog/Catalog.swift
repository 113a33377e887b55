import Foundation
import GRDB
import Moments

/// The catalog of pictures, variants, jobs, places, moments and outbox events.
///
/// One SQLite file in WAL mode, created and migrated when opened, shared safely by the threads
/// of one worker and by several worker processes on the same machine.
public final class Catalog: Sendable {
    /// Where the catalog lives.
    public let path: String
    /// The moment rules applied when pictures arrive and moments are declared.
    public let momentRules: MomentRules
    let pool: DatabasePool

    /// Opens (creating and migrating when needed) the catalog at `path`.
    public init(path: String, momentRules: MomentRules = .default, busyTimeout: TimeInterval = 30) throws(CatalogError) {
        self.path = path
        self.momentRules = momentRules
        var configuration = Configuration()
        // Several processes write the same file: wait for the lock rather than fail at once.
        configuration.busyMode = .timeout(busyTimeout)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        do {
            let directory = (path as NSString).deletingLastPathComponent
            if !directory.isEmpty {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
            // Several workers may open a new catalog at once: one creates and migrates it while
            // the others wait on the lock, then find it ready.
            let lock = try FileLock(path: path + ".lock")
            defer { lock.release() }
            pool = try DatabasePool(path: path, configuration: configuration)
            try CatalogSchema.migrator.migrate(pool)
        } catch {
            throw CatalogError(error, path: path)
        }
    }

    /// Runs `body` in one immediate write transaction: everything in it commits together or not
    /// at all (with `commit` false, it is rolled back: a dry run).
    public func write<T: Sendable>(commit: Bool = true, _ body: @Sendable (Database) throws -> T) throws(CatalogError) -> T {
        do {
            return try pool.writeWithoutTransaction { db in
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(db)
                    return commit ? .commit : .rollback
                }
                guard let result else { throw CatalogError.other("transaction produced no result") }
                return result
            }
        } catch let error as CatalogError {
            throw error
        } catch {
            throw CatalogError(error, path: path)
        }
    }

    /// Runs `body` on a consistent snapshot of the catalog.
    public func read<T: Sendable>(_ body: @Sendable (Database) throws -> T) throws(CatalogError) -> T {
        do {
            return try pool.read(body)
        } catch {
            throw CatalogError(error, path: path)
        }
    }
}
