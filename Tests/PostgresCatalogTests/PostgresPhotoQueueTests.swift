import Catalog
import Foundation
@testable import PostgresCatalog
import PostgresHarness
import Testing

/// The shared queue's photo jobs in the catalog's database, through `PhotoJobQueue`.
@Suite("The photo queue in PostgreSQL", .enabled(if: SharedCluster.available, Comment(rawValue: SharedCluster.skipReason)))
struct PostgresPhotoQueueTests {
    static let week = 7 * 24 * 3600.0

    /// Five photos: three done (two of them long ago), one failed long ago, one still waiting.
    /// Only the done jobs older than the week go, and only the queue's record of them.
    @Test func doneJobsGoOnceOlderThanTheLimitAndNothingElseDoes() throws {
        let catalog = try PostgresCatalogTests.catalog()
        defer { catalog.close() }
        let files = (0..<5).map { "token\($0)/photo\($0).jpg" }
        try catalog.admitPhotos(files: files, urgent: false)
        var held: [QueuedPhoto] = []
        for _ in 0..<4 { held.append(try #require(try catalog.claimPhoto(owner: "m1", leaseSeconds: 60, lapsedFor: 0))) }
        #expect(held.map(\.file) == Array(files.prefix(4)), "claimed oldest first")
        let pictures = PostgresCatalogTests.photos(seed: 5, count: 3)
        for (i, photo) in held.prefix(3).enumerated() {
            _ = try catalog.completing(photo).commitPicture(pictures[i], variants: [], job: PostgresCatalogTests.job(i))
        }
        var failure = PostgresCatalogTests.job(3)
        failure.outcome = .failed
        failure.error = "not a photo"
        try catalog.completing(held[3]).recordFailure(failure)
        let old = [files[0], files[1], files[3]]
        try catalog.write { session in
            try session.execute("UPDATE queue_jobs SET finished_at = now() - interval '8 days' WHERE payload = ANY(\(old))")
        }

        let cutoff = Date().addingTimeInterval(-Self.week)
        #expect(try catalog.pruneDonePhotos(finishedBefore: cutoff, limit: 1) == 1, "no more than the limit")
        #expect(try catalog.pruneDonePhotos(finishedBefore: cutoff, limit: 100) == 1)
        #expect(try catalog.pruneDonePhotos(finishedBefore: cutoff, limit: 100) == 0)

        let states = try catalog.photoStates(files: files)
        #expect(states[files[0]] == nil && states[files[1]] == nil, "the old done jobs are gone")
        #expect(states[files[2]] == .done, "a recent done job stays")
        #expect(states[files[3]] == .failed("not a photo"), "a failed job stays, however old")
        #expect(states[files[4]] == .waiting)
        // The pictures and the jobs' history are the catalog's, untouched.
        #expect(try catalog.counts(now: Date()).pictures == 3)
        #expect(try catalog.finishedJob(claimPath: "c/0")?.outcome == .added)
    }
}
