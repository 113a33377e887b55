import Catalog
import CatalogImports
import ChildProcesses
import Foundation
import GRDB
import PostgresCatalog
import PostgresHarness
import PostgresStore
import Testing

/// The catalog store an end-to-end test runs the binary against: the spool worker's behaviour
/// tests run on both.
enum CatalogKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    /// SQLite always; PostgreSQL where its server programs are installed (`make deps`).
    static var available: [CatalogKind] { SharedCluster.available ? allCases : [.sqlite] }
}

/// A temporary spool, library and catalog with its own pipeline.json, and the built `darkroom`
/// binary to run against them: the end-to-end tests use only real files, a real SQLite file and
/// real processes.
final class Workspace: Sendable {
    let root: String
    let configPath: String
    /// The PostgreSQL catalog the binary is pointed at (`DARKROOM_CATALOG_URL`), or nil for the
    /// SQLite file at `catalogPath`.
    let postgres: PostgresLocation?

    var spool: String { root + "/spool" }
    var incoming: String { spool + "/incoming" }
    var library: String { root + "/library" }
    var catalogPath: String { root + "/catalog.sqlite" }

    /// `maxRecoveries`: how many deaths of its worker a photo outlives (`worker.max_recoveries`;
    /// the default when nil).
    /// `bucket`: the library in that bucket (`library.url` and its endpoint, path-style) instead
    /// of the directory.
    init(settleSeconds: Double = 0, leaseSeconds: Double = 60, concurrency: Int = 2, scanInterval: Double = 0.2,
         maxRecoveries: Int? = nil, store: CatalogKind = .sqlite, bucket: (url: String, endpoint: String)? = nil) throws {
        postgres = store == .postgres ? try SharedCluster.freshDatabase() : nil
        root = NSTemporaryDirectory() + "darkroom-e2e-" + UUID().uuidString
        configPath = root + "/pipeline.json"
        try? FileManager.default.createDirectory(atPath: root + "/spool/incoming", withIntermediateDirectories: true)
        let config = """
        {
          "spool": {"root": "\(root)/spool", "settle_seconds": \(settleSeconds), "lease_seconds": \(leaseSeconds), "scan_interval_seconds": \(scanInterval)},
          "library": {"root": "\(root)/library"\(bucket.map { #", "url": "\#($0.url)", "s3": {"endpoint": "\#($0.endpoint)", "path_style": true}"# } ?? "")},
          "catalog": {"path": "\(root)/catalog.sqlite"},
          "worker": {"concurrency": \(concurrency), "retry_base_seconds": 0.05\(maxRecoveries.map { ", \"max_recoveries\": \($0)" } ?? "")}
        }
        """
        _ = FileManager.default.createFile(atPath: configPath, contents: Data(config.utf8))
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// The package's root directory.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The built `darkroom` binary: `$DARKROOM_BIN`, else the one beside the test bundle.
    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["DARKROOM_BIN"] { return path }
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("darkroom").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        return packageRoot + "/.build/debug/darkroom"
    }

    /// Copies a file into `incoming/` under `name` (folders created).
    func drop(_ source: String, as name: String) throws {
        let destination = incoming + "/" + name
        try FileManager.default.createDirectory(atPath: (destination as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: source, toPath: destination)
    }

    /// Writes bytes into `incoming/` under `name`.
    func drop(bytes: [UInt8], as name: String) throws {
        let destination = incoming + "/" + name
        try FileManager.default.createDirectory(atPath: (destination as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: destination, contents: Data(bytes)) else { throw CocoaError(.fileWriteUnknown) }
    }

    /// Starts `darkroom ARGS --config pipeline.json`, its output going to files (never pipes, so
    /// that no amount of output can block it).
    func start(_ arguments: [String], environment extra: [String: String] = [:]) throws -> Launched {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments + ["--config", configPath]
        // A crash ends the child at once with its signal, instead of waiting on a backtrace.
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        if let postgres { environment["DARKROOM_CATALOG_URL"] = postgres.description }
        environment.merge(extra) { _, new in new }
        process.environment = environment
        let stem = root + "/out-" + UUID().uuidString
        _ = FileManager.default.createFile(atPath: stem + ".out", contents: nil)
        _ = FileManager.default.createFile(atPath: stem + ".err", contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: stem + ".out")
        process.standardError = FileHandle(forWritingAtPath: stem + ".err")
        try process.run()
        return Launched(process: process, stem: stem)
    }

    /// Runs `darkroom ARGS --config pipeline.json` to the end.
    @discardableResult
    func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, stdout: String, stderr: String) {
        let launched = try start(arguments, environment: environment)
        launched.process.waitForExit()
        return (launched.process.terminationStatus, launched.stdout, launched.stderr)
    }

    /// The catalog, opened read-write like a worker would.
    func catalog() throws -> Catalog {
        try Catalog(path: catalogPath)
    }

    /// Every picture, job and variant of the catalog the binary wrote, whichever store it is.
    func records() throws -> (pictures: [PictureRecord], jobs: [JobRecord], variants: [VariantRecord]) {
        guard let postgres else {
            return try catalog().read { db in
                (try PictureRecord.fetchAll(db), try JobRecord.fetchAll(db), try VariantRecord.fetchAll(db))
            }
        }
        let catalog = try PostgresCatalog(location: postgres, maximumConnections: 2)
        defer { catalog.close() }
        let pictures = try catalog.allPictures()
        return (pictures, try catalog.allJobs(), try pictures.flatMap { try catalog.variants(ofPicture: $0.id ?? 0) })
    }

    /// The import journal, whichever store it is in.
    func importJournal() throws -> [ImportFileRecord] {
        guard let postgres else { return try catalog().read { db in try ImportFileRecord.fetchAll(db) } }
        let catalog = try PostgresCatalog(location: postgres, maximumConnections: 1)
        defer { catalog.close() }
        let pool = try PostgresPool(location: postgres, maximumConnections: 1)
        defer { pool.close() }
        let directories = try pool.withSession { session in
            try session.values("SELECT DISTINCT directory FROM import_files", as: String.self)
        }
        return try directories.flatMap { try catalog.importedFiles(inDirectory: $0).values }
    }

    /// Every regular file under a directory, relative to it.
    func files(under directory: String) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return [] }
        var found: [String] = []
        while let relative = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue {
                found.append(relative)
            }
        }
        return found.sorted()
    }
}

/// The shared real-photo corpus beside the project, when it is there.
enum Corpus {
    static var root: String {
        ProcessInfo.processInfo.environment["DARKROOM_CORPUS"] ?? (Workspace.packageRoot + "/../shared/corpus")
    }

    static var isAvailable: Bool {
        FileManager.default.fileExists(atPath: root + "/MANIFEST.tsv")
    }

    /// MANIFEST.tsv rows as dictionaries by column name.
    static func manifest() throws -> [[String: String]] {
        let text = try String(contentsOfFile: root + "/MANIFEST.tsv", encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        let header = lines.removeFirst()
        return lines.map { Dictionary(uniqueKeysWithValues: zip(header, $0 + Array(repeating: "", count: max(0, header.count - $0.count)))) }
    }

    /// Rows that are images (not licence or readme files).
    static func images() throws -> [[String: String]] {
        try manifest().filter { !($0["format"] ?? "").hasPrefix("text/") }
    }
}

/// A started `darkroom` process and the files its output goes to.
struct Launched {
    let process: Process
    let stem: String

    var stdout: String { (try? String(contentsOfFile: stem + ".out", encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: stem + ".err", encoding: .utf8)) ?? "" }

    /// Waits for the end and returns the log (standard error).
    func finish() -> String {
        process.waitForExit()
        return stderr
    }
}
