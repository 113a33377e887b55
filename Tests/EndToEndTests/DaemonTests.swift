import Catalog
import ChildProcesses
import Foundation
import GRDB
import Testing

@Suite("darkroom run as a daemon", .serialized)
struct DaemonTests {
    @Test func aFileStillBeingWrittenIsNotTakenBeforeItSettlesAndSIGTERMStopsCleanly() throws {
        let space = try Workspace(settleSeconds: 1.0, scanInterval: 0.1)
        let launched = try space.start(["run", "--no-progress"])
        let daemon = launched.process
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        let bytes = try distinctPhotos(1)[0]
        let path = space.incoming + "/slow.jpg"
        // Close-on-exec: a program another test starts meanwhile must not inherit the writer
        // (FileHandle(forWritingAtPath:) opens without it), or the photo stays open for writing
        // as long as that program lives.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        try #require(descriptor >= 0, "cannot create \(path)")
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        // Written in place over about 2.5 s, in pieces: longer than settle_seconds in all, but
        // never idle that long.
        let pieces = 10
        let size = (bytes.count + pieces - 1) / pieces
        for i in 0..<pieces {
            try handle.write(contentsOf: bytes[(i * size)..<min(bytes.count, (i + 1) * size)])
            usleep(250_000)
            #expect(FileManager.default.fileExists(atPath: path), "taken before it was complete (piece \(i))")
        }
        try handle.close()

        var picture: PictureRecord?
        var failed: [String] = []
        // Up to five minutes: a full test run starts many processes beside this daemon, on two
        // cores. What is checked is that the photo is taken whole, not how soon.
        let deadline = Date().addingTimeInterval(300)
        while picture == nil, failed.isEmpty, Date() < deadline {
            usleep(100_000)
            picture = try? space.catalog().read { db in try PictureRecord.fetchOne(db) }
            failed = space.files(under: space.spool + "/failed").filter { $0.hasSuffix(".error.json") }
        }
        let reasons = failed.map { (try? String(contentsOfFile: space.spool + "/failed/" + $0, encoding: .utf8)) ?? $0 }
        let added = try #require(picture, """
            the settled photo is processed; failed: \(reasons); the spool holds \(space.files(under: space.spool)); \
            processes holding it open: \(Self.holders(of: path)); the daemon's log: \(launched.stderr.suffix(2000))
            """)
        #expect(added.byteSize == Int64(bytes.count))

        kill(daemon.processIdentifier, SIGTERM)
        let log = launched.finish()
        #expect(daemon.terminationStatus == 0, "\(log)")
        #expect(log.contains("run finished"))
        let jobs = try space.catalog().read { db in try JobRecord.fetchAll(db) }
        #expect(jobs.map(\.outcome) == [.added], "one job, not a truncated failure first")
    }

    /// The processes that have `path` open, with the flags of each descriptor (from /proc): a
    /// file open for writing anywhere on the machine is not taken.
    static func holders(of path: String) -> [String] {
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return processes.filter { Int($0) != nil }.flatMap { pid -> [String] in
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            return descriptors.compactMap { fd -> String? in
                guard (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")) == path else { return nil }
                let command = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8))?
                    .replacingOccurrences(of: "\u{0}", with: " ").prefix(120) ?? "?"
                let flags = (try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8))?
                    .split(separator: "\n").first { $0.hasPrefix("flags:") } ?? "?"
                return "\(pid) \(command) fd \(fd) \(flags)"
            }
        }
    }

    @Test func theDaemonWatchesAFolderMadeInIncomingAfterItStarted() throws {
        // A periodic scan only every minute: the photo in the new folder comes in sooner only
        // if the folder's creation made the daemon watch it.
        let space = try Workspace(scanInterval: 60)
        let daemon = try space.start(["run", "--no-progress", "--log-format", "json"]).process
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        usleep(500_000)
        let folder = space.incoming + "/trip"
        #expect(mkdir(folder, 0o755) == 0)
        usleep(500_000)
        let bytes = try distinctPhotos(1)[0]
        let hidden = folder + "/.day1.jpg.partial"
        _ = FileManager.default.createFile(atPath: hidden, contents: Data(bytes))
        rename(hidden, folder + "/day1.jpg")
        var count = 0
        for _ in 0..<450 where count < 1 {
            usleep(100_000)
            count = (try? space.catalog().read { db in try PictureRecord.fetchCount(db) }) ?? 0
        }
        #expect(count == 1)
        kill(daemon.processIdentifier, SIGINT)
        daemon.waitForExit()
        #expect(daemon.terminationStatus == 0)
    }

    @Test func theDaemonPicksUpPhotosAsTheyArrive() throws {
        // A periodic scan only every minute: only inotify brings the photos in sooner.
        let space = try Workspace(scanInterval: 60)
        let daemon = try space.start(["run", "--no-progress", "--log-format", "json"]).process
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        usleep(500_000)
        let photos = try distinctPhotos(3)
        for (i, bytes) in photos.enumerated() {
            // The producer's side of the protocol: a hidden name while writing, then a rename.
            let hidden = space.incoming + "/.p\(i).jpg.partial"
            _ = FileManager.default.createFile(atPath: hidden, contents: Data(bytes))
            rename(hidden, space.incoming + "/p\(i).jpg")
        }
        var count = 0
        // inotify wakes the daemon well before the next periodic scan (waited for up to 45 s on
        // a machine busy with a full test run; alone it takes well under a second).
        for _ in 0..<450 where count < photos.count {
            usleep(100_000)
            count = (try? space.catalog().read { db in try PictureRecord.fetchCount(db) }) ?? 0
        }
        #expect(count == photos.count)
        kill(daemon.processIdentifier, SIGINT)
        daemon.waitForExit()
        #expect(daemon.terminationStatus == 0)
    }
}
