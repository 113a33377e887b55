import Catalog
import ChildProcesses
import Foundation
import PostgresCatalog
import PostgresHarness
import PostgresStore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `darkroom run` processes sharing one spool and library (as machines share a mount) and one
/// PostgreSQL catalog, one of them killed mid-run: every photo is a picture exactly once.
@Suite("Several daemons on one PostgreSQL catalog", .enabled(if: SharedCluster.available, Comment(rawValue: SharedCluster.skipReason)))
struct PostgresDaemonsTests {
    @Test func threeDaemonsOneKilledMidRunCommitEveryPhotoOnceAndTheMomentsAgreeWithARebuild() throws {
        let location = try SharedCluster.freshDatabase()
        let environment = ["DARKROOM_CATALOG_URL": location.description]
        // A short lease, so that the killed daemon's claim comes back within the test.
        let space = try Workspace(leaseSeconds: 3, concurrency: 1, scanInterval: 0.1)
        var daemons = try (0..<3).map { _ in try space.start(["run", "--no-progress"], environment: environment) }
        defer { for daemon in daemons where daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }
        let catalog = try PostgresCatalog(location: location)
        defer { catalog.close() }

        // One place and time for every photo (the same camera file, each with bytes of its
        // own): the daemons' commits all meet in one automatic moment.
        let base = LibraryTree.sample("Landscape_6.jpg")
        let photos = 60
        var killed = false
        /// A machine dies with a photo in hand once 15 pictures are in; another starts in its place.
        func killOneOnceUnderWay() throws {
            guard !killed, try catalog.counts(now: Date()).pictures >= 15 else { return }
            kill(daemons[0].process.processIdentifier, SIGKILL)
            daemons[0].process.waitForExit()
            daemons.append(try space.start(["run", "--no-progress"], environment: environment))
            killed = true
        }
        for index in 0..<photos {
            try space.drop(bytes: base + Array("machine-\(index)".utf8), as: "IMG_\(index).jpg")
            usleep(30_000)
            try killOneOnceUnderWay()
        }
        // On a slow machine the photos arrive faster than they are taken: the kill waits for
        // the fifteenth picture, with most of the spool still to do.
        let killDeadline = Date().addingTimeInterval(120)
        while !killed && Date() < killDeadline {
            try killOneOnceUnderWay()
            usleep(20_000)
        }
        #expect(killed, "a daemon was killed mid-run")
        let deadline = Date().addingTimeInterval(180)
        while Date() < deadline {
            if try catalog.counts().jobsAdded >= photos && space.files(under: space.incoming).isEmpty
                && space.files(under: space.spool + "/processing").isEmpty { break }
            usleep(100_000)
        }
        for daemon in daemons where daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGTERM) }
        for daemon in daemons { daemon.process.waitForExit() }

        let counts = try catalog.counts()
        #expect(counts.pictures == photos && counts.jobsAdded == photos, "every photo once: \(counts)")
        #expect(counts.jobsFailed == 0 && counts.jobsDuplicate == 0, "none failed, none twice: \(counts)")
        #expect(space.files(under: space.spool + "/failed").isEmpty)
        #expect(space.files(under: space.spool + "/processing").isEmpty)
        let workers = Set(try catalog.allJobs().map(\.worker))
        #expect(workers.count >= 3, "every daemon took part: \(workers)")
        let rebuild = try space.run(["moments", "rebuild", "--check"], environment: environment)
        #expect(rebuild.status == 0, "moments rebuild --check: \(rebuild.stdout) \(rebuild.stderr)")
        let status = try space.run(["status"], environment: environment)
        #expect(status.stdout.contains("catalog   \(location.description)") && status.stdout.contains("pictures    \(photos) "),
                "\(status.stdout)")
        // The SQLite file is never written when the catalog is in PostgreSQL.
        #expect(!FileManager.default.fileExists(atPath: space.catalogPath))
    }

    @Test func anImportToAnUnreachableAddressStopsInOneLineAndWritesNoSQLiteFile() throws {
        let space = try Workspace()
        let result = try space.run(["import", space.root], environment: ["DARKROOM_CATALOG_URL": "postgres://u@127.0.0.1:1/none"])
        // Exit 69 (service unavailable) with one line naming the address, the system's reason
        // and what to check; no usage text.
        #expect(result.status == 69)
        let lines = result.stderr.split(separator: "\n")
        let first = lines.first ?? ""
        #expect(lines.count == 1 && first.hasPrefix("darkroom: cannot connect to PostgreSQL at postgres://u@127.0.0.1:1/none")
                && first.contains("refused") && first.contains("check that the server runs"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: space.catalogPath))
        #expect(!FileManager.default.fileExists(atPath: space.library), "nothing is placed before the catalog is open")
    }

    /// A photo committed long ago, whose done queue job has since been removed (a week on), and
    /// whose file was somehow left in `queued/`: the reconciliation finds its commit in `jobs`
    /// and removes the file, instead of taking it for a photo never queued and adding it again.
    @Test func aLeftoverFileWhoseDoneJobWasRemovedIsNotProcessedAgain() throws {
        let location = try SharedCluster.freshDatabase()
        let environment = ["DARKROOM_CATALOG_URL": location.description]
        // A one-second lease: a file quiet for one second is the reconciliation's to look at.
        let space = try Workspace(leaseSeconds: 1)
        let photo = LibraryTree.sample("Landscape_6.jpg")
        try space.drop(bytes: photo, as: "IMG_1.jpg")
        let first = try space.run(["run", "--once", "--no-progress"], environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        let pool = try PostgresPool(location: location, maximumConnections: 1)
        defer { pool.close() }
        let claimPath = try #require(try pool.withSession { session in
            try session.value("SELECT claim_path FROM jobs WHERE outcome = 'added'", as: String.self)
        })
        #expect(claimPath.hasPrefix(space.spool + "/queued/"), "\(claimPath)")

        // The file back where it was processed; its queue job removed.
        try FileManager.default.createDirectory(atPath: (claimPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(photo).write(to: URL(fileURLWithPath: claimPath))
        try pool.withSession { session in try session.execute("DELETE FROM queue_jobs") }
        usleep(1_500_000)
        let second = try space.run(["run", "--once", "--no-progress"], environment: environment)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(!FileManager.default.fileExists(atPath: claimPath), "the leftover file is removed")
        #expect(second.stderr.contains("removed a committed photo left in queued/"), "\(second.stderr)")
        #expect(try SeveralMachinesTests.count("SELECT count(*) FROM jobs", location) == 1, "nothing processed again")
        #expect(try SeveralMachinesTests.count("SELECT count(*) FROM queue_jobs", location) == 0, "no job queued again")
    }
}
