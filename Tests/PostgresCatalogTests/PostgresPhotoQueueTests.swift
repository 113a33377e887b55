import Catalog
import Foundation
@testable import PostgresCatalog
import PostgresHarness
import PostgresNIO
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

    /// A photo job that ends (done, or failed for good) is told to every follower as it is
    /// committed, a job still held is not; a follower whose session the server ends listens
    /// again on a new one and hears the next ending.
    @Test func endedJobsAreToldToFollowersThroughATerminatedSession() throws {
        let catalog = try PostgresCatalogTests.catalog()
        defer { catalog.close() }
        let heard = Heard()
        let feed = catalog.followOutcomes { heard.add($0) }
        defer { feed.stop() }
        #expect(Self.until { feed.isLive }, "the follower listens")
        let files = (0..<3).map { "t\($0)/\(String(repeating: "a", count: 31))\($0).jpg" }
        try catalog.admitPhotos(files: files, urgent: true)
        var held: [QueuedPhoto] = []
        for _ in 0..<3 { held.append(try #require(try catalog.claimPhoto(owner: "m1", leaseSeconds: 60, lapsedFor: 0))) }
        let pictures = PostgresCatalogTests.photos(seed: 9, count: 2)
        _ = try catalog.completing(held[0]).commitPicture(pictures[0], variants: [], job: PostgresCatalogTests.job(0))
        var failure = PostgresCatalogTests.job(1)
        failure.outcome = .failed
        failure.error = "not a photo"
        try catalog.completing(held[1]).recordFailure(failure)
        #expect(Self.until { heard.files.count >= 2 })
        #expect(heard.files == [held[0].file, held[1].file], "the two ended jobs, in commit order, and not the held one")

        // The server ends the listening session: the follower is not live until it listens again.
        let listeners = PostgresQuery(unsafeSQL: "SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND datname = current_database() AND pid <> pg_backend_pid()")
        let ended = try catalog.write { session in try session.values(listeners, as: Int32.self) }
        #expect(ended.count == 1, "one listening session: \(ended)")
        try catalog.write { session in try session.execute(PostgresQuery(unsafeSQL: "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND datname = current_database() AND pid <> pg_backend_pid()")) }
        let cut = Date()
        var seen: [Int32] = []
        #expect(Self.until {
            seen = (try? catalog.write { session in try session.values(listeners, as: Int32.self) }) ?? []
            return feed.isLive && !seen.isEmpty && Set(seen).isDisjoint(with: ended)
        }, "listening again on a new session: live \(feed.isLive), listening sessions \(seen), ended \(ended)")
        print("outcome feed: listening again \(String(format: "%.2f", Date().timeIntervalSince(cut))) s after its session was ended")
        _ = try catalog.completing(held[2]).commitPicture(pictures[1], variants: [], job: PostgresCatalogTests.job(2))
        #expect(Self.until { heard.files.count >= 3 })
        #expect(heard.files.last == held[2].file)
        feed.stop()
        #expect(!feed.isLive)
    }

    /// Whether `condition` holds within thirty seconds (looked at every 20 ms).
    static func until(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while !condition() {
            if Date() > deadline { return false }
            usleep(20_000)
        }
        return true
    }

    final class Heard: @unchecked Sendable {  // safe: `seen` is guarded by `lock`
        private let lock = NSLock()
        private var seen: [String] = []
        func add(_ file: String) { lock.withLock { seen.append(file) } }
        var files: [String] { lock.withLock { seen } }
    }
}
