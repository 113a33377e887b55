import Catalog
import CatalogImports
import ChildProcesses
import Foundation
import PostgresCatalog
import PostgresHarness
import PostgresStore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `darkroom import` with the catalog in PostgreSQL (`DARKROOM_CATALOG_URL`): the pictures and
/// the journal go there, a killed or interrupted import continues where it stopped, and
/// `status` and `--dry-run` read the runs and the journal from there.
@Suite("Import into a PostgreSQL catalog", .enabled(if: SharedCluster.available, Comment(rawValue: SharedCluster.skipReason)))
struct PostgresImportTests {
    /// Numbers read straight from the database the import writes: 0 while its tables do not
    /// exist yet (the import that creates them has not started) or the server cannot answer.
    struct Tally {
        let pool: PostgresPool

        private func count(_ read: (PostgresSession) throws -> Int64?) -> Int {
            (try? pool.withSession(read)).flatMap { $0 }.map(Int.init) ?? 0
        }

        var tables: Int { count { try $0.value("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'", as: Int64.self) } }
        var jobs: Int { count { try $0.value("SELECT COUNT(*) FROM jobs", as: Int64.self) } }
        var runs: Int { count { try $0.value("SELECT COUNT(*) FROM imports", as: Int64.self) } }
        var journaled: Int { count { try $0.value("SELECT COUNT(*) FROM import_files", as: Int64.self) } }
        var journaledDone: Int { count { try $0.value("SELECT COUNT(*) FROM import_files WHERE outcome <> 'failed'", as: Int64.self) } }
        var journaledFailed: Int { count { try $0.value("SELECT COUNT(*) FROM import_files WHERE outcome = 'failed'", as: Int64.self) } }
        /// Claims (photo files) with more than one job: a photo processed twice.
        var claimedTwice: Int {
            count { try $0.value("SELECT COUNT(*) FROM (SELECT claim_path FROM jobs GROUP BY claim_path HAVING COUNT(*) > 1) twice", as: Int64.self) }
        }
        /// Pictures that some journal row names.
        var journaledPictures: Int {
            count { try $0.value("SELECT COUNT(DISTINCT picture_id) FROM import_files WHERE picture_id IS NOT NULL", as: Int64.self) }
        }
    }

    /// A run's `--report` file.
    static func report(_ path: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
    }

    @Test func anImportKilledAndInterruptedContinuesFromItsJournalInPostgreSQLAndStatusAndDryRunReadIt() throws {
        let location = try SharedCluster.freshDatabase()
        let environment = ["DARKROOM_CATALOG_URL": location.description]
        let pool = try PostgresPool(location: location, maximumConnections: 1)
        defer { pool.close() }
        let tally = Tally(pool: pool)
        // Its photos are queue jobs: those the killed run's worker held come back once their
        // leases lapse, kept short here so that the next run takes them within seconds.
        let space = try Workspace(leaseSeconds: 5)
        let tree = LibraryTree(space.root + "/lib")
        // 60 photos of 6 outings with Takeout sidecars, 3 copies of them, a broken photo, a text file.
        try ImportResumeTests.makeLibrary(tree)
        let importing = ["import", tree.root, "--author", "ann", "--progress", "none"]

        // A dry run on the empty database reads an empty journal and creates nothing there.
        let first = try space.run(importing + ["--dry-run", "--report", space.root + "/dry-empty.json"], environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        let empty = try Self.report(space.root + "/dry-empty.json")
        #expect(empty["imported"] as? Int == 64 && empty["already_imported"] as? Int == 0, "\(empty)")
        #expect(tally.tables == 0, "a dry run neither creates nor migrates the catalog")

        // Killed once it has committed something, with most of the library still to do.
        let killed = try space.start(importing, environment: environment)
        let patience = Date().addingTimeInterval(120)
        while killed.process.isRunning, Date() < patience, tally.jobs < 5 { usleep(5_000) }
        let killedMidway = killed.process.isRunning
        kill(killed.process.processIdentifier, SIGKILL)
        killed.process.waitForExit()
        #expect(killedMidway, "the first import was killed while it ran: \(killed.stderr.suffix(1000))")
        let committedBeforeKill = tally.jobs
        #expect(committedBeforeKill >= 5 && committedBeforeKill < 64, "\(committedBeforeKill) jobs when killed")

        // Its process is gone without a word: status shows the run abandoned.
        let afterKill = try space.run(["status", "--json"], environment: environment)
        #expect(afterKill.status == 0, "\(afterKill.stderr)")
        let statusReport = try #require(try JSONSerialization.jsonObject(with: Data(afterKill.stdout.utf8)) as? [String: Any])
        let listed = try #require(statusReport["imports"] as? [[String: Any]])
        #expect(listed.count == 1 && listed.first?["outcome"] as? String == "abandoned", "\(listed)")
        #expect(try space.run(["status"], environment: environment).stdout.contains("abandoned, started"))

        // Ctrl-C: the photos in hand finish and are journaled; the run says it was interrupted.
        let interrupted = try space.start(importing, environment: environment)
        let before = tally.jobs
        let patienceAgain = Date().addingTimeInterval(120)
        while interrupted.process.isRunning, Date() < patienceAgain, tally.jobs <= before + 2 { usleep(5_000) }
        kill(interrupted.process.processIdentifier, SIGINT)
        interrupted.process.waitForExit()
        #expect(interrupted.process.terminationReason == .exit, "the handler stops it: \(interrupted.stderr.suffix(1000))")
        #expect([0, 1, 2].contains(interrupted.process.terminationStatus))
        if interrupted.process.terminationStatus == 2 {
            #expect(interrupted.stdout.contains("interrupted (run the same command again to continue)"), "\(interrupted.stdout)")
        }
        // A graceful stop journals every photo it handed over and saw committed. On the shared
        // queue its worker may also have committed a photo the killed run had handed over before
        // this run's walk came to it: that one is journaled by the next run, which finds it
        // committed (and counts it as already imported).
        let unjournaled = tally.jobs - tally.journaled
        #expect(unjournaled >= 0, "the journal names no photo that was not committed")

        // A dry run now reads what the journal in PostgreSQL has done, and writes nothing.
        let done = tally.journaledDone
        let failedBefore = tally.journaledFailed
        let runsBefore = tally.runs
        let jobsBefore = tally.jobs
        let dry = try space.run(importing + ["--dry-run", "--report", space.root + "/dry.json"], environment: environment)
        #expect(dry.status == 0, "\(dry.stderr)")
        let rehearsal = try Self.report(space.root + "/dry.json")
        #expect(done > 0 && rehearsal["already_imported"] as? Int == done && rehearsal["previously_failed"] as? Int == failedBefore,
                "\(rehearsal)")
        #expect(rehearsal["imported"] as? Int == 64 - done - failedBefore)
        #expect(dry.stdout.contains("already imported" + String(format: "%6d", done)), "\(dry.stdout)")
        #expect(tally.runs == runsBefore && tally.jobs == jobsBefore)

        // Run again to the end: it continues from the journal and processes no photo twice.
        let last = try space.run(importing + ["--report", space.root + "/last.json"], environment: environment)
        #expect([0, 1].contains(last.status), "\(last.stderr.suffix(1000))")
        let lastReport = try Self.report(space.root + "/last.json")
        // It finds done at least what was committed before it: the journaled photos and those
        // committed unjournaled. Its own worker may also commit, before its walk reaches them,
        // photos the killed run handed over and no run processed (a clean-clone run counted 11
        // against 10): those count as already imported too. Every photo is counted once.
        let found = (lastReport["already_imported"] as? Int ?? -1) + (lastReport["previously_failed"] as? Int ?? -1)
        #expect(found >= done + failedBefore + unjournaled, "\(lastReport)")
        let processed = ["imported", "duplicates", "failed"].reduce(0) { $0 + (lastReport[$1] as? Int ?? -100) }
        #expect(found + processed == 64, "\(lastReport)")

        let catalog = try PostgresCatalog(location: location)
        defer { catalog.close() }
        let counts = try catalog.counts()
        #expect(counts.pictures == 60, "every photo became a picture: \(counts)")
        #expect(counts.jobsAdded == 60 && counts.jobsDuplicate == 3 && counts.jobsFailed == 1, "no photo processed twice: \(counts)")
        #expect(counts.moments == 6, "\(counts)")
        #expect(tally.claimedTwice == 0)
        #expect(tally.journaled == 64)
        #expect(tally.journaledPictures == 60, "every picture is some journaled photo's")
        #expect(try space.run(["moments", "rebuild", "--check"], environment: environment).status == 0)

        // Three runs: killed (abandoned by the next), interrupted, finished; none still running.
        let runs = try catalog.importRuns(limit: 10)
        #expect(runs.count == 3 && runs.first?.outcome == .finished && runs.last?.outcome == .abandoned, "\(runs)")
        #expect(!runs.contains { $0.outcome == .running })
        // Each file's one journal row belongs to the run that recorded it.
        #expect(runs.map(\.added).reduce(0, +) == 60 && runs.map(\.duplicates).reduce(0, +) == 3 && runs.map(\.failed).reduce(0, +) == 1,
                "\(runs)")
        let status = try space.run(["status"], environment: environment)
        #expect(status.stdout.contains("catalog   \(location.description)"), "\(status.stdout)")
        #expect(status.stdout.contains("imports (newest first") && status.stdout.contains("#\(runs[0].id) finished"), "\(status.stdout)")

        // And a last dry run finds everything done.
        let after = try space.run(importing + ["--dry-run", "--report", space.root + "/dry-after.json"], environment: environment)
        let finalRehearsal = try Self.report(space.root + "/dry-after.json")
        #expect(after.status == 0 && finalRehearsal["imported"] as? Int == 0, "\(after.stdout)")
        #expect(finalRehearsal["already_imported"] as? Int == 63 && finalRehearsal["previously_failed"] as? Int == 1)

        // The SQLite file is never written when the catalog is in PostgreSQL.
        #expect(!FileManager.default.fileExists(atPath: space.catalogPath))
        #expect(!space.files(under: space.library).isEmpty, "the originals and variants are in the library")
    }
}
