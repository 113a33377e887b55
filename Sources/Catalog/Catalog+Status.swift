import Foundation
import GRDB

/// Counts for `darkroom status` and the end-of-run summary.
public struct CatalogCounts: Sendable, Equatable, Codable {
    public var pictures: Int
    public var variants: Int
    public var jobsAdded: Int
    public var jobsDuplicate: Int
    public var jobsFailed: Int
    public var moments: Int
    public var places: Int
    public var outboxPending: Int
    /// Jobs finished in the last minute and the last hour.
    public var finishedLastMinute: Int
    public var finishedLastHour: Int

    /// Counts from their parts (each store counts its own tables).
    public init(pictures: Int, variants: Int, jobsAdded: Int, jobsDuplicate: Int, jobsFailed: Int, moments: Int, places: Int,
                outboxPending: Int, finishedLastMinute: Int, finishedLastHour: Int) {
        self.pictures = pictures
        self.variants = variants
        self.jobsAdded = jobsAdded
        self.jobsDuplicate = jobsDuplicate
        self.jobsFailed = jobsFailed
        self.moments = moments
        self.places = places
        self.outboxPending = outboxPending
        self.finishedLastMinute = finishedLastMinute
        self.finishedLastHour = finishedLastHour
    }
}

extension Catalog {
    /// Counts of everything in the catalog, as of now.
    public func counts(now: Date = Date()) throws(CatalogError) -> CatalogCounts {
        let instant = now.timeIntervalSince1970
        return try read { db in
            func outcomes(_ outcome: JobRecord.Outcome) throws -> Int {
                try JobRecord.filter(Column("outcome") == outcome.rawValue).fetchCount(db)
            }
            return CatalogCounts(
                pictures: try PictureRecord.fetchCount(db),
                variants: try VariantRecord.fetchCount(db),
                jobsAdded: try outcomes(.added),
                jobsDuplicate: try outcomes(.duplicate),
                jobsFailed: try outcomes(.failed),
                moments: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM moments") ?? 0,
                places: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM places") ?? 0,
                outboxPending: try OutboxEvent.filter(Column("delivered_at") == nil).fetchCount(db),
                finishedLastMinute: try JobRecord.count(finishedSince: instant - 60, in: db),
                finishedLastHour: try JobRecord.count(finishedSince: instant - 3600, in: db))
        }
    }
}

extension Catalog {
    /// Throws when the catalog cannot be read (for readiness probes): a query on its schema.
    public func checkReachable() throws(CatalogError) {
        _ = try read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master") }
    }
}
