import Catalog
import Foundation
import PostgresNIO
import PostgresStore

/// What `darkroom serve` reads beyond moments and pictures: an upload's job, readiness and the
/// job figures of `/metrics`.
extension PostgresCatalog {
    public func latestJob(sourceNames: [String]) throws(CatalogError) -> JobRecord? {
        try readOne { session in
            try session.rows("SELECT * FROM jobs WHERE source_name = ANY(\(sourceNames)) ORDER BY id DESC LIMIT 1")
                .first.map { try Self.record(JobRecord.self, $0) }
        }
    }

    public func checkReachable() throws(CatalogError) {
        _ = try readOne { session in try session.value("SELECT count(*) FROM darkroom_migrations", as: Int64.self) }
    }

    /// Counted whole at each call (outcomes, categories, then count, sum and buckets in one
    /// pass): jobs commit here from several writers at once, so their ids do not arrive in
    /// order and cannot be counted from a mark.
    public func jobFigures(durationBoundsMs boundsMs: [Double]) throws(CatalogError) -> JobFigures {
        try read { session in
            var outcomes: [JobRecord.Outcome: Int] = [:]
            for row in try session.rows("SELECT outcome, count(*) FROM jobs GROUP BY outcome") {
                let (outcome, count) = try row.decode((String, Int64).self)
                if let outcome = JobRecord.Outcome(rawValue: outcome) { outcomes[outcome] = Int(count) }
            }
            var categories: [String: Int] = [:]
            for row in try session.rows(
                "SELECT COALESCE(failure_category, ''), count(*) FROM jobs WHERE outcome = 'failed' GROUP BY 1") {
                let (category, count) = try row.decode((String, Int64).self)
                categories[category, default: 0] += Int(count)
            }
            // Count, sum and every bucket in one pass over the jobs.
            var binds = PostgresBindings(capacity: boundsMs.count)
            for bound in boundsMs { binds.append(bound) }
            let buckets = boundsMs.indices.map { "count(*) FILTER (WHERE duration_ms <= $\($0 + 1))" }.joined(separator: ", ")
            let row = try session.rows(PostgresQuery(
                unsafeSQL: "SELECT count(*), COALESCE(sum(duration_ms), 0), ARRAY[\(buckets)]::bigint[] FROM jobs", binds: binds)).first
            let (count, total, cumulative) = try row?.decode((Int64, Double, [Int64]).self) ?? (Int64(0), 0.0, [Int64]())
            return JobFigures(outcomes: outcomes, failureCategories: categories, durationBuckets: cumulative.map(Int.init),
                              count: Int(count), durationSumMs: total)
        }
    }
}
