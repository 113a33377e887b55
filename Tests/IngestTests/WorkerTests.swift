import Catalog
import Foundation
import GRDB
import Ingest
import Storage
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
