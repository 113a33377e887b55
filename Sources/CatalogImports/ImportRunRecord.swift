import Catalog
import Foundation
import GRDB

/// One run of `darkroom import`: the folders it was given, how originals were placed, and its
/// report once it ended. A run that was killed keeps the outcome `running` and no end time
/// until the next import finds its process gone and marks it `abandoned`.
public struct ImportRunRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "imports"
    public static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
    public static var databaseColumnEncodingStrategy: DatabaseColumnEncodingStrategy { ColumnName.encoding }

    /// How a run ended.
    public enum Outcome: String, Codable, Sendable {
        /// Still running, or killed before it could say.
        case running
        /// Every file of the folders was walked.
        case finished
        /// Stopped by a signal after finishing the photos in hand; run it again to continue.
        case interrupted
        /// Its process ended without saying (killed, crashed, rebooted); run it again to continue.
        case abandoned
    }

    public var id: Int64?
    /// The folders imported, as a JSON list of absolute paths.
    public var roots: String
    /// `copy`, `move` or `link`.
    public var mode: String
    /// The process that ran it (`host.pid`).
    public var worker: String
    /// When it started, in seconds since 1970.
    public var startedAt: Double
    /// When it ended; nil while it runs, or when it was killed.
    public var finishedAt: Double?
    /// How it ended.
    public var outcome: Outcome
    /// The run's report, as `--report` writes it.
    public var reportJson: String?

    /// A run that starts now.
    public init(roots: String, mode: String, worker: String, startedAt: Double) {
        self.roots = roots
        self.mode = mode
        self.worker = worker
        self.startedAt = startedAt
        self.outcome = .running
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}

/// One import run with what its files became, for `darkroom status`.
public struct ImportRunSummary: Codable, Sendable, Equatable {
    public var id: Int64
    /// The folders imported.
    public var roots: [String]
    public var mode: String
    public var worker: String
    public var startedAt: Double
    public var finishedAt: Double?
    public var outcome: ImportRunRecord.Outcome
    /// Files of this run by what became of them (journal rows).
    public var added: Int
    public var duplicates: Int
    public var failed: Int
}

extension ImportRunSummary {
    /// A stored run with the counts of its journal rows by outcome (`added`, `duplicate`,
    /// `failed`); nil for a run never stored (no id). Either store reads its runs through it.
    public init?(_ run: ImportRunRecord, fileCounts counts: [String: Int]) {
        guard let id = run.id else { return nil }
        let roots = (try? JSONDecoder().decode([String].self, from: Data(run.roots.utf8))) ?? [run.roots]
        self.init(id: id, roots: roots, mode: run.mode, worker: run.worker, startedAt: run.startedAt,
                  finishedAt: run.finishedAt, outcome: run.outcome, added: counts[JobRecord.Outcome.added.rawValue] ?? 0,
                  duplicates: counts[JobRecord.Outcome.duplicate.rawValue] ?? 0, failed: counts[JobRecord.Outcome.failed.rawValue] ?? 0)
    }

    /// The newest runs first, with their journal counts.
    static func latest(limit: Int, in db: Database) throws -> [ImportRunSummary] {
        let runs = try ImportRunRecord.order(Column("id").desc).limit(limit).fetchAll(db)
        return try runs.compactMap { run in
            guard let id = run.id else { return nil }
            var counts: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT outcome, COUNT(*) FROM import_files WHERE import_id = ? GROUP BY outcome", arguments: [id]) {
                counts[row[0]] = row[1]
            }
            return ImportRunSummary(run, fileCounts: counts)
        }
    }
}
