import Foundation
import GRDB
import Testing
@testable import Catalog

/// A job's duration follows its start and end, for new rows and for rows written before.
@Suite("Job durations")
struct JobDurationTests {
    let path = NSTemporaryDirectory() + "darkroom-durations-" + UUID().uuidString + ".sqlite"

    @Test func aRowWrittenWithAStaleDurationIsRepairedByTheMigration() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        // A catalog as the release before wrote it: the duration stored when the record was
        // made, before its end time was set.
        let old = try DatabaseQueue(path: path)
        try CatalogSchema.migrator.migrate(old, upTo: "v9-camera-values")
        try old.write { db in
            try db.execute(sql: """
                INSERT INTO jobs (source_name, claim_path, outcome, attempts, worker, started_at, finished_at, duration_ms)
                VALUES ('a.jpg', 'processing/w/a.jpg', 'added', 1, 'w', 1000, 1001.5, -1.8e12),
                       ('b.jpg', 'processing/w/b.jpg', 'failed', 1, 'w', 1000, 1000.25, 250)
                """)
        }
        try old.close()

        let catalog = try Catalog(path: path)
        let durations = try catalog.read { db in try Double.fetchAll(db, sql: "SELECT duration_ms FROM jobs ORDER BY id") }
        #expect(durations == [1500, 250])
        let figures = try catalog.jobFigures(durationBoundsMs: [1000, 2000])
        #expect(figures.durationSumMs == 1750 && figures.durationBuckets == [1, 2])
    }

    @Test func aJobsDurationIsComputedFromItsEndWhereverTheEndIsSet() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let catalog = try Catalog(path: path)
        var job = JobRecord(sourceName: "c.jpg", claimPath: "processing/w/c.jpg", sha256: nil, outcome: .failed, pictureId: nil,
                            attempts: 1, error: "x", sidecarJson: nil, worker: "w", startedAt: 50, finishedAt: 0)
        #expect(job.durationMs == nil, "no end yet: no duration")
        job.finishedAt = 50.125
        #expect(job.durationMs == 125)
        try catalog.recordFailure(job)
        #expect(try catalog.read { db in try Double.fetchOne(db, sql: "SELECT duration_ms FROM jobs") } == 125)
    }
}
