import Catalog
import ChildProcesses
import Foundation
import GRDB
import Testing

/// A tiny tmpfs for the library, so that the disk really fills up; needs root (CI is).
final class TinyDisk: Sendable {
    let path: String
    let mounted: Bool

    init(megabytes: Int) {
        path = NSTemporaryDirectory() + "darkroom-tiny-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        mounted = TinyDisk.mount(["-t", "tmpfs", "-o", "size=\(megabytes)M", "tmpfs", path])
    }

    func grow(megabytes: Int) -> Bool {
        TinyDisk.mount(["-o", "remount,size=\(megabytes)M", path])
    }

    deinit {
        if mounted { _ = TinyDisk.run("/bin/umount", [path]) }
        try? FileManager.default.removeItem(atPath: path)
    }

    static var canMount: Bool {
        let probe = TinyDisk(megabytes: 1)
        return probe.mounted
    }

    private static func mount(_ arguments: [String]) -> Bool {
        run("/bin/mount", arguments)
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: tool) else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitForExit()
        return process.terminationStatus == 0
    }
}

@Suite("Transient failures")
struct TransientFailureTests {
    /// Rewrites the workspace's configuration so that its library lives on the tiny disk.
    static func putLibrary(of space: Workspace, on disk: TinyDisk, maxAttempts: Int, retryBase: Double) {
        let config = """
        {
          "spool": {"root": "\(space.spool)", "settle_seconds": 0},
          "library": {"root": "\(disk.path)/library"},
          "catalog": {"path": "\(space.catalogPath)"},
          "worker": {"concurrency": 1, "max_attempts": \(maxAttempts), "retry_base_seconds": \(retryBase)}
        }
        """
        _ = FileManager.default.createFile(atPath: space.configPath, contents: Data(config.utf8))
    }

    @Test(.enabled(if: TinyDisk.canMount, "needs to mount a tmpfs (root): skipped"))
    func aFullDiskIsRetriedWithBackoffAndThePhotoLandsOnceSpaceIsFreed() throws {
        let space = try Workspace()
        let disk = TinyDisk(megabytes: 1)
        Self.putLibrary(of: space, on: disk, maxAttempts: 8, retryBase: 0.2)
        // 2.6 MB: the original alone does not fit on the 1 MB disk.
        try space.drop(Workspace.packageRoot + "/samples/Apple_iPhone_6.jpg", as: "big.jpg")
        let run = try space.start(["run", "--once", "--no-progress"])
        var sawRetry = false
        for _ in 0..<100 where !sawRetry {
            usleep(50_000)
            sawRetry = run.stderr.contains("retrying after a transient failure")
        }
        #expect(sawRetry, "a full disk is retried, not failed at once")
        #expect(disk.grow(megabytes: 64))
        let log = run.finish()
        #expect(run.process.terminationStatus == 0, "\(log)")
        #expect(log.contains("No space left on device"))
        let jobs = try space.catalog().read { db in try JobRecord.fetchAll(db) }
        #expect(jobs.map(\.outcome) == [.added])
        #expect((jobs.first?.attempts ?? 0) > 1)
        #expect(space.files(under: space.spool + "/failed").isEmpty)
        let strays = space.files(under: disk.path).filter { $0.contains(".tmp-darkroom-") }
        #expect(strays.isEmpty, "a failed write leaves no temporary file: \(strays)")
    }

    @Test(.enabled(if: TinyDisk.canMount, "needs to mount a tmpfs (root): skipped"))
    func enqueueReportsEachPhotoAFullDiskRefusesAndQueuesTheOthers() throws {
        let space = try Workspace()
        let disk = TinyDisk(megabytes: 1)
        let config = """
        {"spool": {"root": "\(disk.path)/spool"}, "library": {"root": "\(space.library)"}, "catalog": {"path": "\(space.catalogPath)"}}
        """
        _ = FileManager.default.createFile(atPath: space.configPath, contents: Data(config.utf8))
        let samples = Workspace.packageRoot + "/samples/"
        // 2.6 MB and 1.1 MB photos do not fit on the 1 MB disk; the small ones around them do.
        let files = ["Apple_iPhone_6.jpg", "hopper.jpg", "Canon_EOS5D-MIII__K6A7944.JPG", "issue-exifr-13.jpg"].map { samples + $0 }
        let result = try space.run(["enqueue"] + files)
        #expect(result.status == 1)
        #expect(result.stderr.contains("Apple_iPhone_6.jpg: not queued") && result.stderr.contains("K6A7944.JPG: not queued"), "\(result.stderr)")
        #expect(result.stderr.contains("No space left on device"))
        #expect(result.stderr.contains("2 of 4 photos not queued"))
        let incoming = space.files(under: disk.path + "/spool/incoming")
        #expect(incoming.count == 2 && incoming.allSatisfy { $0.hasSuffix("hopper.jpg") || $0.hasSuffix("issue-exifr-13.jpg") }, "\(incoming)")
        #expect(files.allSatisfy { FileManager.default.fileExists(atPath: $0) })
    }

    @Test(.enabled(if: TinyDisk.canMount, "needs to mount a tmpfs (root): skipped"))
    func aDiskThatStaysFullEndsInFailedWithAReasonToFreeSpace() throws {
        let space = try Workspace()
        let disk = TinyDisk(megabytes: 1)
        Self.putLibrary(of: space, on: disk, maxAttempts: 3, retryBase: 0.05)
        try space.drop(Workspace.packageRoot + "/samples/Apple_iPhone_6.jpg", as: "big.jpg")
        let result = try space.run(["run", "--once", "--no-progress"])
        #expect(result.status == 1)
        let reasonFile = space.spool + "/failed/big.jpg.error.json"
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: reasonFile))) as? [String: Any])
        let reason = try #require(report["reason"] as? String)
        #expect(reason.contains("free space"))
        // It says what to do, and promises nothing that does not happen.
        #expect(reason.contains("gave up after 3 tries") && reason.contains("run `darkroom retry big.jpg`"), "\(reason)")
        #expect(!reason.contains("will be retried") && !reason.contains("will retry"))
        #expect(report["attempts"] as? Int == 3)
        #expect(FileManager.default.fileExists(atPath: space.spool + "/failed/big.jpg"), "the photo is kept")
    }
}
