import Catalog
import Foundation
import GRDB
import Testing

@Suite("darkroom run --once on a real spool", .serialized)
struct SpoolRunTests {
    /// Files the independent decoder read but Darkroom may refuse, each with the reason why.
    static let allowedRefusals: [String: String] = [
        "jpeg/libjpeg-turbo/monkey12.jpg": "12-bit JPEG: libjpeg-turbo's 8-bit API cannot decode it",
    ]

    @Test(.enabled(if: Corpus.isAvailable, "../shared/corpus not found: the corpus drain test needs it"))
    func theWholeCorpusWithBadFilesAndDuplicatesDrainsToOnePicturePerDistinctPhoto() throws {
        let space = try Workspace()
        let rows = try Corpus.images()
        for row in rows {
            let path = try #require(row["path"])
            try space.drop(Corpus.root + "/" + path, as: "corpus/" + path)
        }
        // Duplicates under other names, one with a sidecar that must not be lost.
        let good = rows.filter { ($0["notes"] ?? "").hasSuffix("Pillow decode ok") && ($0["format"] ?? "").hasPrefix("JPEG") }.prefix(5)
        for (i, row) in good.enumerated() {
            try space.drop(Corpus.root + "/" + (row["path"] ?? ""), as: "again/copy\(i).jpg")
        }
        try space.drop(bytes: Array(#"{"author_id": "dup-owner"}"#.utf8), as: "again/copy0.jpg.json")
        // Bad input of our own.
        try space.drop(bytes: [], as: "bad/empty.jpg")
        try space.drop(bytes: Array("just some notes\n".utf8), as: "bad/notes.txt")
        try space.drop(bytes: [0xFF, 0xD8, 0xFF, 0xE0, 0, 16] + Array(repeating: 0, count: 20), as: "bad/cut.jpg")
        let dropped = space.files(under: space.incoming).filter { !$0.hasSuffix(".json") }

        let result = try space.run(["run", "--once", "--no-progress"])
        #expect(result.status == 1, "a run with failed photos exits 1")

        // Nothing left in the spool but what failed, and nothing lost.
        #expect(space.files(under: space.incoming).isEmpty)
        #expect(space.files(under: space.spool + "/processing").isEmpty)
        // The worker's claim folder, kept from photo to photo, went with the run.
        #expect(try FileManager.default.contentsOfDirectory(atPath: space.spool + "/processing").isEmpty)
        let catalog = try space.catalog()
        let jobs = try catalog.read { db in try JobRecord.fetchAll(db) }
        #expect(Set(jobs.map(\.sourceName)) == Set(dropped), "one job per dropped photo")
        #expect(jobs.count == dropped.count)

        let failedFiles = space.files(under: space.spool + "/failed")
        for job in jobs where job.outcome == .failed {
            #expect(failedFiles.contains(job.sourceName), "\(job.sourceName) is kept in failed/")
            let reasonFile = space.spool + "/failed/" + job.sourceName + ".error.json"
            let data = try #require(FileManager.default.contents(atPath: reasonFile), "\(job.sourceName) has a reason file")
            let reason = try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["reason"] as? String)
            #expect(!reason.isEmpty && !reason.contains("\n"), "one-line reason for \(job.sourceName): \(reason)")
        }
        for name in ["bad/empty.jpg", "bad/notes.txt", "bad/cut.jpg"] {
            #expect(jobs.first { $0.sourceName == name }?.outcome == .failed, "\(name) fails")
        }
        #expect(jobs.first { $0.sourceName == "bad/notes.txt" }?.error?.contains("not a JPEG, PNG, HEIC, HEIF or AVIF") == true)

        // Every photo the independent decoder read is a picture (or an allowed refusal).
        for row in rows where (row["notes"] ?? "").hasSuffix("Pillow decode ok") {
            let name = "corpus/" + (row["path"] ?? "")
            guard Self.allowedRefusals[row["path"] ?? ""] == nil else { continue }
            let job = jobs.first { $0.sourceName == name }
            #expect(job?.outcome == .added || job?.outcome == .duplicate, "\(name): \(job?.error ?? "no job")")
        }

        // One picture per distinct good photo; copies are duplicates, and keep their sidecar.
        let pictures = try catalog.read { db in try PictureRecord.fetchAll(db) }
        let goodHashes = Set(jobs.filter { $0.outcome != .failed }.compactMap(\.sha256))
        #expect(pictures.count == goodHashes.count)
        #expect(Set(pictures.map(\.sha256)) == goodHashes)
        for (i, row) in good.enumerated() {
            // Whichever of the two came first is the picture; the other is its duplicate.
            let pair = [jobs.first { $0.sourceName == "again/copy\(i).jpg" }, jobs.first { $0.sourceName == "corpus/" + (row["path"] ?? "") }]
            #expect(Set(pair.compactMap { $0?.outcome }) == [.added, .duplicate], "\(row["path"] ?? "")")
            #expect(pair[0]?.pictureId != nil && pair[0]?.pictureId == pair[1]?.pictureId)
        }
        #expect(jobs.first { $0.sourceName == "again/copy0.jpg" }?.sidecarJson?.contains("dup-owner") == true)

        // Every catalogued file is on disk as recorded.
        let variants = try catalog.read { db in try VariantRecord.fetchAll(db) }
        #expect(variants.count == pictures.count * 4)
        for variant in variants {
            let size = (try? FileManager.default.attributesOfItem(atPath: space.library + "/" + variant.path)[.size] as? Int) ?? -1
            #expect(size == Int(variant.bytes), "\(variant.path)")
            #expect(variant.width > 0 && variant.height > 0)
        }
        for picture in pictures {
            let size = (try? FileManager.default.attributesOfItem(atPath: space.library + "/" + picture.originalPath)[.size] as? Int) ?? -1
            #expect(size == Int(picture.byteSize), "original of \(picture.sourceName)")
        }
        // The log has one line per photo with its outcome.
        let photoLines = result.stderr.split(separator: "\n").filter { $0.contains(" outcome=") }
        #expect(photoLines.count == dropped.count)
    }

    @Test(arguments: CatalogKind.available) func aCleanRunExitsZeroAndSidecarFieldsReachTheCatalog(store: CatalogKind) throws {
        let space = try Workspace(store: store)
        let sample = Workspace.packageRoot + "/samples/issue-exifr-59.jpg"
        try space.drop(sample, as: "IMG_1.jpg")
        try space.drop(bytes: Array(#"{"author_id": "u42", "title": "Half Dome"}"#.utf8), as: "IMG_1.jpg.json")
        let result = try space.run(["run", "--once", "--no-progress"])
        #expect(result.status == 0, "\(result.stderr)")
        let picture = try #require(try space.records().pictures.first)
        #expect(picture.authorId == "u42")
        #expect(picture.title == "Half Dome")
        #expect(abs((picture.latitude ?? 0) - 37.746765) < 1e-6)
        #expect(abs((picture.longitude ?? 0) - -119.5298833) < 1e-6)
        #expect(picture.feedCropWidth != nil)
        #expect(space.files(under: space.incoming).isEmpty)
    }
}
