import BenchKit
import Dispatch
import Foundation
import PostgresHarness
import PostgresQueue
import PostgresStore

/// `darkroom-bench queue`: the PostgreSQL job queue alone, no rendering. Claimers in one process,
/// each with a connection of its own, run claim, renew, complete cycles against a loopback
/// server with fsync on (a cycle is three committed transactions), for a few seconds at each
/// claimer count.
public enum QueueBenchmark {
    /// Cycles a second with 16 claimers: room for a hundred machines at ten photos a second.
    public static let cyclesTarget = 2000.0

    public struct Options: Sendable {
        public var claimers = [1, 4, 16]
        public var seconds = 5.0

        public init() {}

        public init(_ arguments: BenchArguments) throws {
            try arguments.check(valueFlags: ["--claimers", "--seconds"])
            claimers = try arguments.ints("--claimers", default: claimers)
            seconds = Double(try arguments.int("--seconds", default: Int(seconds), in: 1...600))
        }
    }

    public static func run(_ options: Options) throws -> [Verdict] {
        print("## queue: claim, renew, complete cycles in PostgreSQL (no rendering)\n")
        let cluster = try BenchCluster.start(durable: true)
        defer { cluster.stop() }
        let location = try cluster.freshDatabase(prefix: "queue")
        print("A temporary cluster on loopback (\(location)), fsync and synchronous_commit on, load \(Machine.loadAverage()).")
        print("Each claimer runs on its own task with a pooled connection; before each count, the queue is filled with")
        print("more jobs than it can take. A claim and a renewal commit without waiting for the disk; a completion waits.\n")
        var rows: [[String]] = []
        var atMost = 0.0
        var largest = 0
        for claimers in options.claimers {
            let cycles = try blocking { try await measure(location: location, claimers: claimers, seconds: options.seconds) }
            let rate = Double(cycles) / options.seconds
            rows.append(["\(claimers)", "\(cycles)", Table.number(rate, 0), Table.number(1000 * Double(claimers) / max(rate, 1), 2)])
            if claimers >= largest { largest = claimers; atMost = rate }
        }
        Table.print(header: ["claimers", "cycles", "cycles/s", "ms per cycle per claimer"], rows: rows)
        print("")
        return [Verdict(section: "queue", measure: "claim+renew+complete cycles/s, \(largest) claimers, fsync on",
                        figure: Table.number(atMost, 0), target: "≥ \(Int(cyclesTarget))",
                        passed: largest >= 16 ? atMost >= cyclesTarget : nil)]
    }

    /// Completed cycles of `claimers` claimers in `seconds`.
    static func measure(location: PostgresLocation, claimers: Int, seconds: Double) async throws -> Int {
        let queue = JobQueue(location: location, maximumConnections: claimers + 2)
        defer { queue.close() }
        try await queue.migrate()
        // More jobs than the claimers can take in the time (in one statement, not timed), so
        // that the queue never runs dry.
        let jobs = Int(seconds * 20_000)
        let pool = try PostgresPool(location: location, maximumConnections: 1)
        defer { pool.close() }
        try pool.withSession { session in
            try session.execute("TRUNCATE queue_jobs")
            try session.execute("""
                INSERT INTO queue_jobs (kind, payload) SELECT 'photo', 'bench-' || n FROM generate_series(1, \(jobs)) AS n
                """)
            try session.execute("ANALYZE queue_jobs")
        }
        let deadline = Machine.now() + seconds
        return try await withThrowingTaskGroup(of: Int.self) { group in
            for claimer in 0..<claimers {
                group.addTask {
                    var done = 0
                    while Machine.now() < deadline {
                        guard let job = try await queue.claim(owner: "bench-\(claimer)", lease: 30) else { break }
                        guard try await queue.renew(job, lease: 30), try await queue.complete(job) else {
                            throw BenchError("claimer \(claimer) lost job \(job.id)")
                        }
                        done += 1
                    }
                    return done
                }
            }
            return try await group.reduce(0, +)
        }
    }

    /// Runs async work from the benchmark's synchronous main thread.
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<T>()
        Task {
            do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
            done.signal()
        }
        done.wait()
        guard let result = box.result else { throw BenchError("the measurement produced no result") }
        return try result.get()
    }
}

/// The result of a task, handed to the waiting thread (written before the semaphore's signal,
/// read after its wait).
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
