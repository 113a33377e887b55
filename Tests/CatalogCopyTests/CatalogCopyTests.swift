import Catalog
import CatalogCopy
import CatalogFixtures
import ChildProcesses
import Foundation
import GRDB
import Logging
import Moments
@testable import PostgresCatalog
import PostgresHarness
import PostgresStore
import Testing

/// What the copy tests share: the 2,000-picture source (made once per test process and only
/// read), a quiet logger, and the copy run in this process.
enum Copying {
    /// Whether the PostgreSQL catalog's schema has the webhook tables yet (their migration is
    /// its own); the source then has deliveries to copy.
    static let postgresHasWebhooks: Bool = {
        guard let location = try? SharedCluster.freshDatabase(), let catalog = try? PostgresCatalog(location: location, maximumConnections: 1)
        else { return false }
        defer { catalog.close() }
        return (try? StoreComparison.hasTable("webhook_deliveries", in: catalog)) ?? false
    }()

    static let large: Result<SourceCatalog, any Error> = {
        let made = Result { try SourceCatalog.make(pictures: 2_000, seed: 11, webhooks: postgresHasWebhooks) }
        atexit {
            if case .success(let source) = Copying.large { source.remove() }
        }
        return made
    }()

    static let quiet = Logger(label: "catalog-copy-test") { _ in SwiftLogNoOpLogHandler() }

    static func copy(_ source: SourceCatalog, to location: PostgresLocation,
                     batchSize: Int = CatalogCopy.defaultBatchSize) throws(CatalogCopyError) -> CatalogCopySummary {
        try CatalogCopy(sourcePath: source.path, target: location, batchSize: batchSize, logger: quiet)
            .run(progress: CopyProgress(style: .none, logger: quiet))
    }

    /// A writable duplicate of a source (SQLite's backup), for tests that go on writing to it.
    static func duplicate(_ source: SourceCatalog) throws -> SourceCatalog {
        let directory = NSTemporaryDirectory() + "darkroom-copy-dup-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var readOnly = Configuration()
        readOnly.readonly = true
        let from = try DatabaseQueue(path: source.path, configuration: readOnly)
        let to = try DatabaseQueue(path: directory + "/catalog.sqlite")
        try from.backup(to: to)
        try to.close()
        return SourceCatalog(catalog: try Catalog(path: directory + "/catalog.sqlite"), directory: directory)
    }

    /// New pictures of another seed, committed to a catalog as a worker would.
    static func commit(_ count: Int, seed: UInt64, to catalog: any PictureCatalog) throws -> [CommitOutcome] {
        try SyntheticOutings.pictures(seed: seed, count: count).enumerated().map { i, picture in
            let variant = VariantRecord(pictureId: 0, name: "thumb", path: "variants/thumb/\(picture.sha256).jpg", width: 320, height: 240,
                                        bytes: 99, format: "jpeg")
            return try catalog.commitPicture(picture, variants: [variant], job: SourceCatalog.job("new-\(seed)-\(i).jpg", outcome: .added))
        }
    }
}

@Suite("catalog copy into PostgreSQL", .enabled(if: SharedCluster.available, Comment(rawValue: SharedCluster.skipReason)))
struct CatalogCopyTests {
    @Test("a copy of 2,000 pictures answers every read as the SQLite catalog does, and goes on as it would")
    func copyAnswersTheSame() throws {
        let source = try Copying.large.get()
        let location = try SharedCluster.freshDatabase()
        let summary = try Copying.copy(source, to: location)
        print("catalog copy of 2,000 pictures: \(String(format: "%.2f", summary.seconds)) s (\(summary.line))")
        #expect(summary.start == .fresh && !summary.sourceChanged)
        #expect(summary.rows("pictures") == 2_000 && summary.rows("variants") == 4_000 && summary.rows("jobs") == 2_002)
        #expect((summary.rows("moment_invitees") ?? 0) == 1 && (summary.rows("moment_candidates") ?? 0) > 0)
        #expect((summary.rows("import_files") ?? 0) == 30 && summary.rows("imports") == 2)
        if Copying.postgresHasWebhooks {
            #expect((summary.rows("webhook_deliveries") ?? 0) > 240)
        }
        #expect(summary.line.hasSuffix("every count matches") && !summary.line.contains("\n"))

        let postgres = try PostgresCatalog(location: location, momentRules: source.catalog.momentRules)
        defer { postgres.close() }
        let compared = try StoreComparison(sqlite: source.catalog, postgres: postgres).compareEverything()
        #expect(compared > 2_000)
        let declared = try #require(try postgres.moment(id: SourceCatalog.momentId))
        let original = try source.catalog.moment(id: SourceCatalog.momentId)
        #expect(declared.coverSource == .creator && declared.coverPictureId != nil && declared.coverPictureId == original?.coverPictureId)
        #expect(try postgres.rebuildMoments(apply: false).isEmpty)

        // The same new photos into the source (a duplicate of it) and into the copy: the same
        // ids past the copied ones, the same moments, the same everything.
        let writable = try Copying.duplicate(source)
        defer { writable.remove() }
        let highest = try #require(try postgres.allPictures().compactMap(\.id).max())
        let added = try Copying.commit(60, seed: 99, to: postgres)
        #expect(try Copying.commit(60, seed: 99, to: writable.catalog) == added)
        guard case .added(let first, _) = added.first else {
            Issue.record("the first new picture was not added: \(String(describing: added.first))")
            return
        }
        #expect(first == highest + 1)
        try StoreComparison(sqlite: writable.catalog, postgres: postgres).compareEverything(pageSize: 50)
        #expect(try postgres.rebuildMoments(apply: false).isEmpty)
    }

    @Test("a copy killed midway (SIGKILL) and run again ends with the same catalog; a third run only checks it")
    func interruptedCopyResumes() throws {
        let source = try Copying.large.get()
        let location = try SharedCluster.freshDatabase()
        let url = location.description
        let pool = try PostgresPool(location: location, maximumConnections: 1)
        defer { pool.close() }
        func picturesCopied() throws -> Int64? {
            try pool.withSession { session in
                guard try session.value("SELECT to_regclass('catalog_copy_tables')::text", as: String.self) != nil else { return nil }
                return try session.value("SELECT rows_copied FROM catalog_copy_tables WHERE table_name = 'pictures'", as: Int64.self)
            }
        }

        // Small batches, so that the copy is killed between two of them, well inside the pictures.
        let output = NSTemporaryDirectory() + "darkroom-copy-out-" + UUID().uuidString
        defer { for suffix in [".out", ".err"] { try? FileManager.default.removeItem(atPath: output + suffix) } }
        let killed = try Command.start(["catalog", "copy", "--from", source.path, "--to", url, "--batch-size", "10"], output: output)
        let deadline = Date().addingTimeInterval(120)
        while (try picturesCopied() ?? 0) == 0 && killed.isRunning && Date() < deadline { usleep(2_000) }
        kill(killed.processIdentifier, SIGKILL)
        killed.waitForExit()
        #expect(killed.terminationReason == .uncaughtSignal, "the copy ended before it could be killed")
        let partial = try #require(try picturesCopied())
        #expect(partial > 0 && partial < 2_000, "killed after \(partial) pictures")
        let unfinished = try pool.withSession { session in
            try session.value("SELECT finished_at FROM catalog_copies", as: Double.self)
        }
        #expect(unfinished == nil)

        let again = try Command.run(["catalog", "copy", "--from", source.path, "--to", url])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("continued an interrupted copy") && again.stdout.contains("pictures 2000"), "\(again.stdout)")
        let postgres = try PostgresCatalog(location: location, momentRules: source.catalog.momentRules)
        defer { postgres.close() }
        try StoreComparison(sqlite: source.catalog, postgres: postgres).compareEverything(pageSize: 100)
        #expect(try postgres.rebuildMoments(apply: false).isEmpty)

        let third = try Command.run(["catalog", "copy", "--from", source.path, "--to", url])
        #expect(third.status == 0 && third.stdout.contains("already holds a finished copy"), "\(third.stdout) \(third.stderr)")
    }

    @Test("a catalog written while it is copied is copied as it was when the copy began, and the copy says so; run again, it copies it anew")
    func sourceWrittenDuringTheCopy() throws {
        let source = try SourceCatalog.make(pictures: 300, seed: 21, webhooks: Copying.postgresHasWebhooks)
        defer { source.remove() }
        let location = try SharedCluster.freshDatabase()
        let pool = try PostgresPool(location: location, maximumConnections: 1)
        defer { pool.close() }
        let outcome = Locked<Result<CatalogCopySummary, CatalogCopyError>?>(nil)
        let copying = Thread {
            let result = Result(catching: { () throws(CatalogCopyError) -> CatalogCopySummary in
                try CatalogCopy(sourcePath: source.path, target: location, batchSize: 3, logger: Copying.quiet)
                    .run(progress: CopyProgress(style: .none, logger: Copying.quiet))
            })
            outcome.set(result)
        }
        copying.start()
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            let copied = try pool.withSession { session -> Int64 in
                guard try session.value("SELECT to_regclass('catalog_copy_tables')::text", as: String.self) != nil else { return 0 }
                return try session.value("SELECT rows_copied FROM catalog_copy_tables WHERE table_name = 'pictures'", as: Int64.self) ?? 0
            }
            if copied > 0 { break }
            usleep(2_000)
        }
        _ = try Copying.commit(1, seed: 22, to: source.catalog)
        while outcome.value == nil { usleep(10_000) }
        let summary = try #require(outcome.value).get()
        #expect(summary.sourceChanged)
        #expect(summary.rows("pictures") == 300, "the snapshot's pictures, not the one committed meanwhile")

        let again = try Copying.copy(source, to: location)
        #expect(again.start == .restarted && again.rows("pictures") == 301 && !again.sourceChanged)
        let postgres = try PostgresCatalog(location: location, momentRules: source.catalog.momentRules)
        defer { postgres.close() }
        try StoreComparison(sqlite: source.catalog, postgres: postgres).compareEverything(pageSize: 100)
    }
}

/// The built `darkroom` binary, run as a child process with its output in files.
enum Command {
    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["DARKROOM_BIN"] { return path }
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("darkroom").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/darkroom").path
    }

    /// Starts `darkroom ARGS` with no catalog.url in its environment and the default settings.
    static func start(_ arguments: [String], output: String? = nil) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        for key in ["DARKROOM_CATALOG_URL", "DARKROOM_CONFIG", "PGPASSWORD"] { environment[key] = nil }
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        process.currentDirectoryURL = URL(fileURLWithPath: NSTemporaryDirectory())
        let stem = output ?? (NSTemporaryDirectory() + "darkroom-copy-out-" + UUID().uuidString)
        _ = FileManager.default.createFile(atPath: stem + ".out", contents: nil)
        _ = FileManager.default.createFile(atPath: stem + ".err", contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: stem + ".out")
        process.standardError = FileHandle(forWritingAtPath: stem + ".err")
        try process.run()
        return process
    }

    /// Runs `darkroom ARGS` to its end.
    static func run(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let stem = NSTemporaryDirectory() + "darkroom-copy-out-" + UUID().uuidString
        let process = try start(arguments, output: stem)
        process.waitForExit()
        defer { for suffix in [".out", ".err"] { try? FileManager.default.removeItem(atPath: stem + suffix) } }
        return (process.terminationStatus, (try? String(contentsOfFile: stem + ".out", encoding: .utf8)) ?? "",
                (try? String(contentsOfFile: stem + ".err", encoding: .utf8)) ?? "")
    }
}

/// A value one thread sets and another reads.
final class Locked<Value: Sendable>: @unchecked Sendable {  // safe: `stored` is touched only under `lock`
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value { lock.withLock { stored } }
    func set(_ value: Value) { lock.withLock { stored = value } }
}
