import Catalog
import Foundation
import GRDB
import Testing

/// Producers that write a photo in place, under its final name, and stall: the daemon waits
/// for them instead of failing half a photo.
@Suite("Slow writers", .serialized)
struct SlowWriterTests {
    /// Waits at most `seconds` for `condition`.
    func eventually(within seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            usleep(50_000)
        }
        return try condition()
    }

    func pictures(_ space: Workspace) -> Int {
        (try? space.catalog().read { db in try PictureRecord.fetchCount(db) }) ?? 0
    }

    @Test func aWriterThatStallsPastTheSettleTimeEndsAsAPicture() throws {
        let space = try Workspace(settleSeconds: 0.3)
        let photo = try distinctPhotos(1)[0]
        let daemon = try space.start(["run", "--no-progress"])
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }
        // Half the photo, written in place under its final name, then a stall of many settle times.
        let path = space.incoming + "/in-place.jpg"
        // Close-on-exec: a process another test starts meanwhile must not inherit the writer's
        // descriptor, or the photo stays open for writing after this close (and is rightly
        // never taken).
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        #expect(fd >= 0)
        let half = photo.count / 2
        _ = photo.withUnsafeBytes { write(fd, $0.baseAddress, half) }
        usleep(2_000_000)
        #expect(pictures(space) == 0)
        #expect(space.files(under: space.spool + "/failed").isEmpty, "half a photo is never taken")
        _ = photo.withUnsafeBytes { write(fd, $0.baseAddress! + half, photo.count - half) }
        close(fd)
        let added = eventually(within: 60) { pictures(space) == 1 }
        kill(daemon.process.processIdentifier, SIGTERM)
        let log = daemon.finish()
        #expect(added, "the finished photo is added; the daemon's log: \(log.suffix(2000))")
        #expect(space.files(under: space.spool + "/failed").isEmpty, "\(log.suffix(2000))")
        let jobs = try space.catalog().read { db in try JobRecord.fetchAll(db) }
        #expect(jobs.map(\.outcome) == [.added], "processed once, when complete")
    }

    @Test func aTruncatedPhotoInFailedThatIsThenCompletedIsTriedAgainAndAdded() throws {
        let space = try Workspace(settleSeconds: 0.2)
        let photo = try distinctPhotos(1)[0]
        let half = photo.count / 2
        // Written by something the daemon cannot see writing (closed between its pieces, as over
        // a network share): the first half is taken and fails as truncated.
        try space.drop(bytes: Array(photo[..<half]), as: "share.jpg")
        let daemon = try space.start(["run", "--no-progress"])
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }
        let failed = space.spool + "/failed/share.jpg"
        #expect(eventually(within: 60) { FileManager.default.fileExists(atPath: failed + ".error.json") })
        let reason = try String(contentsOfFile: failed + ".error.json", encoding: .utf8)
        #expect(reason.contains("truncated"), "\(reason)")
        // The writer finishes the same file, which now sits in failed/.
        let handle = try #require(FileHandle(forWritingAtPath: failed))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(photo[half...]))
        try handle.close()
        #expect(eventually(within: 60) { pictures(space) == 1 }, "the completed photo is tried again on its own")
        kill(daemon.process.processIdentifier, SIGTERM)
        let log = daemon.finish()
        #expect(log.contains("trying again a failed photo that changed"), "\(log.suffix(2000))")
        #expect(space.files(under: space.spool + "/failed").isEmpty)
    }
}
