import Failures
import Foundation

/// The running tallies of an import, shared by the walking thread, the worker threads and the
/// progress display; it becomes the `ImportReport` at the end.
final class ImportLedger: @unchecked Sendable {
    // @unchecked: every mutable property is touched only while `lock` is held.
    private let lock = NSLock()
    private var report: ImportReport
    private var settled = 0
    private var processed = 0
    private var processingStarted = Date()

    init(_ report: ImportReport) {
        self.report = report
    }

    private func update(_ body: (inout ImportReport) -> Void) {
        lock.lock()
        body(&report)
        lock.unlock()
    }

    /// What a progress line shows, as of now.
    struct Snapshot: Sendable, Equatable {
        /// Photo files found by the walk.
        var total: Int
        /// Photo files settled: processed, or passed over (journal, type).
        var settled: Int
        /// Photos processed by this run (added, duplicates, failures).
        var processed: Int
        var failed: Int
        var duplicates: Int
        var skipped: Int
        /// Seconds since processing started.
        var elapsed: Double
    }

    func snapshot(now: Date = Date()) -> Snapshot {
        lock.lock()
        defer { lock.unlock() }
        return Snapshot(total: report.found, settled: settled, processed: processed, failed: report.failed,
                        duplicates: report.duplicates, skipped: report.skipped,
                        elapsed: now.timeIntervalSince(processingStarted))
    }

    /// The walk's count of photo files is known: processing starts now.
    func startProcessing(found: Int, at instant: Date = Date()) {
        lock.lock()
        report.found = found
        processingStarted = instant
        lock.unlock()
    }

    /// Records what a folder's walk passed over.
    func walked(_ folder: ImportFolder) {
        update { report in
            report.hiddenOrSystem += folder.hidden
            report.notFollowed += folder.skipped
        }
    }

    /// A file that is not a photo (or a sidecar with no photo): skipped, listed with its type.
    func skipped(_ file: String, type: String, countsAsPhotoFile: Bool) {
        update { report in
            report.skipped += 1
            report.skippedByType[type, default: []].append(file)
        }
        if countsAsPhotoFile { settle(processed: false) }
    }

    /// A photo the journal shows done; `deleted` when `--move` removed its source now.
    func alreadyImported(deleted: Bool) {
        update { report in
            report.alreadyImported += 1
            if deleted { report.sourcesDeleted += 1 }
        }
        settle(processed: false)
    }

    /// A photo that failed before and is not tried again.
    func failedBefore() {
        update { $0.previouslyFailed += 1 }
        settle(processed: false)
    }

    /// A photo processed into a new picture.
    func added(sidecars: [String], linked: Bool, deleted: Bool) {
        update { report in
            report.imported += 1
            if linked { report.linked += 1 } else { report.copied += 1 }
            if deleted { report.sourcesDeleted += 1 }
            Self.count(sidecars, in: &report)
        }
        settle(processed: true)
    }

    /// A photo whose bytes were already a picture.
    func duplicate(sidecars: [String], deleted: Bool) {
        update { report in
            report.duplicates += 1
            if deleted { report.sourcesDeleted += 1 }
            Self.count(sidecars, in: &report)
        }
        settle(processed: true)
    }

    /// A photo that failed, with its one-line reason.
    func failed(_ file: String, reason: String, category: FailureCategory) {
        update { report in
            report.failed += 1
            report.failedByCategory[category.rawValue, default: 0] += 1
            report.failedByReason[reason, default: []].append(file)
        }
        settle(processed: true)
    }

    /// A dry run's photo that would be processed.
    func wouldImport(sidecars: [String]) {
        update { report in
            report.imported += 1
            Self.count(sidecars, in: &report)
        }
        settle(processed: true)
    }

    /// A note on how originals are placed.
    func placementNote(_ note: String) {
        update { $0.placementNotes.append(note) }
    }

    private static func count(_ sidecars: [String], in report: inout ImportReport) {
        for used in sidecars {
            let kind = used.prefix { $0 != ":" }
            report.sidecars[String(kind), default: 0] += 1
        }
    }

    private func settle(processed wasProcessed: Bool) {
        lock.lock()
        settled += 1
        if wasProcessed { processed += 1 }
        lock.unlock()
    }

    /// The final report, as of `now`.
    func finish(interrupted: Bool, momentsCreated: Int, momentsWithImportedPictures: Int, importId: Int64?,
                startedAt: Date, now: Date = Date()) -> ImportReport {
        lock.lock()
        defer { lock.unlock() }
        var final = report
        final.interrupted = interrupted
        final.momentsCreated = momentsCreated
        final.momentsWithImportedPictures = momentsWithImportedPictures
        final.importId = importId
        final.seconds = now.timeIntervalSince(startedAt)
        let processing = now.timeIntervalSince(processingStarted)
        final.photosPerSecond = processing > 0 ? Double(processed) / processing : 0
        for key in final.failedByReason.keys { final.failedByReason[key]?.sort() }
        for key in final.skippedByType.keys { final.skippedByType[key]?.sort() }
        return final
    }
}
