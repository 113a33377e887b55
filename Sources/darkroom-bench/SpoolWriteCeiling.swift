import BenchInputs
import BenchKit
import Foundation
import Storage

/// How fast this machine's disk takes the spool's durable writes with no HTTP and no workers:
/// `writers` threads, each enqueueing photos back to back with `Spool.enqueue` (the very write
/// that `POST /v1/uploads` makes before it answers). It bounds what any number of clients
/// posting back to back can see: a POST cannot be answered before its photo is on the disk.
enum SpoolWriteCeiling {
    struct Figures {
        let writesPerSecond: Double
        let medianMilliseconds: Double
        let p99Milliseconds: Double
        let count: Int
    }

    static func measure(directory: URL, writers: Int, writesEach: Int, photos: [[UInt8]]) throws -> Figures {
        let spool: Spool
        do {
            spool = try Spool(root: directory.path, settleSeconds: 0)
        } catch {
            throw BenchError("cannot make a spool in \(directory.path): \(error)")
        }
        let sidecar = Array(#"{"author_id":"bench"}"#.utf8)
        let results = Results()
        let started = Machine.now()
        let threads = (0..<writers).map { writer in
            Thread {
                for number in 0..<writesEach {
                    let index = writer * writesEach + number
                    let bytes = PhotoSet.distinct(photos[index % photos.count], index: index)
                    let start = Machine.now()
                    do {
                        _ = try spool.enqueue(bytes: bytes, name: "ceiling-\(index).jpg", sidecar: sidecar)
                        results.add(.success(Machine.now() - start))
                    } catch {
                        results.add(.failure(error))
                    }
                }
            }
        }
        threads.forEach { $0.start() }
        while threads.contains(where: { !$0.isFinished }) { usleep(5_000) }
        let elapsed = Machine.now() - started
        let seconds = try results.seconds()
        defer { try? FileManager.default.removeItem(at: directory) }
        return Figures(writesPerSecond: Double(seconds.count) / elapsed,
                       medianMilliseconds: HTTPBenchmark.percentile(seconds, 0.5) * 1000,
                       p99Milliseconds: HTTPBenchmark.percentile(seconds, 0.99) * 1000, count: seconds.count)
    }

    /// The writers' durations, gathered across threads.
    final class Results: @unchecked Sendable {
        // @unchecked: every access holds `lock`.
        private var outcomes: [Result<Double, any Error>] = []
        private let lock = NSLock()

        func add(_ outcome: Result<Double, any Error>) {
            lock.withLock { outcomes.append(outcome) }
        }

        func seconds() throws -> [Double] {
            try lock.withLock { try outcomes.map { outcome in
                do {
                    return try outcome.get()
                } catch {
                    throw BenchError("the spool write failed: \(error)")
                }
            } }
        }
    }
}
