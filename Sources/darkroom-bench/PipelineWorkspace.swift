import BenchInputs
import BenchKit
import Catalog
import Foundation
import PostgresCatalog
#if canImport(Glibc)
import Glibc
#endif

/// A temporary spool, library and catalog with their own `pipeline.json`, for one
/// `darkroom run --once`.
struct PipelineWorkspace {
    let root: URL
    var incoming: URL { root.appendingPathComponent("spool/incoming") }
    var failed: URL { root.appendingPathComponent("spool/failed") }
    var library: URL { root.appendingPathComponent("library") }
    var catalogPath: String { root.appendingPathComponent("catalog.sqlite").path }
    var configuration: URL { root.appendingPathComponent("pipeline.json") }
    var log: String { root.appendingPathComponent("darkroom.log").path }
    /// A PostgreSQL catalog in place of the SQLite file, when set.
    let catalogURL: String?

    /// Creates the folders and a `pipeline.json` with absolute paths: photos are taken as soon
    /// as they are in `incoming/` (settle_seconds 0), `workers` workers (nil: darkroom's default
    /// for the catalog), the `extra` sections (such as `server`), every other key its default.
    /// With `catalogURL`, the catalog is that PostgreSQL database instead of the SQLite file.
    init(root: URL, workers: Int?, catalogURL: String? = nil, extra: [String: Any] = [:]) throws {
        self.root = root
        self.catalogURL = catalogURL
        try FileManager.default.createDirectory(at: incoming, withIntermediateDirectories: true)
        let configuration: [String: Any] = [
            "spool": ["root": root.appendingPathComponent("spool").path, "settle_seconds": 0],
            "library": ["root": library.path],
            "catalog": ["path": catalogPath, "url": catalogURL.map { $0 as Any } ?? NSNull()] as [String: Any],
            "worker": ["concurrency": workers ?? 0],
        ].merging(extra) { _, new in new }
        let data = try JSONSerialization.data(withJSONObject: configuration, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: self.configuration)
    }

    /// Writes `count` distinct photos into `incoming/`, cycling through `photos` and making each
    /// copy distinct (`PhotoSet.distinct`), then flushes them to disk (`sync`) so that the run
    /// does not pay for writing its own input back. Returns the bytes written.
    func fill(count: Int, from photos: [[UInt8]]) throws -> Int64 {
        var total: Int64 = 0
        for index in 0..<count {
            let bytes = PhotoSet.distinct(photos[index % photos.count], index: index)
            let file = incoming.appendingPathComponent(String(format: "photo-%05d.jpg", index))
            do {
                try Data(bytes).write(to: file)
            } catch {
                throw BenchError("cannot write \(file.path): \(error.localizedDescription)")
            }
            total += Int64(bytes.count)
        }
        sync()
        return total
    }

    /// The folder tree `fillLibrary` writes, as a photo library to import.
    var photoLibrary: URL { root.appendingPathComponent("photos") }

    /// Writes the same `count` distinct photos as `fill` into a library tree of nested folders
    /// (`photos/2019/month-03/day-07/IMG_0123.jpg`, `perFolder` to a folder), flushed to disk.
    /// Returns the bytes written.
    func fillLibrary(count: Int, from photos: [[UInt8]], perFolder: Int = 40) throws -> Int64 {
        var total: Int64 = 0
        for index in 0..<count {
            let folder = index / perFolder
            let directory = photoLibrary.appendingPathComponent(String(format: "%d/month-%02d/day-%02d", 2015 + folder / 120, folder / 30 % 4 + 1, folder % 30 + 1))
            let file = directory.appendingPathComponent(String(format: "IMG_%05d.jpg", index))
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try Data(PhotoSet.distinct(photos[index % photos.count], index: index)).write(to: file)
            } catch {
                throw BenchError("cannot write \(file.path): \(error.localizedDescription)")
            }
            total += Int64(photos[index % photos.count].count)
        }
        sync()
        return total
    }

    /// Runs `darkroom import` of `photoLibrary` into this workspace's library and catalog.
    func runImport(darkroom: URL, workers: Int) throws -> ChildProcess.Result {
        try ChildProcess.run(darkroom.path, ["import", photoLibrary.path, "--config", configuration.path, "--copy",
                                             "--concurrency", String(workers), "--progress", "none"],
                             stdout: log + ".out", stderr: log)
    }

    /// Runs `darkroom run --once` on this workspace, with `workers` workers (nil: darkroom's
    /// default for the catalog); its log goes to `darkroom.log`.
    func run(darkroom: URL, workers: Int?) throws -> ChildProcess.Result {
        try ChildProcess.run(darkroom.path, ["run", "--once", "--config", configuration.path, "--no-progress"]
                             + (workers.map { ["--concurrency", String($0)] } ?? []),
                             stderr: log)
    }

    /// Checks that the run added every photo: the catalog holds `expected` pictures and no
    /// failed job, and the spool is empty.
    func verify(expected: Int, run: ChildProcess.Result) throws {
        let tail = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").suffix(3).joined(separator: " / ")
        guard run.status == 0 else { throw BenchError("darkroom run --once exited with status \(run.status); its log ends: \(tail)") }
        let counts: CatalogCounts
        do {
            if let catalogURL {
                let catalog = try PostgresCatalog(url: catalogURL)
                defer { catalog.close() }
                counts = try catalog.counts()
            } else {
                counts = try Catalog(path: catalogPath).counts()
            }
        } catch {
            throw BenchError("cannot read the run's catalog \(catalogURL ?? catalogPath): \(error)")
        }
        let left = (try? FileManager.default.contentsOfDirectory(atPath: incoming.path).count) ?? 0
        let failures = (try? FileManager.default.contentsOfDirectory(atPath: failed.path).count) ?? 0
        guard counts.pictures == expected, counts.jobsFailed == 0, counts.jobsDuplicate == 0, left == 0, failures == 0 else {
            throw BenchError("the run added \(counts.pictures) of \(expected) photos (\(counts.jobsDuplicate) duplicates, \(counts.jobsFailed) failed, "
                             + "\(left) left in incoming/, \(failures) files in failed/); its log ends: \(tail)")
        }
    }

    /// Removes the library, catalog and spool of a run, keeping the photos and configuration,
    /// so that a second run starts as fresh as the first.
    func clearOutputs() throws {
        for path in [library.path, root.appendingPathComponent("spool").path, catalogPath, catalogPath + "-wal", catalogPath + "-shm", catalogPath + ".lock"] {
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
        }
        try FileManager.default.createDirectory(at: incoming, withIntermediateDirectories: true)
    }

    /// Removes everything.
    func remove() {
        try? FileManager.default.removeItem(at: root)
    }
}
