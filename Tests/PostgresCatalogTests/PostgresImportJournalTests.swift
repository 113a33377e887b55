import Catalog
import CatalogFixtures
import CatalogImports
import Foundation
@testable import PostgresCatalog
import PostgresHarness
import PostgresStore
import Testing

/// `darkroom import`'s runs and journal in a real PostgreSQL server, held to what the SQLite
/// catalog answers for the same calls: the journal is what makes an interrupted import continue
/// where it stopped, so both stores must agree on every answer.
@Suite("The import journal in PostgreSQL", .enabled(if: SharedCluster.available, Comment(rawValue: SharedCluster.skipReason)))
struct PostgresImportJournalTests {
    typealias Journal = ImportJournal & ImportRunsReader & CatalogStore

    /// What one store answered along the scenario, compared between the stores.
    struct Answers: Equatable {
        var emptyHighWater: Int64 = -1
        var emptyRuns: [ImportRunSummary] = []
        var runIds: [Int64] = []
        var abandoned: [Int] = []
        var highWater: Int64 = 0
        var created = 0
        var createdAfterMark = 0
        var added = 0
        var writtenX: [String: ImportFileRecord] = [:]
        var writtenY: [String: ImportFileRecord] = [:]
        var folderX: [String: ImportFileRecord] = [:]
        var folderY: [String: ImportFileRecord] = [:]
        var parent: [String: ImportFileRecord] = [:]
        var replaced: [String: ImportFileRecord] = [:]
        var momentsOfB = 0
        var momentsOfBAfterReplace = 0
        var momentsOfC = 0
        var runs: [ImportRunSummary] = []
        var newestTwo: [ImportRunSummary] = []
        /// The distinct moments of pictures 0..<8, 1..<8 and 10..<12, as the store files them at the end.
        var expectedMomentsOfB = 0
        var expectedMomentsOfBAfterReplace = 0
        var expectedMomentsOfC = 0
    }

    static func job(_ i: Int, of photo: PictureRecord) -> JobRecord {
        JobRecord(sourceName: "p\(i).jpg", claimPath: "import:/lib/b/p\(i).jpg", sha256: photo.sha256, outcome: .added, pictureId: nil,
                  attempts: 1, error: nil, sidecarJson: nil, worker: "host.2", startedAt: 10, finishedAt: 10.5)
    }

    /// A journal row of file `i` of a folder, for a run, as the importer writes it.
    static func row(_ i: Int, in directory: String, outcome: JobRecord.Outcome, job: JobRecord?, run: Int64,
                    error: String? = nil) -> ImportFileRecord {
        ImportFileRecord(sourcePath: directory + "/p\(i).jpg", directory: directory, size: 1000 + Int64(i),
                         modifiedNs: 1_700_000_000_123_456_789 + Int64(i), outcome: outcome, sha256: job?.sha256,
                         pictureId: job?.pictureId, jobId: job?.id, error: error,
                         sidecars: i % 2 == 0 ? #"["takeout:p\#(i).jpg.json"]"# : nil, importId: run, finishedAt: 1_700_000_100.25 + Double(i))
    }

    /// The same calls, in the same order, on either store.
    static func exercise(_ journal: any Journal) throws -> Answers {
        var answers = Answers()
        answers.emptyHighWater = try journal.outboxHighWater()
        answers.emptyRuns = try journal.importRuns(limit: 10)

        // Three runs: A finishes, B's process is gone without a word (killed), C still runs.
        let a = try journal.startImport(ImportRunRecord(roots: #"["/lib/a"]"#, mode: "copy", worker: "host.1", startedAt: 100))
        let b = try journal.startImport(ImportRunRecord(roots: #"["/lib/b","/lib/c"]"#, mode: "link", worker: "host.2", startedAt: 200))
        let c = try journal.startImport(ImportRunRecord(roots: #"["/lib/b"]"#, mode: "copy", worker: "host.3", startedAt: 300))
        answers.runIds = [a, b, c]
        try journal.finishImport(id: a, outcome: .finished, reportJSON: #"{"found":3}"#, at: 150.5)
        // host.1's run has finished: only a run still recorded as running can be abandoned.
        answers.abandoned.append(try journal.markAbandonedImports { $0 == "host.1" || $0 == "host.2" })
        answers.abandoned.append(try journal.markAbandonedImports { $0 == "host.1" || $0 == "host.2" })

        // Run B commits twelve photos; files 0..<8 of folder x added, 8 a duplicate, 9 failed;
        // run C adds two files of folder y and fails a third.
        let mark = try journal.outboxHighWater()
        let photos = SyntheticOutings.pictures(seed: 77, count: 12)
        var jobs: [JobRecord] = []
        for (i, photo) in photos.enumerated() {
            _ = try journal.commitPicture(photo, variants: [], job: job(i, of: photo))
            jobs.append(try #require(try journal.latestJob(claimPath: job(i, of: photo).claimPath)))
        }
        try journal.recordFailure(JobRecord(sourceName: "bad.jpg", claimPath: "import:/lib/b/bad.jpg", sha256: nil, outcome: .failed,
                                            pictureId: nil, attempts: 1, error: "JPEG file is truncated", sidecarJson: nil,
                                            worker: "host.2", startedAt: 11, finishedAt: 11.5, failureCategory: .badInput))
        let failedJob = try #require(try journal.latestJob(claimPath: "import:/lib/b/bad.jpg"))
        let x = "/lib/b/x"
        let y = "/lib/b/y"
        var duplicate = jobs[0]
        duplicate.outcome = .duplicate
        let written = (0..<8).map { row($0, in: x, outcome: .added, job: jobs[$0], run: b) }
            + [row(8, in: x, outcome: .duplicate, job: duplicate, run: b), row(9, in: x, outcome: .failed, job: failedJob, run: b, error: failedJob.error)]
            + (10..<12).map { row($0, in: y, outcome: .added, job: jobs[$0], run: c) }
        for file in written { try journal.recordImportedFile(file) }
        answers.writtenX = Dictionary(uniqueKeysWithValues: written.filter { $0.directory == x }.map { ($0.sourcePath, $0) })
        answers.writtenY = Dictionary(uniqueKeysWithValues: written.filter { $0.directory == y }.map { ($0.sourcePath, $0) })
        answers.highWater = try journal.outboxHighWater()
        answers.created = try journal.outboxEvents(.momentCreated, after: mark)
        answers.createdAfterMark = try journal.outboxEvents(.momentCreated, after: answers.highWater)
        answers.added = try journal.outboxEvents(.pictureAdded, after: mark)
        answers.folderX = try journal.importedFiles(inDirectory: x)
        answers.folderY = try journal.importedFiles(inDirectory: y)
        answers.parent = try journal.importedFiles(inDirectory: "/lib/b")
        answers.momentsOfB = try journal.momentCount(ofImport: b)

        // File 0 changed on disk and failed in run C: its row is replaced as a whole, the
        // values it no longer has (hash, picture, job, sidecars) gone.
        let changed = ImportFileRecord(sourcePath: x + "/p0.jpg", directory: x, size: 5, modifiedNs: 42, outcome: .failed,
                                       sha256: nil, pictureId: nil, jobId: nil, error: "changed and broken", sidecars: nil,
                                       importId: c, finishedAt: 1_700_000_200)
        try journal.recordImportedFile(changed)
        answers.replaced = try journal.importedFiles(inDirectory: x)
        answers.momentsOfBAfterReplace = try journal.momentCount(ofImport: b)
        answers.momentsOfC = try journal.momentCount(ofImport: c)
        answers.runs = try journal.importRuns(limit: 10)
        answers.newestTwo = try journal.importRuns(limit: 2)

        func moments(_ range: Range<Int>) throws -> Int {
            Set(try range.compactMap { i in try journal.picture(id: try #require(jobs[i].pictureId))?.momentId }).count
        }
        answers.expectedMomentsOfB = try moments(0..<8)
        answers.expectedMomentsOfBAfterReplace = try moments(1..<8)
        answers.expectedMomentsOfC = try moments(10..<12)
        return answers
    }

    @Test("runs start, finish and are abandoned; the journal's rows by folder, their replacement, the outbox marks and a run's moments answer as in SQLite")
    func journalAsInSQLite() throws {
        let postgres = try PostgresCatalog(location: try SharedCluster.freshDatabase())
        defer { postgres.close() }
        let directory = NSTemporaryDirectory() + "darkroom-pg-journal-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let sqlite = try Catalog(path: directory + "/catalog.sqlite")

        let mine = try Self.exercise(postgres)
        let theirs = try Self.exercise(sqlite)
        #expect(mine == theirs, "PostgreSQL and SQLite answered the same calls differently")

        // And what both should have answered.
        #expect(mine.emptyHighWater == 0 && mine.emptyRuns.isEmpty)
        #expect(mine.runIds == [1, 2, 3])
        #expect(mine.abandoned == [1, 0], "B once, then nothing: A had finished, C's process lives")
        #expect(mine.highWater > 0 && mine.added == 12 && mine.created > 0 && mine.createdAfterMark == 0)
        #expect(mine.folderX.count == 10 && mine.folderY.count == 2 && mine.parent.isEmpty, "rows by folder, not under it")
        #expect(mine.folderX == mine.writtenX && mine.folderY == mine.writtenY, "rows read back as written")
        let p3 = try #require(mine.folderX["/lib/b/x/p3.jpg"])
        #expect(p3.sha256 != nil && p3.pictureId != nil && p3.jobId != nil && p3.matches(size: 1003, modifiedNs: 1_700_000_000_123_456_792))
        #expect(mine.folderX["/lib/b/x/p9.jpg"]?.outcome == .failed && mine.folderX["/lib/b/x/p9.jpg"]?.error == "JPEG file is truncated")
        let replaced = try #require(mine.replaced["/lib/b/x/p0.jpg"])
        #expect(mine.replaced.count == 10)
        #expect(replaced.outcome == .failed && replaced.size == 5 && replaced.modifiedNs == 42 && replaced.importId == 3)
        #expect(replaced.sha256 == nil && replaced.pictureId == nil && replaced.jobId == nil && replaced.sidecars == nil,
                "the older row's values do not survive its replacement: \(replaced)")
        #expect(mine.momentsOfB == mine.expectedMomentsOfB && mine.momentsOfB > 1)
        #expect(mine.momentsOfBAfterReplace == mine.expectedMomentsOfBAfterReplace && mine.momentsOfC == mine.expectedMomentsOfC,
                "only the files a run added count: file 0, now C's and failed, counts for neither")
        #expect(mine.momentsOfC > 0)

        #expect(mine.runs.map(\.id) == [3, 2, 1], "newest first")
        #expect(mine.runs.map(\.outcome) == [.running, .abandoned, .finished])
        #expect(mine.runs.map(\.added) == [2, 7, 0] && mine.runs.map(\.duplicates) == [0, 1, 0] && mine.runs.map(\.failed) == [1, 1, 0])
        #expect(mine.runs[1].roots == ["/lib/b", "/lib/c"] && mine.runs[1].mode == "link" && mine.runs[1].worker == "host.2")
        #expect(mine.runs[2].finishedAt == 150.5 && mine.runs[1].finishedAt == nil && mine.runs[0].startedAt == 300)
        #expect(mine.newestTwo == Array(mine.runs.prefix(2)))
    }

    @Test("the journal's tables have the columns its records write, so rows move between the stores as they are")
    func tablesHoldTheRecordsColumns() throws {
        let catalog = try PostgresCatalog(location: try SharedCluster.freshDatabase())
        defer { catalog.close() }
        #expect(try catalog.appliedMigrations().contains("catalog-imports"))
        var run = ImportRunRecord(roots: "[]", mode: "copy", worker: "h.1", startedAt: 1)
        run.id = 1
        run.finishedAt = 2
        run.reportJson = "{}"
        let file = ImportFileRecord(sourcePath: "/a/b.jpg", directory: "/a", size: 1, modifiedNs: 2, outcome: .added, sha256: "s",
                                    pictureId: 1, jobId: 1, error: "e", sidecars: "[]", importId: 1, finishedAt: 3)
        for (table, names) in [("imports", try PostgresRowCoding.columns(of: run, naming: PostgresCatalog.column).names),
                               ("import_files", try PostgresRowCoding.columns(of: file, naming: PostgresCatalog.column).names)] {
            let columns = try catalog.readOne { session in
                try session.values("""
                    SELECT column_name::text FROM information_schema.columns WHERE table_name = \(table) ORDER BY ordinal_position
                    """, as: String.self)
            }
            #expect(columns == names, "\(table)")
        }
    }

    @Test("a dry run's reader reads the journal without creating or migrating anything, and names an unreachable server")
    func readerIsReadOnly() throws {
        let location = try SharedCluster.freshDatabase()
        let url = location.description
        let empty = try PostgresImportJournalReader(url: url)
        #expect(try empty.importedFiles(inDirectory: "/lib").isEmpty)
        empty.close()
        let pool = try PostgresPool(location: location, maximumConnections: 1)
        defer { pool.close() }
        let tables = try pool.withSession { session in
            try session.values("SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public'", as: String.self)
        }
        #expect(tables.isEmpty, "nothing created in an empty database: \(tables)")

        let catalog = try PostgresCatalog(location: location)
        defer { catalog.close() }
        let run = try catalog.startImport(ImportRunRecord(roots: #"["/lib"]"#, mode: "copy", worker: "h.1", startedAt: 1))
        let rows = (0..<3).map { Self.row($0, in: "/lib", outcome: .failed, job: nil, run: run, error: "broken") }
        for row in rows { try catalog.recordImportedFile(row) }
        let reader = try PostgresImportJournalReader(url: url)
        defer { reader.close() }
        let read = try reader.importedFiles(inDirectory: "/lib")
        #expect(read == (try catalog.importedFiles(inDirectory: "/lib")))
        #expect(read == Dictionary(uniqueKeysWithValues: rows.map { ($0.sourcePath, $0) }))

        do {
            _ = try PostgresImportJournalReader(url: "postgres://nobody@127.0.0.1:1/none")
            Issue.record("a server that is not there was read")
        } catch {
            guard case .unavailable = error else {
                Issue.record("an unreachable server is reported as unavailable, not \(error)")
                return
            }
            #expect(error.description.contains("127.0.0.1:1"), "\(error)")
        }
    }
}
