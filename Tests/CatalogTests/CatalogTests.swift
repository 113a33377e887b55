@testable import Catalog
import Failures
import Foundation
import GRDB
import Testing

@Suite("SQLite catalog")
struct CatalogTests {
    let path = NSTemporaryDirectory() + "darkroom-catalog-" + UUID().uuidString + "/catalog.sqlite"

    func picture(_ sha: String, name: String = "IMG.jpg") -> PictureRecord {
        PictureRecord(sha256: sha, sourceName: name, originalPath: "originals/\(sha).jpg", mimeType: "image/jpeg",
                      byteSize: 100, width: 40, height: 30, displayWidth: 40, displayHeight: 30, orientation: 1,
                      locationSource: "none", metadataJson: "{}", createdAt: 1)
    }

    func job(_ name: String, claim: String? = nil) -> JobRecord {
        JobRecord(sourceName: name, claimPath: claim ?? "processing/w/\(name)", sha256: nil, outcome: .added,
                  pictureId: nil, attempts: 1, error: nil, sidecarJson: nil, worker: "w", startedAt: 1, finishedAt: 2)
    }

    func variant(_ name: String) -> VariantRecord {
        VariantRecord(pictureId: 0, name: name, path: "variants/\(name)/x.jpg", width: 10, height: 10, bytes: 5, format: "jpeg")
    }

    @Test func aJobTallyCountsOnlyWhatWasAddedAndAgreesWithAWholeCount() throws {
        let catalog = try Catalog(path: path)
        let bounds: [Double] = [500, 1500]
        func failure(_ name: String, _ reason: String, _ category: FailureCategory, ms: Double) -> JobRecord {
            var failed = job(name)
            failed.outcome = .failed
            failed.error = reason
            failed.failureCategory = category.rawValue
            failed.finishedAt = failed.startedAt + ms / 1000
            return failed
        }
        let tally = JobTally(durationBoundsMs: bounds)
        #expect(try tally.figures(of: catalog) == catalog.jobFigures(durationBoundsMs: bounds))
        try catalog.recordFailure(failure("a.jpg", "not a JPEG or PNG", .unsupportedFormat, ms: 200))
        try catalog.recordFailure(failure("b.jpg", "took longer than 120 s", .timeout, ms: 1000))
        _ = try catalog.commitPicture(picture("aa"), variants: [], job: job("c.jpg"))
        let first = try tally.figures(of: catalog)
        #expect(first == (try catalog.jobFigures(durationBoundsMs: bounds)))
        #expect(first.count == 3 && first.outcomes[.failed] == 2 && first.outcomes[.added] == 1)
        #expect(first.failureCategories == ["unsupported_format": 1, "timeout": 1])

        // Another process adds jobs to the same catalog; the tally reads those alone.
        let other = try Catalog(path: path)
        try other.recordFailure(failure("d.jpg", "not a JPEG or PNG", .unsupportedFormat, ms: 2000))
        _ = try other.commitPicture(picture("bb"), variants: [], job: job("e.jpg"))
        let second = try tally.figures(of: catalog)
        #expect(second == (try catalog.jobFigures(durationBoundsMs: bounds)))
        #expect(second.count == 5 && second.failureCategories["unsupported_format"] == 2)
        let lastId = try catalog.read { db in try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM jobs") } ?? 0
        let nothingNew = try catalog.read { db in try JobRecord.figures(durationBoundsMs: bounds, afterId: lastId, in: db) }
        #expect(nothingNew.figures.count == 0 && nothingNew.lastId == lastId)
        #expect(try tally.figures(of: catalog) == second)
    }

    @Test func aNewCatalogIsAWALFileWithEveryTable() throws {
        let catalog = try Catalog(path: path)
        let mode = try catalog.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
        let tables = try catalog.read { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") }
        for table in ["jobs", "moment_candidates", "moment_invitees", "moments", "outbox", "pictures", "places", "variants"] {
            #expect(tables.contains(table), "\(table)")
        }
        // Opening again migrates nothing twice.
        _ = try Catalog(path: path)
    }

    @Test func commitWritesPictureVariantsJobAndEventTogether() throws {
        let catalog = try Catalog(path: path)
        let outcome = try catalog.commitPicture(picture("aa"), variants: [variant("thumb"), variant("feed")], job: job("a.jpg"))
        guard case .added(let id, nil) = outcome else {
            Issue.record("expected a new picture, got \(outcome)")
            return
        }
        #expect(try catalog.variants(ofPicture: id).map(\.name) == ["feed", "thumb"])
        #expect(try catalog.finishedJob(claimPath: "processing/w/a.jpg")?.pictureId == id)
        let events = try catalog.read { db in try OutboxEvent.all(in: db) }
        #expect(events.map(\.event) == [.pictureAdded])
        #expect(events.first?.payload.contains("\"picture_id\":\(id)") == true)
    }

    @Test func theSameBytesTwiceMakeOnePictureAndADuplicateJob() throws {
        let catalog = try Catalog(path: path)
        let first = try catalog.commitPicture(picture("bb", name: "one.jpg"), variants: [variant("thumb")], job: job("one.jpg"))
        var second = job("two.jpg")
        second.sidecarJson = #"{"author_id":"u2"}"#
        let again = try catalog.commitPicture(picture("bb", name: "two.jpg"), variants: [variant("thumb")], job: second)
        guard case .added(let id, _) = first else {
            Issue.record("expected a new picture")
            return
        }
        #expect(again == .duplicate(of: id))
        let counts = try catalog.counts()
        #expect(counts.pictures == 1)
        #expect(counts.variants == 1)
        #expect(counts.jobsAdded == 1)
        #expect(counts.jobsDuplicate == 1)
        let duplicate = try catalog.read { db in try JobRecord.filter(Column("source_name") == "two.jpg").fetchOne(db) }
        #expect(duplicate?.sidecarJson == #"{"author_id":"u2"}"#)
    }

    @Test func aFailedCommitLeavesNothingBehind() throws {
        let catalog = try Catalog(path: path)
        // Two variants with one name break the primary key midway through the transaction.
        #expect(throws: CatalogError.self) {
            try catalog.commitPicture(picture("cc"), variants: [variant("thumb"), variant("thumb")], job: job("c.jpg"))
        }
        let counts = try catalog.counts()
        #expect(counts.pictures == 0)
        #expect(counts.variants == 0)
        #expect(counts.jobsAdded == 0)
        #expect(counts.outboxPending == 0)
    }

    @Test func throughputCountsRecentJobs() throws {
        let catalog = try Catalog(path: path)
        var recent = job("r.jpg")
        recent.finishedAt = Date().timeIntervalSince1970
        try catalog.recordFailure(recent)
        try catalog.recordFailure(job("old.jpg"))
        let counts = try catalog.counts()
        #expect(counts.jobsFailed == 2)
        #expect(counts.finishedLastMinute == 1)
    }

    @Test func aFileThatIsNotACatalogIsRefusedWithAClearReason() throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x41, count: 4096))
        do {
            _ = try Catalog(path: path)
            Issue.record("opened a file that is not a catalog")
        } catch {
            #expect(error.description.contains(path))
            #expect(error.description.contains("not a Darkroom catalog"))
        }
    }
}

/// A coding key made from a string.
private struct Key: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

@Suite("Column names")
struct ColumnNameTests {
    @Test(arguments: [
        ("sidecarJson", "sidecar_json"), ("durationMs", "duration_ms"), ("sha256", "sha256"), ("feedCropX", "feed_crop_x"),
        ("id", "id"), ("imageURLPath", "image_url_path"), ("momentId", "moment_id"), ("capturedAt", "captured_at"),
    ])
    func propertyNamesBecomeTheSnakeCaseColumns(name: String, column: String) {
        #expect(ColumnName.snakeCase(name) == column)
    }

    /// The keys `value` encodes under Foundation's snake case and under `ColumnName`.
    func keys(_ value: any Encodable) throws -> (foundation: Set<String>, ours: Set<String>) {
        func encoded(_ strategy: JSONEncoder.KeyEncodingStrategy) throws -> Set<String> {
            let encoder = JSONEncoder()
            encoder.keyEncodingStrategy = strategy
            let object = try JSONSerialization.jsonObject(with: encoder.encode(value)) as? [String: Any]
            return Set(object?.keys.map { $0 } ?? [])
        }
        return (try encoded(.convertToSnakeCase), try encoded(.custom { path in Key(stringValue: ColumnName.snakeCase(path.last?.stringValue ?? "")) }))
    }

    @Test func everyRecordPropertyMapsToTheColumnFoundationWouldName() throws {
        let catalogTests = CatalogTests()
        var picture = catalogTests.picture("ab")
        picture.focalX = 0.5
        picture.feedCropX = 1
        let job = JobRecord(sourceName: "a.jpg", claimPath: "p/a.jpg", sha256: "ab", outcome: .failed, pictureId: 1, attempts: 2,
                            error: "bad", sidecarJson: "{}", worker: "h.1", startedAt: 1, finishedAt: 2)
        let event = OutboxEvent(event: .pictureAdded, momentId: 1, pictureId: 2, payload: "{}", createdAt: 3)
        for (foundation, ours) in [try keys(picture), try keys(job), try keys(event)] {
            #expect(foundation == ours)
            #expect(foundation.count >= 5)
        }
    }
}
