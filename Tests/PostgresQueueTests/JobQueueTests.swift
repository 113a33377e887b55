import Failures
import Foundation
import PostgresQueue
import PostgresStore
import PostgresHarness
import Testing

/// The queue against a real PostgreSQL server (a temporary cluster of this test process).
@Suite("PostgreSQL job queue", .enabled(if: SharedCluster.available, QueueCluster.skipReason))
struct JobQueueTests {
    /// A migrated queue on a database of its own.
    static func queue(maximumAttempts: Int = 5) async throws -> JobQueue {
        let queue = JobQueue(location: try await QueueCluster.freshDatabase(), maximumConnections: 24, maximumAttempts: maximumAttempts)
        try await queue.migrate()
        return queue
    }

    @Test("migrations are applied once each, by name, however often and however many processes ask")
    func migrationsByName() async throws {
        let queue = try await Self.queue()
        defer { queue.close() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { try await queue.migrate() } }
            try await group.waitForAll()
        }
        #expect(try await queue.appliedMigrations() == ["v1-queue-jobs", "v2-queue-photo-files", "v3-queue-done-by-age", "v4-queue-photo-outcome-notices"])
    }

    @Test("eight claimers on 400 jobs: every job is completed exactly once, none twice, none lost")
    func claimsAreExclusive() async throws {
        let queue = try await Self.queue()
        defer { queue.close() }
        var enqueued = Set<Int64>()
        for index in 0..<400 { enqueued.insert(try await queue.enqueue(kind: "photo", payload: "p\(index)")) }
        let done = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var mine: [Int64] = []
                    while let job = try await queue.claim(owner: "worker-\(worker)", lease: 30) {
                        #expect(try await queue.complete(job))
                        mine.append(job.id)
                    }
                    return mine
                }
            }
            var all: [Int64] = []
            for try await ids in group { all += ids }
            return all
        }
        #expect(done.count == 400, "\(done.count) completions")
        #expect(Set(done) == enqueued)
        #expect(try await queue.counts() == ["done": 400])
    }

    @Test("a job enqueued in a transaction that rolls back never exists; one that commits does")
    func enqueueIsTransactional() async throws {
        let queue = try await Self.queue()
        defer { queue.close() }
        struct Abandoned: Error {}
        await #expect(throws: Abandoned.self) {
            try await queue.withTransaction { connection in
                try await JobQueue.enqueue(on: connection, kind: "photo", payload: "rolled back", logger: .init(label: "test"))
                throw Abandoned()
            }
        }
        #expect(try await queue.claim(owner: "a", lease: 30) == nil)
        let id = try await queue.withTransaction { connection in
            try await JobQueue.enqueue(on: connection, kind: "photo", payload: "kept", logger: .init(label: "test"))
        }
        let job = try #require(try await queue.claim(owner: "a", lease: 30))
        #expect(job.id == id && job.payload == "kept" && job.attempts == 1)
    }

    @Test("a lapsed lease (its machine died) is taken by another worker; the old holder can neither renew nor complete it")
    func lapsedLeaseIsTakenBack() async throws {
        let queue = try await Self.queue()
        defer { queue.close() }
        try await queue.enqueue(kind: "photo", payload: "one")
        // A lease long enough that a loaded test run still asks again within it.
        let first = try #require(try await queue.claim(owner: "dead-machine", lease: 3))
        #expect(try await queue.claim(owner: "other", lease: 30) == nil, "held under a live lease")
        try await Task.sleep(for: .milliseconds(3300))
        let second = try #require(try await queue.claim(owner: "other", lease: 30))
        #expect(second.id == first.id && second.attempts == 2)
        #expect(try await queue.renew(first, lease: 30) == false)
        #expect(try await queue.complete(first) == false)
        #expect(try await queue.complete(second))
        #expect(try await queue.state(of: first.id)?.state == "done")
    }

    @Test("renewing a lease keeps the job from other workers past its first expiry")
    func renewalKeepsTheJob() async throws {
        let queue = try await Self.queue()
        defer { queue.close() }
        try await queue.enqueue(kind: "photo", payload: "long")
        let job = try #require(try await queue.claim(owner: "alive", lease: 0.5))
        #expect(try await queue.renew(job, lease: 30))
        try await Task.sleep(for: .milliseconds(800))
        #expect(try await queue.claim(owner: "other", lease: 30) == nil)
        #expect(try await queue.complete(job))
    }

    @Test("a failed job waits out its backoff, and after its last attempt stays failed with its reason")
    func failuresBackOffThenStop() async throws {
        let queue = try await Self.queue(maximumAttempts: 2)
        defer { queue.close() }
        let id = try await queue.enqueue(kind: "photo", payload: "broken")
        let first = try #require(try await queue.claim(owner: "w", lease: 30))
        // A backoff long enough that a loaded test run still asks again within it.
        #expect(try await queue.fail(first, reason: "catalog busy", retryAfter: 3))
        #expect(try await queue.claim(owner: "w", lease: 30) == nil, "still backing off")
        try await Task.sleep(for: .milliseconds(3200))
        let second = try #require(try await queue.claim(owner: "w", lease: 30))
        #expect(second.attempts == 2)
        #expect(try await queue.fail(second, reason: "catalog busy again", retryAfter: 0))
        #expect(try await queue.claim(owner: "w", lease: 30) == nil)
        let state = try #require(try await queue.state(of: id))
        #expect(state.state == "failed" && state.attempts == 2 && state.lastError == "catalog busy again")
    }

    @Test("urgent jobs are claimed before older bulk ones")
    func urgentLaneFirst() async throws {
        let queue = try await Self.queue()
        defer { queue.close() }
        try await queue.enqueue(kind: "photo", payload: "bulk-1", lane: .bulk)
        try await queue.enqueue(kind: "photo", payload: "bulk-2", lane: .bulk)
        try await queue.enqueue(kind: "photo", payload: "upload", lane: .urgent)
        #expect(try await queue.claim(owner: "w", lease: 30)?.payload == "upload")
        #expect(try await queue.claim(owner: "w", lease: 30)?.payload == "bulk-1")
    }

    @Test("a server that is not there is a catalog error naming PostgreSQL, not a hang")
    func unreachableServer() async throws {
        let cluster = try SharedCluster.cluster.get()
        // The cluster's port plus one: nothing listens there.
        let queue = JobQueue(location: try PostgresLocation("postgres://postgres@127.0.0.1:\(cluster.port + 1)/none"))
        defer { queue.close() }
        do {
            try await queue.migrate()
            Issue.record("migrating against no server succeeded")
        } catch let error as PostgresError {
            #expect(error.category == .catalog)
            #expect(error.description.hasPrefix("cannot connect to PostgreSQL at postgres://postgres@127.0.0.1:\(cluster.port + 1)/none"))
        }
    }
}

/// `postgres://` addresses.
@Suite("PostgreSQL locations")
struct PostgresLocationTests {
    @Test("user, password, host, port and database are read from the address; the password else from PGPASSWORD")
    func readsTheAddress() throws {
        let full = try PostgresLocation("postgres://darkroom:s3cret@db.internal:6543/photos", environment: [:])
        #expect(full.user == "darkroom" && full.password == "s3cret" && full.host == "db.internal" && full.port == 6543)
        #expect(full.database == "photos" && full.tls == .prefer)
        let fromEnvironment = try PostgresLocation("postgresql://darkroom@127.0.0.1/photos?sslmode=require", environment: ["PGPASSWORD": "env"])
        #expect(fromEnvironment.password == "env" && fromEnvironment.port == 5432 && fromEnvironment.tls == .require)
        #expect(try PostgresLocation("postgres://u@h/d?sslmode=disable", environment: [:]).tls == .disable)
    }

    @Test("an address that cannot be used says why, as a configuration error", arguments: [
        "mysql://u@h/d", "postgres://h/d", "postgres://u@h", "postgres://u@h/", "postgres://u@h/d?sslmode=sometimes",
    ])
    func refusesBadAddresses(_ text: String) {
        #expect {
            try PostgresLocation(text, environment: [:])
        } throws: { error in
            guard let error = error as? PostgresError else { return false }
            return error.category == .configuration && error.description.contains(text) && !error.description.contains("\n")
        }
    }
}
