import Failures
import Foundation
import Testing
@testable import LibraryImport

/// The two forms of an import's progress (the bar and the log line), the choice between them,
/// and the summary at the end.
@Suite("Import: progress and summary")
struct ImportProgressTests {
    static let midway = ImportLedger.Snapshot(total: 480, settled: 130, processed: 120, failed: 2, duplicates: 3, skipped: 10, elapsed: 40)

    @Test func theBarShowsDoneTotalRateEtaAndFailures() {
        #expect(ImportProgress.barLine(Self.midway, width: 8) == "[##......] 130/480  3.0 photos/s  ETA 1m57s  failed 2")
    }

    @Test func theRateCountsOnlyPhotosProcessedNotOnesSkippedAsDone() {
        // A resumed import skips 400 done photos at once: they must not inflate the rate.
        let resumed = ImportLedger.Snapshot(total: 500, settled: 410, processed: 10, failed: 0, duplicates: 0, skipped: 0, elapsed: 5)
        #expect(ImportProgress.barLine(resumed, width: 4) == "[###.] 410/500  2.0 photos/s  ETA 45s  failed 0")
    }

    @Test func beforeAnyPhotoTheEtaIsUnknownAndAtTheEndItIsZero() {
        let start = ImportLedger.Snapshot(total: 10, settled: 0, processed: 0, failed: 0, duplicates: 0, skipped: 0, elapsed: 0)
        #expect(ImportProgress.barLine(start, width: 4) == "[....] 0/10  0.0 photos/s  ETA --  failed 0")
        let end = ImportLedger.Snapshot(total: 10, settled: 10, processed: 10, failed: 1, duplicates: 0, skipped: 0, elapsed: 2)
        #expect(ImportProgress.barLine(end, width: 4) == "[####] 10/10  5.0 photos/s  ETA 0s  failed 1")
    }

    @Test func theLogLineCarriesTheSameFigures() {
        let fields = ImportProgress.logFields(Self.midway)
        #expect(fields["done"] == "130/480")
        #expect(fields["photos_per_second"] == "3.0")
        #expect(fields["eta"] == "1m57s")
        #expect(fields["failed"] == "2")
        #expect(fields["duplicates"] == "3")
        #expect(fields["skipped"] == "10")
    }

    @Test func autoIsABarOnATerminalAndLogLinesElsewhere() {
        #expect(ImportProgressStyle.auto.resolved(isTerminal: true) == .bar)
        #expect(ImportProgressStyle.auto.resolved(isTerminal: false) == .log)
        for forced in [ImportProgressStyle.bar, .log, .none] {
            #expect(forced.resolved(isTerminal: true) == forced)
            #expect(forced.resolved(isTerminal: false) == forced)
        }
    }

    @Test func theLedgerTalliesEveryOutcome() {
        let ledger = ImportLedger(ImportReport(roots: ["/l"], mode: .move, dryRun: false, startedAt: Date()))
        ledger.startProcessing(found: 6)
        ledger.added(sidecars: ["takeout:a.jpg.json"], linked: true, deleted: true)
        ledger.added(sidecars: ["xmp:b.xmp", "darkroom:b.jpg.json"], linked: false, deleted: true)
        ledger.duplicate(sidecars: [], deleted: true)
        ledger.failed("l/c.jpg", reason: "truncated", category: .badInput)
        ledger.skipped("l/d.txt", type: "plain text", countsAsPhotoFile: true)
        ledger.skipped("l/metadata.json", type: "a JSON file with no photo", countsAsPhotoFile: false)
        ledger.alreadyImported(deleted: false)
        let snapshot = ledger.snapshot()
        #expect(snapshot.settled == 6 && snapshot.processed == 4 && snapshot.failed == 1 && snapshot.skipped == 2)
        let report = ledger.finish(interrupted: false, momentsCreated: 2, momentsWithImportedPictures: 1, importId: 7, startedAt: Date())
        #expect(report.imported == 2 && report.duplicates == 1 && report.failed == 1 && report.alreadyImported == 1)
        #expect(report.linked == 1 && report.copied == 1 && report.sourcesDeleted == 3)
        #expect(report.sidecars == ["takeout": 1, "xmp": 1, "darkroom": 1])
        #expect(report.failedByReason == ["truncated": ["l/c.jpg"]])
        #expect(report.failedByCategory == ["bad_input": 1])
        #expect(report.skippedByType["plain text"] == ["l/d.txt"])
    }

    @Test func theSummaryAndTheJSONSayTheSame() throws {
        var report = ImportReport(roots: ["/photos"], mode: .copy, dryRun: false, startedAt: Date(timeIntervalSince1970: 0))
        report.found = 12
        report.imported = 8
        report.duplicates = 1
        report.failed = 1
        report.failedByReason = ["JPEG file is truncated": ["photos/broken.jpg"]]
        report.skipped = 7
        report.skippedByType = ["plain text": (1...6).map { "photos/n\($0).txt" }, "an MP4 video": ["photos/v.mp4"]]
        report.hiddenOrSystem = 3
        report.sidecars = ["takeout": 5, "xmp": 2]
        report.copied = 8
        report.momentsCreated = 3
        report.momentsWithImportedPictures = 3
        report.seconds = 75
        report.photosPerSecond = 0.133
        let text = report.summary()
        #expect(text.hasPrefix("import finished in 1m15s, 0.1 photos/s"))
        #expect(text.contains("  imported             8"))
        #expect(text.contains("      1 × JPEG file is truncated\n          photos/broken.jpg"))
        #expect(text.contains("      6 × plain text"))
        #expect(text.contains("… and 1 more (--report FILE lists all)"))
        #expect(text.contains("sidecars          takeout 5, xmp 2"))
        #expect(text.contains("moments created      3"))
        let decoded = try JSONDecoder().decode(ImportReport.self, from: Data(report.json().utf8))
        #expect(decoded == report)
        let keys = try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any]).keys
        #expect(keys.contains("failed_by_reason") && keys.contains("skipped_by_type") && keys.contains("moments_created"))
    }

    @Test func theQueueHoldsFewItemsAndDropsWaitingOnesOnStop() throws {
        let queue = ImportQueue(capacity: 2)
        let item = ImportItem(path: "/a", directory: "/", name: "a", sourceName: "a", size: 1, modifiedNs: 1,
                              fileExtension: "jpg", sidecars: nil, linkOriginal: false)
        #expect(queue.put(item) && queue.put(item))
        let third = Thread { _ = queue.put(item) }
        third.start()
        usleep(50_000)
        #expect(!third.isFinished, "a full queue makes the walk wait")
        #expect(queue.stop() == 2)
        while !third.isFinished { usleep(1_000) }
        #expect(queue.next() == nil)
        #expect(!queue.put(item))
    }
}
