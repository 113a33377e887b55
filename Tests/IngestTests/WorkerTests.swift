import Catalog
import Foundation
import GRDB
import Ingest
import Storage
import Synchronization
import Testing

/// The spool's worker in process, over a real spool, library and SQLite catalog.
@Suite("Spool worker")
struct WorkerTests {
    @Test func aDrainAddsGoodPhotosRecordsDuplicatesAndFailsTheRestWithTheirCategory() async throws {
        let stores = try Stores()
        let photo = try Samples.bytes("Landscape_6.jpg")
        try stores.spool.enqueue(bytes: photo, name: "one.jpg", sidecar: nil)
        try stores.spool.enqueue(bytes: photo, name: "again.jpg", sidecar: nil)
        try stores.spool.enqueue(bytes: try Samples.bytes("hopper.jpg"), name: "two.jpg", sidecar: nil)
        try stores.spool.enqueue(bytes: Array("%PDF-1.4 not a photo".utf8), name: "scan.jpg", sidecar: nil)
        try stores.spool.enqueue(bytes: Array(photo.prefix(photo.count / 4)), name: "cut.jpg", sidecar: nil)

        let worker = Worker(configuration: stores.configuration, spool: stores.spool, library: stores.library,
                            catalog: stores.catalog, logger: Stores.quiet)
        let tally = try await onOwnThread { worker.run(RunOptions(once: true, progress: false)) }

        #expect(tally.added == 2 && tally.duplicates == 1 && tally.failed == 2)
        #expect(stores.spool.depth() == (incoming: 0, processing: 0, failed: 2))
        let categories = Dictionary(uniqueKeysWithValues: stores.spool.failures().map { ($0.file, $0.category) })
        #expect(categories == ["scan.jpg": "unsupported_format", "cut.jpg": "bad_input"])
        let stored = try stores.catalog.read { db in
            try Row.fetchAll(db, sql: "SELECT source_name, failure_category FROM jobs WHERE outcome = 'failed' ORDER BY source_name")
                .map { "\($0["source_name"] as String): \($0["failure_category"] as String? ?? "none")" }
        }
        #expect(stored == ["cut.jpg: bad_input", "scan.jpg: unsupported_format"])
        let counts = try stores.catalog.counts()
        #expect(counts.pictures == 2 && counts.jobsDuplicate == 1 && counts.jobsFailed == 2)
        #expect(stores.libraryFiles().filter { $0.hasPrefix("originals/") }.count == 2)
    }

    @Test func aRunThroughABacklogStillTakesPhotosThatArriveDuringIt() async throws {
        // A run --once lists incoming/ again only when its queue runs low (or each scan
        // interval), not after every photo: what arrives meanwhile must still be taken.
        let stores = try Stores()
        let hopper = try Samples.bytes("hopper.jpg")
        for index in 0..<120 {
            try stores.spool.enqueue(bytes: hopper + Array("backlog \(index)".utf8), name: String(format: "b%03d.jpg", index), sidecar: nil)
        }
        let spool = stores.spool
        let worker = Worker(configuration: stores.configuration, spool: stores.spool, library: stores.library,
                            catalog: stores.catalog, logger: Stores.quiet) { name, _, _, _ in
            // Three arrivals while more than a hundred still wait.
            guard name == "b010.jpg" else { return }
            for index in 0..<3 {
                try? spool.enqueue(bytes: hopper + Array("late \(index)".utf8), name: "late\(index).jpg", sidecar: nil)
            }
        }
        let tally = try await onOwnThread { worker.run(RunOptions(once: true, progress: false)) }
        #expect(tally.added == 123 && tally.failed == 0, "\(tally)")
        #expect(stores.spool.depth() == (incoming: 0, processing: 0, failed: 0))
        let late = try stores.catalog.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM jobs WHERE source_name LIKE 'late%' AND outcome = 'added'")
        }
        #expect(late == 3)
    }

    @Test func aWatchingWorkerTakesArrivalsDuringItsBacklogAndAnUrgentOneAheadOfIt() async throws {
        // A watching daemon lists incoming/ on an arrival only as often as leaves the listing a
        // tenth of its time, and looks at priority/ on every wake: nothing that arrives is
        // left behind, and an urgent arrival goes ahead of the backlog.
        let stores = try Stores()
        let hopper = try Samples.bytes("hopper.jpg")
        let backlog = 400
        for index in 0..<backlog {
            try stores.spool.enqueue(bytes: hopper + Array("backlog \(index)".utf8), name: String(format: "b%03d.jpg", index), sidecar: nil)
        }
        let spool = stores.spool
        let order = Mutex<[String]>([])
        let worker = Worker(configuration: stores.configuration, spool: stores.spool, library: stores.library,
                            catalog: stores.catalog, logger: Stores.quiet) { name, _, _, _ in
            order.withLock { $0.append(name) }
            guard name == "b010.jpg" else { return }
            for index in 0..<3 {
                try? spool.enqueue(bytes: hopper + Array("late \(index)".utf8), name: "late\(index).jpg", sidecar: nil)
            }
            // As `enqueue --priority high` does: the photo comes into view, then its mark.
            if (try? spool.enqueue(bytes: hopper + Array("urgent".utf8), name: "urgent.jpg", sidecar: nil)) != nil {
                spool.markUrgent("urgent.jpg")
            }
        }
        let expected = backlog + 4
        let catalog = stores.catalog
        let stopper = Thread {
            for _ in 0..<1200 {
                if let counts = try? catalog.counts(), counts.pictures >= expected { break }
                usleep(50_000)
            }
            worker.stop()
        }
        stopper.start()
        let tally = try await onOwnThread { worker.run(RunOptions(once: false, progress: false)) }
        #expect(tally.added == expected && tally.failed == 0, "\(tally)")
        #expect(stores.spool.depth() == (incoming: 0, processing: 0, failed: 0))
        let taken = order.withLock { $0 }
        let arrival = try #require(taken.firstIndex(of: "b010.jpg"))
        let urgent = try #require(taken.firstIndex(of: "urgent.jpg"))
        // Two workers: the urgent photo is among the next few taken, far ahead of the backlog's end.
        #expect(urgent - arrival < backlog / 4, "urgent.jpg was taken \(urgent - arrival) photos after it arrived")
    }

    @Test func aTransientCatalogFailureIsRetriedByTheWorker() async throws {
        let stores = try Stores()
        try stores.spool.enqueue(bytes: try Samples.bytes("hopper.jpg"), name: "one.jpg", sidecar: nil)
        let busy = BusyFirstCatalog(stores.catalog, refusals: 1)
        let worker = Worker(configuration: stores.configuration, spool: stores.spool, library: stores.library,
                            catalog: busy, logger: Stores.quiet)
        let tally = try await onOwnThread { worker.run(RunOptions(once: true, progress: false)) }
        #expect(busy.refused)
        #expect(tally.added == 1 && tally.failed == 0)
        let attempts = try stores.catalog.read { db in try Int.fetchOne(db, sql: "SELECT attempts FROM jobs") }
        #expect(attempts == 2)
    }
}
