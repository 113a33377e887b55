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

    /// Counted whole at each call, in one statement per figure: jobs commit here from several
    /// writers at once, so their ids do not arrive in order and cannot be counted from a mark.
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
            let (count, total) = try session.rows("SELECT count(*), COALESCE(sum(duration_ms), 0) FROM jobs")
                .first?.decode((Int64, Double).self) ?? (Int64(0), 0.0)
            let buckets = try session.values("""
                SELECT (SELECT count(*) FROM jobs WHERE duration_ms <= bound) FROM unnest(\(boundsMs)) WITH ORDINALITY AS b(bound, n) ORDER BY n
                """, as: Int64.self)
            return JobFigures(outcomes: outcomes, failureCategories: categories, durationBuckets: buckets.map(Int.init),
                              count: Int(count), durationSumMs: total)
        }
    }
}
