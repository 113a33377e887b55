import Catalog
import CatalogImports
import Foundation
import Logging
import Ingest
import Storage

extension Importer {
    /// Processes one photo file on a worker thread: sidecars, then the shared `PhotoProcessor`
    /// with the worker's retries for transient failures, then the journal, then (`--move`) the
    /// source's deletion.
    func handle(_ item: ImportItem, _ ledger: ImportLedger, _ progress: ImportProgress, importId: Int64?) {
        let started = Date()
        guard let services else { return rehearse(item, ledger) }
        if settledEarlier(item, ledger, importId: importId) { return }
        guard let sidecars = loadSidecars(item, started: started, ledger, progress, importId: importId) else { return }
        let input = PhotoInput(path: item.path, sourceName: item.sourceName, jobKey: item.jobKey, worker: identity.name,
                               sidecar: sidecars.sidecar, sidecarJson: sidecars.json, notes: sidecars.notes,
                               linkOriginal: item.linkOriginal)
        let tries = services.processor.withRetries(started: started, stop: stopSignal, failWhenStopped: false, retrying: { failure, attempt, delay in
            progress.aside {
                logger.warning("retrying after a transient failure", metadata: [
                    "file": "\(item.sourceName)", "attempt": "\(attempt)", "delay_s": "\(delay)", "reason": "\(failure.reason)"])
            }
        }) { attempt, deadline in
            try services.processor.process(input, attempt: attempt, deadline: deadline, startedAt: started)
        }
        switch tries {
        case .done(let outcome):
            finish(item, outcome, sidecars: sidecars, started: started, ledger, progress, importId: importId)
        case .failed(let failure, let attempts):
            fail(item, failure, attempts: attempts, sidecars: sidecars, started: started, ledger, progress, importId: importId)
        case .stopped(let failure, _):
            // Neither done nor failed: the next run takes it.
            progress.aside {
                logger.notice("photo left for the next run", metadata: ["file": "\(item.sourceName)", "reason": "\(failure.reason)"])
            }
        }
    }

    /// Whether a photo's commit (or its failure, unless retrying) is in the catalog already:
    /// a run killed between a commit and its journal row, or a photo another machine finished
    /// after an import was stopped. The job row tells what happened; the journal is brought up
    /// to date.
    func settledEarlier(_ item: ImportItem, _ ledger: ImportLedger, importId: Int64?) -> Bool {
        guard let services, let job = try? services.catalog.latestJob(claimPath: item.jobKey) else { return false }
        if job.outcome != .failed {
            record(item, outcome: job.outcome, job: job, sidecars: [], importId: importId)
            ledger.alreadyImported(deleted: deleteSourceIfMoving(item.path))
            return true
        }
        if !options.retryFailed {
            record(item, outcome: .failed, job: job, sidecars: [], importId: importId)
            ledger.failedBefore()
            return true
        }
        return false
    }

    /// A photo's sidecars, read and merged; nil when a malformed one failed the photo.
    func loadSidecars(_ item: ImportItem, started: Date, _ ledger: ImportLedger, _ progress: ImportProgress,
                      importId: Int64?) -> ImportSidecars? {
        do {
            return try ImportSidecars.load(directory: item.directory, photo: item.name, match: item.sidecars,
                                           author: options.author, zone: configuration.defaultTimeZone)
        } catch {
            fail(item, error, attempts: 1, sidecars: nil, started: started, ledger, progress, importId: importId)
            return nil
        }
    }

    /// Whether the library's original of a committed photo is its source's very file (linked),
    /// not a copy.
    func isLinked(_ item: ImportItem, job: JobRecord?) -> Bool {
        guard item.linkOriginal, let services, let sha256 = job?.sha256 else { return false }
        let original = services.library.absolute(Library.originalPath(sha256: sha256, extension: item.fileExtension))
        guard let a = FileSystem.identity(of: item.path), let b = FileSystem.identity(of: original) else { return false }
        return a == b
    }

    /// A dry run's photo: its sidecars are read (a malformed one would fail it), nothing written.
    private func rehearse(_ item: ImportItem, _ ledger: ImportLedger) {
        do {
            let sidecars = try ImportSidecars.load(directory: item.directory, photo: item.name, match: item.sidecars,
                                                   author: options.author, zone: configuration.defaultTimeZone)
            ledger.wouldImport(sidecars: sidecars.used)
        } catch {
            let failure = ProcessingFailure(error)
            ledger.failed(item.sourceName, reason: failure.reason, category: failure.category)
        }
    }

    private func finish(_ item: ImportItem, _ outcome: PhotoOutcome, sidecars: ImportSidecars, started: Date,
                        _ ledger: ImportLedger, _ progress: ImportProgress, importId: Int64?) {
        guard let services else { return }
        let job = try? services.catalog.latestJob(claimPath: item.jobKey)
        let linked = isLinked(item, job: job)
        record(item, outcome: outcome.jobOutcome, job: job,
               sidecars: sidecars.used, importId: importId)
        let deleted = deleteSourceIfMoving(item.path)
        var fields: Logger.Metadata = ["file": "\(item.sourceName)", "outcome": "\(outcome.label)",
                                       "ms": "\(Int(Date().timeIntervalSince(started) * 1000))"]
        switch outcome {
        case .added(let picture, let moment):
            ledger.added(sidecars: sidecars.used, linked: linked, deleted: deleted)
            fields["picture"] = "\(picture)"
            fields["moment"] = "\(moment.map(String.init) ?? "-")"
        case .duplicate(let picture):
            ledger.duplicate(sidecars: sidecars.used, deleted: deleted)
            fields["duplicate_of"] = "\(picture)"
        }
        if options.verbose { progress.aside { logger.info("photo", metadata: fields) } }
    }

    func fail(_ item: ImportItem, _ error: any Error, attempts: Int, sidecars: ImportSidecars?, started: Date,
                      _ ledger: ImportLedger, _ progress: ImportProgress, importId: Int64?) {
        guard let services else { return }
        let failure = ProcessingFailure(error)
        let reason = failure.reason
        let job = JobRecord(sourceName: item.sourceName, claimPath: item.jobKey, sha256: nil, outcome: .failed, pictureId: nil,
                            attempts: attempts, error: reason, sidecarJson: sidecars?.json, worker: identity.name,
                            startedAt: started.timeIntervalSince1970, finishedAt: Date().timeIntervalSince1970,
                            failureCategory: failure.category)
        do {
            try services.catalog.recordFailure(job)
        } catch {
            logger.error("cannot record a failure in the catalog", metadata: ["file": "\(item.sourceName)", "reason": "\(error)"])
        }
        record(item, outcome: .failed, job: try? services.catalog.latestJob(claimPath: item.jobKey),
               sidecars: sidecars?.used ?? [], importId: importId, error: reason)
        ledger.failed(item.sourceName, reason: reason, category: failure.category)
        progress.aside {
            logger.warning("photo", metadata: ["file": "\(item.sourceName)", "outcome": "failed", "reason": "\(reason)",
                                               "ms": "\(Int(Date().timeIntervalSince(started) * 1000))"])
        }
    }

    /// Writes the file's journal row. A lost row costs only speed: the job row stands in for it.
    func record(_ item: ImportItem, outcome: JobRecord.Outcome, job: JobRecord?, sidecars: [String],
                        importId: Int64?, error: String? = nil) {
        guard let services else { return }
        let sidecarList = sidecars.isEmpty ? nil
            : (try? JSONSerialization.data(withJSONObject: sidecars, options: [.withoutEscapingSlashes])).map { String(decoding: $0, as: UTF8.self) }
        let row = ImportFileRecord(sourcePath: item.path, directory: item.directory, size: item.size, modifiedNs: item.modifiedNs,
                                   outcome: outcome, sha256: job?.sha256, pictureId: job?.pictureId, jobId: job?.id,
                                   error: error ?? job?.error, sidecars: sidecarList, importId: importId,
                                   finishedAt: Date().timeIntervalSince1970)
        do {
            try services.catalog.recordImportedFile(row)
        } catch {
            logger.error("cannot write the import journal", metadata: ["file": "\(item.sourceName)", "reason": "\(error)"])
        }
    }
}

extension PhotoOutcome {
    /// The job outcome this photo outcome is recorded as.
    var jobOutcome: JobRecord.Outcome {
        switch self {
        case .added: .added
        case .duplicate: .duplicate
        }
    }
}
