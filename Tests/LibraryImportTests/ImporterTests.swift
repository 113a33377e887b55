import Catalog
import Foundation
import LibraryImport
import Logging
import Settings
import Storage
import Testing

/// The importer in process, over a real library and SQLite catalog.
@Suite("Importer")
struct ImporterTests {
    final class Place {
        let root = NSTemporaryDirectory() + "darkroom-importer-" + UUID().uuidString
        deinit { try? FileManager.default.removeItem(atPath: root) }

        func write(_ relative: String, _ bytes: [UInt8]) throws {
            let path = root + "/photos/" + relative
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
    }

    /// Runs an import on a thread of its own, off Swift's small concurrency pool.
    static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async throws -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    static func sample(_ name: String) throws -> [UInt8] {
        let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples").path
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: samples + "/" + name)))
    }

    @Test func anImportAddsPhotosRecordsDuplicatesAndCategorisesFailures() async throws {
        let place = Place()
        let photo = try Self.sample("Landscape_6.jpg")
        try place.write("2019/a.jpg", photo)
        try place.write("2019/copy-of-a.jpg", photo)
        try place.write("2020/b.jpg", try Self.sample("hopper.jpg"))
        try place.write("2020/broken.jpg", Array(photo.prefix(photo.count / 4)))
        try place.write("notes.txt", Array("not a photo".utf8))

        var configuration = Configuration.defaults
        configuration.libraryRoot = place.root + "/library"
        configuration.catalogPath = place.root + "/catalog.sqlite"
        configuration.concurrency = 1
        let library = try Library(root: configuration.libraryRoot, backupRoot: nil)
        let catalog = try Catalog(path: configuration.catalogPath)
        let importer = try Importer(configuration: configuration, options: ImportOptions(folders: [place.root + "/photos"], progress: .none),
                                    library: library, catalog: catalog,
                                    logger: Logger(label: "darkroom.test") { _ in SwiftLogNoOpLogHandler() })
        let report = try await Self.onOwnThread { importer.run() }

        #expect(report.imported == 2 && report.duplicates == 1 && report.failed == 1 && report.skipped == 1)
        #expect(report.failedByCategory == ["bad_input": 1])
        let failedFiles = report.failedByReason.values.flatMap { $0 }
        #expect(failedFiles.count == 1 && failedFiles.allSatisfy { $0.hasSuffix("2020/broken.jpg") })
        let counts = try catalog.counts()
        #expect(counts.pictures == 2 && counts.jobsFailed == 1)
        // A second run of the same folders adds nothing: the journal knows every file.
        let second = try Importer(configuration: configuration, options: ImportOptions(folders: [place.root + "/photos"], progress: .none),
                                 library: library, catalog: catalog,
                                 logger: Logger(label: "darkroom.test") { _ in SwiftLogNoOpLogHandler() })
        let again = try await Self.onOwnThread { second.run() }
        #expect(again.imported == 0 && again.alreadyImported == 3 && again.previouslyFailed == 1)
        #expect(try catalog.counts().pictures == 2)
    }
}
