import Catalog
import ChildProcesses
import Foundation
import GRDB
import Testing

/// Distinct small photos made from a real one: bytes after a JPEG's end marker are ignored by
/// decoders but change the hash, so each copy is a different picture that renders quickly.
func distinctPhotos(_ count: Int) throws -> [[UInt8]] {
    let base = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Workspace.packageRoot + "/samples/issue-exifr-59.jpg")))
    return (0..<count).map { base + Array("darkroom-test-\($0)".utf8) }
}

@Suite("Crash safety and several workers", .serialized)
struct CrashSafetyTests {
    @Test(arguments: CatalogKind.available) func killingTheWorkerAtManyPointsLosesAndDoublesNothing(store: CatalogKind) throws {
        // On PostgreSQL a killed run's photos wait under leases in the shared queue: a short
        // lease gives them back to the next run. The kills are the test's own, not a photo
        // crashing its worker: a photo in hand at several of them (a slow machine keeps each
        // longer in hand) must not fail as `crashed`, so it outlives more deaths than the runs.
        let space = try Workspace(leaseSeconds: store == .postgres ? 2 : 600, maxRecoveries: 13, store: store)
        let photos = try distinctPhotos(240)
        for (i, bytes) in photos.enumerated() {
            try space.drop(bytes: bytes, as: "batch\(i % 4)/p\(i).jpg")
        }
        var generator = SystemRandomNumberGenerator()
        var kills = 0
        func jobs() -> Int { (try? space.records().jobs.count) ?? 0 }
        for _ in 0..<12 {
            // Each run is killed once it has committed a few more photos (then a random moment
            // later), so it is cut short mid-work however fast the machine drains the spool.
            let before = jobs()
            let target = before + Int.random(in: 1...12, using: &generator)
            let process = try space.start(["run", "--once", "--no-progress"]).process
            while process.isRunning && jobs() < target { usleep(2_000) }
            usleep(UInt32.random(in: 0...40_000, using: &generator))
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                kills += 1
            }
            process.waitForExit()
        }
        let last = try space.run(["run", "--once", "--no-progress"])
        #expect(last.status == 0, "\(last.stderr.suffix(2000))")
        #expect(kills >= 3, "the run must actually be interrupted several times (was \(kills))")

        let (pictures, allJobs, variants) = try space.records()
        #expect(pictures.count == photos.count, "no photo lost, none doubled")
        #expect(Set(pictures.map(\.sourceName)).count == photos.count)
        #expect(variants.count == photos.count * 4)
        for path in pictures.map(\.originalPath) + variants.map(\.path) {
            #expect(FileManager.default.fileExists(atPath: space.library + "/" + path), "\(path) is on disk")
        }
        let failedJobs = allJobs.filter { $0.outcome == .failed }
        #expect(failedJobs.isEmpty, "\(failedJobs.map { $0.error ?? "" })")
        #expect(space.files(under: space.incoming).isEmpty)
        #expect(space.files(under: space.spool + "/processing").isEmpty)
        #expect(space.files(under: space.spool + "/queued").isEmpty)
        #expect(space.files(under: space.spool + "/failed").isEmpty)
        let strays = (space.files(under: space.library) + space.files(under: space.spool)).filter { $0.contains(".tmp-darkroom-") || $0.hasSuffix(".partial") }
        #expect(strays.isEmpty, "\(strays)")
    }

    @Test(arguments: CatalogKind.available) func twoProcessesOnOneSpoolProcessEachPhotoOnce(store: CatalogKind) throws {
        let space = try Workspace(store: store)
        let photos = try distinctPhotos(120)
        for (i, bytes) in photos.enumerated() {
            try space.drop(bytes: bytes, as: "p\(i).jpg")
        }
        let first = try space.start(["run", "--once", "--no-progress"])
        let second = try space.start(["run", "--once", "--no-progress"])
        let firstLog = first.finish()
        let secondLog = second.finish()
        #expect(first.process.terminationStatus == 0)
        #expect(second.process.terminationStatus == 0)

        let jobs = try space.records().jobs
        #expect(jobs.count == photos.count, "each photo processed exactly once")
        #expect(Set(jobs.map(\.sourceName)).count == photos.count)
        #expect(jobs.allSatisfy { $0.outcome == .added })
        let workers = Set(jobs.map(\.worker))
        #expect(workers.count == 2, "both processes took part: \(workers)")
        let lines = (firstLog + secondLog).split(separator: "\n").filter { $0.contains("outcome=added") }
        #expect(lines.count == photos.count)
    }
}
