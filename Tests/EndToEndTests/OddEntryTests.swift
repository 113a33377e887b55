import Catalog
import ChildProcesses
import Foundation
import GRDB
import Testing

/// Entries a producer should not drop into `incoming/`, and where each ends.
@Suite("Odd entries in incoming/", .serialized)
struct OddEntryTests {
    /// Waits for `launched` at most `seconds`, killing it past that; whether it ended in time.
    func finishes(_ launched: Launched, within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while launched.process.isRunning, Date() < deadline { usleep(50_000) }
        if launched.process.isRunning {
            kill(launched.process.processIdentifier, SIGKILL)
            launched.process.waitForExit()
            return false
        }
        return true
    }

    @Test func everyOddEntryEndsAsAPictureOrInFailedWithItsReasonAndStatusCountsIt() throws {
        let space = try Workspace()
        let photos = try distinctPhotos(3)
        // A name that is not UTF-8 (Latin-1 "é"), written through raw bytes.
        let rawName = (Array((space.incoming + "/caf").utf8) + [0xE9] + Array(".jpg".utf8) + [0]).map { CChar(bitPattern: $0) }
        let fd = open(rawName, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        #expect(fd >= 0)
        _ = photos[0].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        try space.drop(bytes: photos[1], as: "two\nlines.jpg")
        let target = space.root + "/outside.jpg"
        _ = FileManager.default.createFile(atPath: target, contents: Data(photos[2]))
        try FileManager.default.createSymbolicLink(atPath: space.incoming + "/link.jpg", withDestinationPath: target)
        try FileManager.default.createSymbolicLink(atPath: space.incoming + "/dangling.jpg", withDestinationPath: space.root + "/nothing.jpg")
        try FileManager.default.createSymbolicLink(atPath: space.incoming + "/device.jpg", withDestinationPath: "/dev/zero")
        #expect(mkfifo(space.incoming + "/pipe.jpg", 0o644) == 0)
        try FileManager.default.createDirectory(atPath: space.incoming + "/folder.jpg", withIntermediateDirectories: true)

        let before = try space.run(["status", "--json"])
        let counted = try JSONSerialization.jsonObject(with: Data(before.stdout.utf8)) as? [String: Any]
        #expect(counted?["incoming"] as? Int == 7, "\(before.stdout)")

        let inspect = try space.start(["inspect", space.incoming + "/pipe.jpg"])
        #expect(finishes(inspect, within: 30), "inspect on a FIFO does not wait for a writer")
        #expect(inspect.process.terminationStatus != 0)
        #expect(inspect.stderr.contains("FIFO"), "\(inspect.stderr)")

        let run = try space.start(["run", "--once", "--no-progress"])
        #expect(finishes(run, within: 120), "nothing blocks the run: \(run.stderr.suffix(2000))")
        #expect(run.process.terminationStatus == 1, "some failed: \(run.stderr.suffix(2000))")

        let pictures = try space.catalog().read { db in try PictureRecord.fetchAll(db) }
        #expect(Set(pictures.map(\.sourceName)) == ["caf%E9.jpg", "two%0Alines.jpg"])
        let failed = Set(try FileManager.default.contentsOfDirectory(atPath: space.spool + "/failed"))
        for name in ["link.jpg", "dangling.jpg", "device.jpg", "pipe.jpg", "folder.jpg"] {
            #expect(failed.contains(name) && failed.contains(name + ".error.json"), "\(name) in failed/: \(failed)")
        }
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: target), "a link's target is never touched")
        #expect(FileManager.default.fileExists(atPath: space.spool + "/failed/folder.jpg", isDirectory: &isDirectory) && isDirectory.boolValue)
        let after = try space.run(["status", "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [String: Any]
        #expect(report?["incoming"] as? Int == 0)
        #expect(report?["failed"] as? Int == 5, "\(after.stdout)")
        let reasons = (report?["failures"] as? [[String: Any]] ?? []).compactMap { $0["reason"] as? String }
        #expect(reasons.contains { $0.hasPrefix("a symbolic link") })
        #expect(reasons.contains { $0.hasPrefix("a FIFO") })
        #expect(reasons.contains { $0.hasPrefix("a directory") })
    }
}
