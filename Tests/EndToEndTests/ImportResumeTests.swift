import Catalog
import CatalogImports
import ChildProcesses
import Foundation
import GRDB
import Testing

/// What a catalog holds after an import, without the ids and names that depend on the order
/// the photos happened to be processed in.
struct CatalogContent: Equatable {
    /// Per picture (by SHA-256): trusted time, place, author, and the SHA-256 of its moment's members.
    var pictures: [String: String]
    /// Each moment: its kind and its members' SHA-256, and its cover's.
    var moments: Set<String>
    /// Jobs by outcome.
    var jobs: [String: Int]
    /// The journal: each file (relative to the library) and whether it is done or failed.
    var journal: [String: String]

    init(_ space: Workspace, library: String) throws {
        let catalog = try space.catalog()
        let all = try catalog.read { db in try PictureRecord.fetchAll(db) }
        let bySHA = Dictionary(uniqueKeysWithValues: all.compactMap { p in p.id.map { ($0, p.sha256) } })
        var members: [Int64: [String]] = [:]
        for picture in all { if let moment = picture.momentId { members[moment, default: []].append(picture.sha256) } }
        pictures = Dictionary(uniqueKeysWithValues: all.map { p in
            (p.sha256, "\(p.momentTime.map { String($0) } ?? "-") \(p.latitude.map { String($0) } ?? "-") \(p.longitude.map { String($0) } ?? "-") \(p.authorId ?? "-") "
                + (p.momentId.map { members[$0, default: []].sorted().joined(separator: ",") } ?? "no moment"))
        })
        moments = Set(try catalog.moments().map { m in
            "\(m.kind) \(members[m.id, default: []].sorted().joined(separator: ",")) cover \(m.coverPictureId.flatMap { bySHA[$0] } ?? "-")"
        })
        let rows = try catalog.read { db in try JobRecord.fetchAll(db) }
        jobs = Dictionary(grouping: rows, by: { $0.outcome.rawValue }).mapValues(\.count)
        let files = try catalog.read { db in try ImportFileRecord.fetchAll(db) }
        journal = Dictionary(uniqueKeysWithValues: files.map { file in
            (String(file.sourcePath.dropFirst(library.count)), file.outcome == .failed ? "failed" : "done")
        })
    }
}

@Suite("Import: interrupted and resumed", .serialized)
struct ImportResumeTests {
    /// 60 photos of a Takeout export in 6 outings, with duplicates, non-photos and a broken one.
    static func makeLibrary(_ tree: LibraryTree) throws {
        let t0 = 1_561_975_200.0
        let places = [(48.8566, 2.3522), (45.1885, 5.7245), (43.2965, 5.3698)]
        for i in 0..<60 {
            let outing = i / 10
            let folder = "Takeout/Google Photos/Photos from 201\(outing % 3)/"
            let place = places[outing % 3]
            let name = "IMG_\(1000 + i).jpg"
            try tree.write(folder + name, LibraryTree.hopper("r\(i)"))
            try tree.write(folder + name + ".json", text: LibraryTree.takeout(
                title: name, taken: t0 + Double(outing) * 86_400 + Double(i % 10) * 600,
                geo: near(place.0, place.1, north: Double(i % 10) * 40)))
        }
        // Bare copies of three Takeout photos, walked before the Takeout folder: whichever of
        // the same bytes comes first is the picture (the order changes from run to run), and a
        // Takeout original that comes later completes it with its sidecar's time and place, so
        // the catalog is the same either way.
        for i in [3, 17, 42] {
            try tree.write("Copies/copy-of-\(i).jpg", LibraryTree.hopper("r\(i)"))
        }
        try tree.write("Copies/broken.jpg", Array(LibraryTree.sample("Landscape_6.jpg").prefix(2000)))
        try tree.write("Copies/readme.txt", text: "copies\n")
    }

    /// Jobs in a catalog, read without migrating or locking it (0 before it exists).
    static func jobCount(_ path: String) -> Int {
        guard FileManager.default.fileExists(atPath: path) else { return 0 }
        var configuration = GRDB.Configuration()
        configuration.readonly = true
        guard let queue = try? DatabaseQueue(path: path, configuration: configuration) else { return 0 }
        return (try? queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM jobs") }) ?? 0
    }

    @Test func killingAnImportAtRandomPointsAndResumingGivesTheSameCatalog() throws {
        let whole = try Workspace()
        let wholeTree = LibraryTree(whole.root + "/lib")
        try Self.makeLibrary(wholeTree)
        let once = try whole.run(["import", wholeTree.root, "--author", "ann", "--progress", "none"])
        #expect(once.status == 1, "one broken photo: \(once.stderr.suffix(1000))")
        let expected = try CatalogContent(whole, library: wholeTree.root)
        #expect(expected.pictures.count == 60)
        #expect(expected.jobs == ["added": 60, "duplicate": 3, "failed": 1])
        #expect(expected.moments.count == 6)

        let space = try Workspace()
        let tree = LibraryTree(space.root + "/lib")
        try Self.makeLibrary(tree)
        var generator = SystemRandomNumberGenerator()
        var kills = 0
        var interrupts = 0
        var sawAbandoned = false
        for round in 0..<12 {
            let launched = try space.start(["import", tree.root, "--author", "ann", "--progress", "none"])
            // At a random point soon after this run has made progress (a job more than before),
            // so that every run is cut short, however fast or loaded the machine.
            let before = Self.jobCount(space.catalogPath)
            let patience = Date().addingTimeInterval(60)
            while launched.process.isRunning, Date() < patience, Self.jobCount(space.catalogPath) <= before { usleep(2_000) }
            usleep(UInt32.random(in: 0...40_000, using: &generator))
            guard launched.process.isRunning else {
                launched.process.waitForExit()
                break
            }
            if round == 2 {
                // Ctrl-C: the photos in hand finish and are journaled; the run says it was interrupted.
                kill(launched.process.processIdentifier, SIGINT)
                launched.process.waitForExit()
                if launched.process.terminationReason == .uncaughtSignal {
                    // Under load the process may not have set up its handler yet: SIGINT then
                    // ends it at once, before it has committed anything, as a kill would.
                    #expect(launched.process.terminationStatus == SIGINT)
                } else {
                    #expect([0, 1, 2].contains(launched.process.terminationStatus))
                    if launched.process.terminationStatus == 2 {
                        interrupts += 1
                        #expect(launched.stdout.contains("interrupted (run the same command again to continue)"))
                    }
                }
                let jobs = try space.catalog().read { db in try JobRecord.fetchCount(db) }
                let journaled = try space.catalog().read { db in try ImportFileRecord.fetchCount(db) }
                #expect(jobs == journaled, "a graceful stop journals every photo it committed")
            } else {
                kill(launched.process.processIdentifier, SIGKILL)
                launched.process.waitForExit()
                kills += 1
                // A killed run cannot record its end: status never shows it as still running, but
                // as abandoned (unless it was killed before it had recorded its start at all).
                let status = try space.run(["status", "--json"])
                let report = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
                let runs = try #require(report["imports"] as? [[String: Any]])
                #expect(!runs.contains { $0["outcome"] as? String == "running" }, "\(runs)")
                if runs.first?["outcome"] as? String == "abandoned" {
                    sawAbandoned = true
                    #expect(try space.run(["status"]).stdout.contains("abandoned, started"))
                }
            }
        }
        let last = try space.run(["import", tree.root, "--author", "ann", "--progress", "none"])
        #expect([0, 1].contains(last.status), "\(last.stderr.suffix(1000))")
        #expect(kills >= 3, "the import must really be killed several times (was \(kills))")
        #expect(interrupts <= 1)
        #expect(sawAbandoned, "status showed a killed import as abandoned")

        let resumed = try CatalogContent(space, library: tree.root)
        #expect(resumed.pictures == expected.pictures)
        #expect(resumed.moments == expected.moments)
        #expect(resumed.jobs == expected.jobs, "no photo processed twice")
        #expect(resumed.journal == expected.journal)
        #expect(try space.run(["moments", "rebuild", "--check"]).status == 0)
        // Each later run recorded the killed ones before it as abandoned; the last one finished.
        let runs = try space.catalog().importRuns(limit: 20)
        #expect(runs.first?.outcome == .finished)
        // (A run killed while it was still opening the catalog never recorded its start.)
        let abandoned = runs.filter { $0.outcome == .abandoned }.count
        #expect(abandoned >= 1 && abandoned <= kills, "\(abandoned) abandoned runs for \(kills) kills")
        #expect(!runs.contains { $0.outcome == .running })
    }
}
