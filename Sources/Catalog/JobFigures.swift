import GRDB

/// What the jobs table says about the photos processed, for metrics. Counted over every
/// process sharing the catalog, not only the one asking.
public struct JobFigures: Sendable, Equatable {
    /// Jobs by outcome; an outcome no job had is absent.
    public var outcomes: [JobRecord.Outcome: Int]
    /// Failed jobs by their stored reason (`jobs.error`; "" when none was stored).
    public var failureReasons: [String: Int]
    /// For each bound asked for, in order, the jobs that took at most that long: cumulative.
    public var durationBuckets: [Int]
    /// Jobs, whatever their outcome.
    public var count: Int
    /// Their durations added up, in milliseconds.
    public var durationSumMs: Double
}

extension JobRecord {
    /// Outcome and failure counts, and a histogram of durations with the bounds `boundsMs`.
    public static func figures(durationBoundsMs boundsMs: [Double], in db: Database) throws -> JobFigures {
        var outcomes: [Outcome: Int] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT outcome, COUNT(*) AS n FROM jobs GROUP BY outcome") {
            if let outcome = Outcome(rawValue: row["outcome"]) { outcomes[outcome] = row["n"] }
        }
        var reasons: [String: Int] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT COALESCE(error, '') AS error, COUNT(*) AS n FROM jobs WHERE outcome = 'failed' GROUP BY 1") {
            reasons[row["error"], default: 0] += row["n"]
        }
        let buckets = boundsMs.indices.map { ", COALESCE(SUM(duration_ms <= ?), 0) AS b\($0)" }.joined()
        let row = try Row.fetchOne(db, sql: "SELECT COUNT(*) AS n, COALESCE(SUM(duration_ms), 0) AS total\(buckets) FROM jobs",
                                   arguments: StatementArguments(boundsMs))
        return JobFigures(outcomes: outcomes, failureReasons: reasons,
                          durationBuckets: boundsMs.indices.map { row?["b\($0)"] ?? 0 },
                          count: row?["n"] ?? 0, durationSumMs: row?["total"] ?? 0)
    }
}

extension Catalog {
    /// Outcome and failure counts of every job, and a histogram of their durations with the
    /// bounds `boundsMs` (milliseconds).
    public func jobFigures(durationBoundsMs boundsMs: [Double]) throws(CatalogError) -> JobFigures {
        try read { db in try JobRecord.figures(durationBoundsMs: boundsMs, in: db) }
    }
}
