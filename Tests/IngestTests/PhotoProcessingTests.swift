import Catalog
import Failures
import Foundation
import GRDB
import Imaging
import Ingest
import Storage
import Testing

/// Photo processing in process, against a real SQLite catalog and a temporary library: each
/// stage's failure carries its category, transient failures are retried, duplicates are
/// recorded, and nothing is left half-written.
@Suite("Photo processing")
struct PhotoProcessingTests {
    static let photo = "Landscape_6.jpg"

    func input(_ path: String, name: String = PhotoProcessingTests.photo) -> PhotoInput {
        PhotoInput(path: path, sourceName: name, jobKey: "test/" + UUID().uuidString, worker: "test", sidecar: nil, sidecarJson: nil)
    }

    func process(_ stores: Stores, _ path: String, catalog: (any PictureCatalog)? = nil) throws -> PhotoOutcome {
        try stores.processor(catalog: catalog).process(input(path), attempt: 1, deadline: Date().addingTimeInterval(60), startedAt: Date())
    }

    /// The category of the failure `body` throws, or nil when it throws none.
    func category(_ body: () throws -> PhotoOutcome) -> FailureCategory? {
        do {
            _ = try body()
            return nil
        } catch {
            return ProcessingFailure(error).category
        }
    }

    @Test func aPhotoIsAddedWithItsVariantsAndTheSameBytesAgainAreADuplicate() throws {
        let stores = try Stores()
        let path = try stores.file("a.jpg", try Samples.bytes(Self.photo))
        guard case .added(let id, _) = try process(stores, path) else {
            Issue.record("the first photo was not added")
            return
        }
        let files = stores.libraryFiles()
        #expect(files.filter { $0.hasPrefix("originals/") }.count == 1)
        #expect(files.filter { $0.hasPrefix("variants/") }.count == stores.configuration.variants.count)

        let copy = try stores.file("copy.jpg", try Samples.bytes(Self.photo))
        #expect(try process(stores, copy) == .duplicate(of: id))
        let outcomes = try stores.catalog.read { db in try String.fetchAll(db, sql: "SELECT outcome FROM jobs ORDER BY id") }
        #expect(outcomes == ["added", "duplicate"])
        #expect(stores.libraryFiles() == files, "a duplicate writes nothing")
    }

    @Test func bytesThatAreNotAPhotoAreAnUnsupportedFormat() throws {
        let stores = try Stores()
        let path = try stores.file("notes.jpg", Array("just some text, not a photo\n".utf8))
        #expect(category { try process(stores, path) } == .unsupportedFormat)
        #expect(stores.libraryFiles().isEmpty)
    }

    @Test func anEmptyOrTruncatedPhotoIsBadInput() throws {
        let stores = try Stores()
        let empty = try stores.file("empty.jpg", [])
        #expect(category { try process(stores, empty) } == .badInput)
        let whole = try Samples.bytes(Self.photo)
        let truncated = try stores.file("cut.jpg", Array(whole.prefix(whole.count / 3)))
        #expect(category { try process(stores, truncated) } == .badInput)
        #expect(stores.libraryFiles().isEmpty, "nothing of a failed photo is kept in the library")
    }

    @Test func aPhotoAboveThePixelLimitIsTooLarge() throws {
        let stores = try Stores { $0.pixelLimit = 10_000 }
        let path = try stores.file("big.jpg", try Samples.bytes(Self.photo))
        #expect(category { try process(stores, path) } == .tooLarge)
        #expect(stores.libraryFiles().isEmpty)
    }

    @Test func aRecipeThatCannotBeRenderedIsTheConfigurationsFault() throws {
        let stores = try Stores { $0.variants[0].quality = 0 }
        let path = try stores.file("a.jpg", try Samples.bytes(Self.photo))
        #expect(category { try process(stores, path) } == .configuration)
    }

    @Test func aPhotoPastItsDeadlineIsATimeoutAndCommitsNothing() throws {
        let stores = try Stores()
        let path = try stores.file("a.jpg", try Samples.bytes(Self.photo))
        do {
            // A deadline already past: the decoder stops at its first check.
            _ = try stores.processor().process(input(path), attempt: 1, deadline: Date().addingTimeInterval(-1), startedAt: Date())
            Issue.record("a photo past its deadline was processed")
        } catch {
            let failure = ProcessingFailure(error)
            #expect(failure.category == .timeout)
            #expect(!failure.isTransient)
            #expect(failure.reason.hasPrefix("took longer than 120 s (worker.photo_timeout_seconds) and was stopped"), "\(failure.reason)")
        }
        #expect(try stores.catalog.counts().pictures == 0)
        #expect(stores.libraryFiles().isEmpty)
        // With time to spare, the same photo is added: nothing of the stopped try is left in the way.
        guard case .added = try process(stores, path) else {
            Issue.record("the photo was not added with time to spare")
            return
        }
    }

    @Test func aBusyCatalogIsRetriedAndThePhotoLandsOnce() throws {
        let stores = try Stores()
        let busy = BusyFirstCatalog(stores.catalog, refusals: 2)
        let path = try stores.file("a.jpg", try Samples.bytes(Self.photo))
        let processor = stores.processor(catalog: busy)
        var retries: [FailureCategory] = []
        let tries = processor.withRetries(started: Date(), stop: StopSignal(), failWhenStopped: true,
                                          retrying: { failure, _, _ in retries.append(failure.category) }) { number, deadline in
            try processor.process(input(path), attempt: number, deadline: deadline, startedAt: Date())
        }
        guard case .done(.added) = tries else {
            Issue.record("the photo did not land: \(tries)")
            return
        }
        #expect(retries == [.catalog, .catalog])
        #expect(busy.refused)
        #expect(try stores.catalog.counts().pictures == 1)
        #expect(stores.libraryFiles().filter { $0.hasPrefix("originals/") }.count == 1, "retries store the original once")
    }

    @Test func aBusyCatalogThatOutlastsTheTriesFailsAsTheCatalogs() throws {
        let stores = try Stores { $0.maxAttempts = 2 }
        let busy = BusyFirstCatalog(stores.catalog, refusals: 5)
        let path = try stores.file("a.jpg", try Samples.bytes(Self.photo))
        let processor = stores.processor(catalog: busy)
        let tries = processor.withRetries(started: Date(), stop: StopSignal(), failWhenStopped: true, retrying: { _, _, _ in }) { number, deadline in
            try processor.process(input(path), attempt: number, deadline: deadline, startedAt: Date())
        }
        guard case .failed(let failure, let attempts) = tries else {
            Issue.record("expected a failure, got \(tries)")
            return
        }
        #expect(failure.category == .catalog && failure.isTransient && attempts == 2)
    }
}
