import GRDB
import Synchronization

/// What the jobs table says about the photos processed, for metrics. Counted over every
/// process sharing the catalog, not only the one asking.
public struct JobFigures: Sendable, Equatable {
    /// Jobs by outcome; an outcome no job had is absent.
    public var outcomes: [JobRecord.Outcome: Int]
    /// Failed jobs by their stored category (`jobs.failure_category`; "" for jobs failed before
    /// categories were kept).
    public var failureCategories: [String: Int]
    /// For each bound asked for, in order, the jobs that took at most that long: cumulative.
    public var durationBuckets: [Int]
    /// Jobs, whatever their outcome.
    public var count: Int
    /// Their durations added up, in milliseconds.
    public var durationSumMs: Double

    public init(outcomes: [JobRecord.Outcome: Int], failureCategories: [String: Int], durationBuckets: [Int], count: Int, durationSumMs: Double) {
        self.outcomes = outcomes
        self.failureCategories = failureCategories
        self.durationBuckets = durationBuckets
        self.count = count
        self.durationSumMs = durationSumMs
    }
}

extension JobFigures {
    /// No jobs: every count zero, `bucketCount` buckets.
    init(bucketCount: Int) {
        self.init(outcomes: [:], failureCategories: [:], durationBuckets: Array(repeating: 0, count: bucketCount), count: 0, durationSumMs: 0)
    }

    /// Adds the figures of other jobs (counted with the same bounds).
    static func += (lhs: inout JobFigures, rhs: JobFigures) {
        lhs.outcomes.merge(rhs.outcomes, uniquingKeysWith: +)
        lhs.failureCategories.merge(rhs.failureCategories, uniquingKeysWith: +)
        lhs.durationBuckets = zip(lhs.durationBuckets, rhs.durationBuckets).map(+)
        lhs.count += rhs.count
        lhs.durationSumMs += rhs.durationSumMs
    }
}

extension JobRecord {
    /// Outcome and failure counts, and a histogram of durations with the bounds `boundsMs`, of
    /// the jobs whose id is above `afterId` (0: every job); also the highest id counted.
    public static func figures(durationBoundsMs boundsMs: [Double], afterId: Int64 = 0,
                               in db: Database) throws -> (figures: JobFigures, lastId: Int64) {
        let lastId = try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(id), 0) FROM jobs") ?? 0
        guard lastId > afterId else { return (JobFigures(bucketCount: boundsMs.count), afterId) }
        // Jobs are only ever inserted, with ever higher ids (SQLite has one writer at a time), so
        // the rows after `afterId` up to `lastId` are exactly those not counted yet.
        let range = "id > ? AND id <= ?"
        var outcomes: [Outcome: Int] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT outcome, COUNT(*) AS n FROM jobs WHERE \(range) GROUP BY outcome",
                                    arguments: [afterId, lastId]) {
            if let outcome = Outcome(rawValue: row["outcome"]) { outcomes[outcome] = row["n"] }
        }
        var categories: [String: Int] = [:]
        for row in try Row.fetchAll(db, sql: """
            SELECT COALESCE(failure_category, '') AS category, COUNT(*) AS n FROM jobs
            WHERE \(range) AND outcome = 'failed' GROUP BY 1
            """, arguments: [afterId, lastId]) {
            categories[row["category"], default: 0] += row["n"]
        }
        let buckets = boundsMs.indices.map { ", COALESCE(SUM(duration_ms <= ?), 0) AS b\($0)" }.joined()
        let row = try Row.fetchOne(db, sql: "SELECT COUNT(*) AS n, COALESCE(SUM(duration_ms), 0) AS total\(buckets) FROM jobs WHERE \(range)",
                                   arguments: StatementArguments(boundsMs) + [afterId, lastId])
        let figures = JobFigures(outcomes: outcomes, failureCategories: categories,
                                 durationBuckets: boundsMs.indices.map { row?["b\($0)"] ?? 0 },
                                 count: row?["n"] ?? 0, durationSumMs: row?["total"] ?? 0)
        return (figures, lastId)
    }
}

extension Catalog {
    /// Outcome and failure counts of every job, and a histogram of their durations with the
    /// bounds `boundsMs` (milliseconds). Reads the whole jobs table: see `JobTally` for a
    /// running count.
    public func jobFigures(durationBoundsMs boundsMs: [Double]) throws(CatalogError) -> JobFigures {
        try read { db in try JobRecord.figures(durationBoundsMs: boundsMs, in: db).figures }
    }
}

/// The job figures of a catalog kept up to date by reading only the jobs added since the last
/// look (for `/metrics`, scraped every few seconds: a catalog of a million jobs took about 2.5 s
/// to count whole, the same queries timed from Python's sqlite3 here). Counts the jobs of every
/// process sharing the catalog; one tally serves one catalog.
public final class JobTally: Sendable {
    private let boundsMs: [Double]
    private let state: Mutex<(figures: JobFigures, lastId: Int64)>

    /// A tally with the duration bounds `boundsMs` (milliseconds), nothing counted yet.
    public init(durationBoundsMs boundsMs: [Double]) {
        self.boundsMs = boundsMs
        state = Mutex((JobFigures(bucketCount: boundsMs.count), 0))
    }

    /// Every job of `catalog` so far: the figures of the last call plus those of the jobs added
    /// since. A store with several writers at once (PostgreSQL) commits ids out of order, so that
    /// "the ids above the last one counted" may miss a job: it is counted whole each time.
    public func figures(of store: any CatalogStore) throws(CatalogError) -> JobFigures {
        guard let catalog = store as? Catalog else { return try store.jobFigures(durationBoundsMs: boundsMs) }
        // One reader at a time, so that no range of ids is counted twice.
        return try state.withLock { (state) throws(CatalogError) -> JobFigures in
            let afterId = state.lastId
            let bounds = boundsMs
            let added = try catalog.read { db in try JobRecord.figures(durationBoundsMs: bounds, afterId: afterId, in: db) }
            state.figures += added.figures
            state.lastId = added.lastId
            return state.figures
        }
    }
}
