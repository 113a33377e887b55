import Catalog
import ChildProcesses
import Foundation
import GRDB
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Several daemons and an import sharing one spool, library and catalog, fed by a producer that
/// keeps its files' old modification times: every photo is processed exactly once.
@Suite("Several daemons on one spool")
struct ConcurrentDaemonsTests {
    @Test func aTimePreservingProducerFeedsThreeDaemonsAndAnImportAndEveryPhotoLandsOnce() throws {
        // A short lease, so that a lease read from the photos' hour-old times would expire at
        // once and another daemon would take live claims back.
        let space = try Workspace(leaseSeconds: 2, concurrency: 1, scanInterval: 0.1)
        let daemons = try (0..<3).map { _ in try space.start(["run", "--no-progress"]) }
        defer { for daemon in daemons where daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }

        let library = LibraryTree(space.root + "/camera-card")
        let base = LibraryTree.sample("Landscape_6.jpg")
        for index in 0..<15 { try library.write("DCIM/IMG_\(index).jpg", base + Array("import-\(index)".utf8)) }
        let importer = try space.start(["import", library.root, "--progress", "none"])

        // The producer: each photo written under a hidden name, given an hour-old modification
        // time (as cp -p, rsync -t or a move from a camera card would), then renamed in.
        let hourAgo = Date().addingTimeInterval(-3600)
        let photos = 45
        for index in 0..<photos {
            let hidden = space.incoming + "/.IMG_\(index).jpg.part"
            try Data(base + Array("spool-\(index)".utf8)).write(to: URL(fileURLWithPath: hidden))
            try FileManager.default.setAttributes([.modificationDate: hourAgo], ofItemAtPath: hidden)
            #expect(rename(hidden, space.incoming + "/IMG_\(index).jpg") == 0)
            usleep(20_000)
        }

        importer.process.waitForExit()
        #expect(importer.process.terminationStatus == 0, "\(importer.stderr.suffix(1000))")
        let deadline = Date().addingTimeInterval(300)
        var jobs = 0
        while Date() < deadline {
            jobs = try space.catalog().read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM jobs") } ?? 0
            if jobs >= photos + 15 && space.files(under: space.incoming).isEmpty { break }
            usleep(100_000)
        }
        for daemon in daemons { kill(daemon.process.processIdentifier, SIGTERM) }
        for daemon in daemons { daemon.process.waitForExit() }

        let outcomes = try space.catalog().read { db in
            try Row.fetchAll(db, sql: "SELECT outcome, COUNT(*) AS n FROM jobs GROUP BY outcome").map { row -> (String, Int) in
                (row["outcome"], row["n"])
            }
        }
        #expect(Dictionary(uniqueKeysWithValues: outcomes) == ["added": photos + 15], "every photo once, none twice, none failed")
        #expect(try space.catalog().counts().pictures == photos + 15)
        #expect(space.files(under: space.spool + "/failed").isEmpty)
        #expect(space.files(under: space.spool + "/processing").isEmpty)
        let logs = daemons.map(\.stderr).joined()
        #expect(!logs.contains("took back the claim"), "no live claim was taken back")
        // Every daemon took part (three daemons, 45 photos arriving over a second).
        let workers = try space.catalog().read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(DISTINCT worker) FROM jobs WHERE claim_path NOT LIKE 'import:%'")
        }
        #expect(workers == 3)
    }
}
