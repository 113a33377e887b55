import Failures
import GRDB

/// What became of one photo that arrived through the spool: added, duplicate or failed.
public struct JobRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "jobs"
    public static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
    public static var databaseColumnEncodingStrategy: DatabaseColumnEncodingStrategy { ColumnName.encoding }

    /// The possible outcomes of a job.
    public enum Outcome: String, Codable, Sendable {
        case added, duplicate, failed
    }

    public var id: Int64?
    public var sourceName: String
    public var claimPath: String
    public var sha256: String?
    public var outcome: Outcome
    public var pictureId: Int64?
    public var attempts: Int
    public var error: String?
    /// What kind of failure it was (a `FailureCategory`), for failed jobs; null for others and
    /// for jobs recorded before categories were kept.
    public var failureCategory: String?
    /// The sidecar that came with the photo, kept even when the photo was a duplicate.
    public var sidecarJson: String?
    public var worker: String
    public var startedAt: Double
    public var finishedAt: Double

    /// How long the job took, from its start to its end, in milliseconds; nil while it has no
    /// end. Computed from the two (as the catalog's `duration_ms` column is), so it can never
    /// go stale when the end is set after the record was made.
    public var durationMs: Double? {
        finishedAt >= startedAt && finishedAt > 0 ? (finishedAt - startedAt) * 1000 : nil
    }

    public init(
        sourceName: String, claimPath: String, sha256: String?, outcome: Outcome, pictureId: Int64?,
        attempts: Int, error: String?, sidecarJson: String?, worker: String,
        startedAt: Double, finishedAt: Double, failureCategory: FailureCategory? = nil
    ) {
        self.sourceName = sourceName
        self.claimPath = claimPath
        self.sha256 = sha256
        self.outcome = outcome
        self.pictureId = pictureId
        self.attempts = attempts
        self.error = error
        self.failureCategory = failureCategory?.rawValue
        self.sidecarJson = sidecarJson
        self.worker = worker
        self.startedAt = startedAt
        self.finishedAt = finishedAt
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}

extension JobRecord {
    /// The finished job that held this claim, if its commit happened: a restart that finds the
    /// claimed file still in `processing/` then knows the photo is done and only removes it.
    public static func finished(claimPath: String, in db: Database) throws -> JobRecord? {
        try JobRecord.filter(Column("claim_path") == claimPath).fetchOne(db)
    }

    /// The latest job of a photo that arrived under any of these names (newest first: a photo
    /// failed, retried and then added has its `added` job returned).
    public static func latest(sourceNames: [String], in db: Database) throws -> JobRecord? {
        try JobRecord.filter(sourceNames.contains(Column("source_name"))).order(Column("id").desc).fetchOne(db)
    }

    /// Jobs finished since an instant, for throughput figures.
    public static func count(finishedSince instant: Double, in db: Database) throws -> Int {
        try JobRecord.filter(Column("finished_at") >= instant).fetchCount(db)
    }
}
