import Catalog
import Crypto
import Foundation
import GRDB

/// The SQLite catalog being copied, opened read-only: nothing is created, migrated or written,
/// not even a lock file. Everything the copy reads comes from one snapshot (one read
/// transaction), so a worker still writing to the file cannot make the copy inconsistent.
struct CopySource {
    let path: String
    private let queue: DatabaseQueue

    /// How long a read waits for a writer that holds the file (a catalog not in WAL mode).
    static let busySeconds: TimeInterval = 30

    init(path: String) throws(CatalogCopyError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw .sourceMissing(path)
        }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(Self.busySeconds)
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw .sourceUnreadable(path, reason: Self.reason(error))
        }
        // Absolute, as the copy's record names it for a later run to compare.
        self.path = URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// Runs `body` on one snapshot of the catalog; `changed` tells whether another connection
    /// (a worker, `serve`) committed to the file while it ran, which the snapshot leaves out.
    func snapshot<T>(_ body: (Database) throws -> T) throws -> (result: T, changed: Bool) {
        do {
            return try queue.inDatabase { db in
                // SQLite moves `data_version` when another connection commits: read before and
                // after the read transaction, it tells whether the file moved on meanwhile.
                let before = try Int64.fetchOne(db, sql: "PRAGMA data_version")
                var result: T?
                try db.inTransaction(.deferred) {
                    result = try body(db)
                    return .commit
                }
                let after = try Int64.fetchOne(db, sql: "PRAGMA data_version")
                guard let result else { throw CatalogCopyError.sourceUnreadable(path, reason: "the read produced nothing") }
                return (result, before != after)
            }
        } catch let error as CatalogCopyError {
            throw error
        } catch let error as DatabaseError {
            throw CatalogCopyError.sourceUnreadable(path, reason: Self.reason(error))
        }
    }

    /// Refuses a file that is not a Darkroom catalog of this version's schema, or that holds a
    /// table the copy would leave behind without knowing it.
    func check(_ db: Database) throws {
        guard try db.tableExists("pictures") else {
            throw CatalogCopyError.sourceUnreadable(path, reason: "it is not a Darkroom catalog (it has no pictures table)")
        }
        let gaps = try Catalog.migrationGaps(in: db)
        if !gaps.unknown.isEmpty {
            throw CatalogCopyError.sourceSchema(path, reason: "was written by a newer darkroom (migrations \(gaps.unknown.joined(separator: ", ")) "
                + "are unknown to this one): copy it with that version")
        }
        if !gaps.missing.isEmpty {
            throw CatalogCopyError.sourceSchema(path, reason: "was written by an older darkroom (it lacks migrations \(gaps.missing.joined(separator: ", "))): "
                + "open it once with this version (darkroom status, with catalog.url unset) so that it is migrated, then copy it")
        }
        let known = Set(CopiedTable.all.map(\.name))
        let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        if let stranger = tables.first(where: { !known.contains($0) && !CopiedTable.isLeftBehind($0) }) {
            throw CatalogCopyError.sourceSchema(path, reason: "has a table \(stranger) that catalog copy does not know: "
                + "copy it with the darkroom version that made it")
        }
    }

    /// The columns of a table that hold values (generated ones are left out), in order; nil
    /// when there is no such table.
    func columns(of table: String, _ db: Database) throws -> [String]? {
        guard try db.tableExists(table) else { return nil }
        // `hidden` is 2 or 3 for a generated column, which the other store computes itself.
        return try Row.fetchAll(db, sql: "PRAGMA table_xinfo(\(table.quotedDatabaseIdentifier))")
            .filter { ($0["hidden"] as Int? ?? 0) == 0 }
            .map { $0["name"] }
    }

    /// How many rows a table holds (0 for a table the catalog does not have).
    func count(_ table: String, _ db: Database) throws -> Int {
        guard try db.tableExists(table) else { return 0 }
        return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table.quotedDatabaseIdentifier)") ?? 0
    }

    /// The highest id an AUTOINCREMENT table has ever given (SQLite never gives it again, even
    /// once its row is gone); 0 when it has given none.
    func highestIdGiven(_ table: String, _ db: Database) throws -> Int64 {
        guard try db.tableExists("sqlite_sequence") else { return 0 }
        return try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [table]) ?? 0
    }

    /// Every row of a small table (the totals), as text by column, in rowid order.
    func textRows(of table: String, columns: [String], _ db: Database) throws -> [[String: String]] {
        let list = columns.map { "CAST(\($0.quotedDatabaseIdentifier) AS TEXT)" }.joined(separator: ", ")
        return try Row.fetchAll(db, sql: "SELECT \(list) FROM \(table.quotedDatabaseIdentifier) ORDER BY _rowid_").map { row in
            var values: [String: String] = [:]
            for (index, name) in columns.enumerated() { values[name] = row[index] as String? ?? "null" }
            return values
        }
    }

    /// Up to `limit` rows after the row `key` (by rowid; from the first when nil), each with its
    /// rowid first, then `columns`.
    func rows(of table: String, columns: [String], after key: Int64?, limit: Int, _ db: Database) throws -> [Row] {
        let list = (["_rowid_"] + columns.map(\.quotedDatabaseIdentifier)).joined(separator: ", ")
        let name = table.quotedDatabaseIdentifier
        if let key {
            return try Row.fetchAll(db, sql: "SELECT \(list) FROM \(name) WHERE _rowid_ > ? ORDER BY _rowid_ LIMIT ?", arguments: [key, limit])
        }
        return try Row.fetchAll(db, sql: "SELECT \(list) FROM \(name) ORDER BY _rowid_ LIMIT ?", arguments: [limit])
    }

    /// What tells this catalog from another across its changes: the content hash of its first
    /// picture, which nothing replaces (a catalog without pictures is told by nothing).
    func identity(_ db: Database) throws -> String {
        try String.fetchOne(db, sql: "SELECT sha256 FROM pictures ORDER BY id LIMIT 1") ?? "no pictures"
    }

    /// A SHA-256 of every row of these tables, in rowid order: equal only when the catalog has
    /// not changed, so that a copy continued later knows what it already wrote is still right.
    func digest(_ tables: [(name: String, columns: [String])], _ db: Database) throws -> String {
        var hash = SHA256()
        var bytes: [UInt8] = []
        for (table, columns) in tables {
            hash.update(data: Data("\(table)(\(columns.joined(separator: ",")))\n".utf8))
            let list = columns.map(\.quotedDatabaseIdentifier).joined(separator: ", ")
            let cursor = try Row.fetchCursor(db, sql: "SELECT \(list) FROM \(table.quotedDatabaseIdentifier) ORDER BY _rowid_")
            while let row = try cursor.next() {
                bytes.removeAll(keepingCapacity: true)
                for value in row.databaseValues { Self.append(value, to: &bytes) }
                hash.update(data: bytes)
            }
        }
        return hash.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// A value as bytes for the hash, with its storage class and length, so that no two rows
    /// run together.
    private static func append(_ value: DatabaseValue, to bytes: inout [UInt8]) {
        func tagged(_ tag: UInt8, _ length: Int) {
            bytes.append(tag)
            withUnsafeBytes(of: UInt64(length).littleEndian) { bytes.append(contentsOf: $0) }
        }
        switch value.storage {
        case .null:
            bytes.append(0)
        case .int64(let number):
            tagged(1, 8)
            withUnsafeBytes(of: number.littleEndian) { bytes.append(contentsOf: $0) }
        case .double(let number):
            tagged(2, 8)
            withUnsafeBytes(of: number.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
        case .string(let text):
            tagged(3, text.utf8.count)
            bytes.append(contentsOf: text.utf8)
        case .blob(let data):
            tagged(4, data.count)
            bytes.append(contentsOf: data)
        }
    }

    /// SQLite's message in one line.
    static func reason(_ error: any Error) -> String {
        (error as? DatabaseError)?.message ?? "\(error)"
    }
}
