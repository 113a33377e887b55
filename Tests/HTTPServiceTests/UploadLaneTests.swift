import Catalog
import Foundation
import GRDB
import Storage
import PostgresHarness
import Testing
@testable import HTTPService

/// Uploads go ahead of the spool's backlog, and `?wait=` answers as soon as an upload ends.
@Suite("Uploads ahead of the backlog", .serialized)
struct UploadLaneTests {
    /// What a served upload leaves in `/metrics`: this process accepted one upload and its
    /// workers added one photo, and its upload-to-done time is observed once (the status route
    /// seeing it done afterwards adds nothing).
    @Test(arguments: TestStore.available) func aServedUploadIsCountedOnceFromUploadToDone(store: TestStore) async throws {
        try await TestService.with(store: store) { service in
            let accepted = try await service.upload(Samples.distinct(try Samples.gpsPhoto(), "counted upload"))
            let id = try #require(try accepted.object()["id"] as? String)
            let status = try await service.settled(id, timeout: 300)["status"] as? String
            #expect(status == "done")
            _ = try await service.request(.GET, "/v1/uploads/\(id)?wait=5")
            let parsed = try ServiceMetricsTests.Parsed(try await service.request(.GET, "/metrics").text)
            #expect(parsed.value("darkroom_uploads_accepted_total") == 1)
            #expect(parsed.value("darkroom_photos_processed_total", ["outcome": "added"]) == 1)
            #expect(parsed.value("darkroom_upload_to_done_seconds_count") == 1)
            #expect(parsed.value("darkroom_catalog_pictures") == 1)
        }
    }

    /// With the shared queue, an accepted photo moves from incoming/ into queued/TOKEN/NAME and
    /// its job row follows; the answer may come first (a busy database), or the row may wait
    /// for a reconciliation. Meanwhile its status is queued, never "never accepted".
    @Test("an upload admitted into queued/ whose job is not recorded yet is queued, not 404",
          .enabled(if: SharedCluster.available, "PostgreSQL's server programs are not installed (make deps)"))
    func anUploadBetweenItsMoveAndItsJobIsQueued() async throws {
        try await TestService.with(store: .postgres, workers: false) { service in
            let id = UploadID.make()
            let folder = service.configuration.spoolRoot + "/queued/0123456789abcdef"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data(try Samples.hopper()).write(to: URL(fileURLWithPath: folder + "/" + UploadID.spoolName(id, extension: "jpg")))
            let answer = try await service.request(.GET, "/v1/uploads/\(id)")
            #expect(answer.status == 200, "\(answer.text)")
            #expect(try answer.object()["status"] as? String == "queued", "\(answer.text)")
            // An id that nothing holds is still unknown.
            #expect(try await service.request(.GET, "/v1/uploads/\(UploadID.make())").status == 404)
        }
    }

    @Test(arguments: TestStore.available) func anUploadIsProcessedBeforeABacklogOfAFewHundredPhotosIsDrained(store: TestStore) async throws {
        // A drop folder's backlog, kept stocked until the upload is accepted: however long a busy
        // machine takes to accept it, the workers are never without backlog photos when it
        // arrives. (A fixed backlog of 200 was drained once, on CI, while the POST took 10.4 s.)
        let photo = try Samples.bytes("Canon_EOS5D-MIII__K6A7944.JPG")
        let feeder = BacklogFeeder(photo: photo)
        try await TestService.with(store: store, configure: { configuration in
            feeder.spool = configuration.spoolRoot
            // The spool's folders, made as the service would make them.
            _ = try? Spool(root: configuration.spoolRoot, settleSeconds: 0)
            feeder.stockUp(to: BacklogFeeder.stock)
        }) { service in
            let feeding = Task { await feeder.keepStocked(waiting: { service.waitingBacklog() }) }
            let sentAt = Date().timeIntervalSince1970
            let accepted = try await service.upload(Samples.distinct(try Samples.gpsPhoto(), "fresh upload"))
            let answeredAt = Date().timeIntervalSince1970
            feeder.stop()
            await feeding.value
            let backlog = feeder.fed
            let id = try #require(try accepted.object()["id"] as? String)
            // The workers run niced: on a machine busy with other work the upload may take longer
            // than one wait. What is checked is the order the photos were taken in, not the time.
            let answer = try await service.request(.GET, "/v1/uploads/\(id)?wait=60")
            var status = try answer.object()["status"] as? String
            if status == "queued" || status == "processing" {
                status = try await service.settled(id, timeout: 300)["status"] as? String
            }
            #expect(status == "done", "\(answer.text)")
            let jobs = try service.allJobs()
            let upload = try #require(jobs.first { $0.sourceName == "\(id).jpg" })
            // Judged by the jobs' own times, not by when this test saw them: its requests may be
            // answered late on a busy machine while the workers go on.
            let isBacklog = { (job: JobRecord) in job.sourceName.hasPrefix(BacklogFeeder.prefix) }
            let doneBefore = jobs.filter { isBacklog($0) && $0.finishedAt <= upload.finishedAt }.count
            // Once the upload was handed over, the next photo a worker took was the upload: only a
            // photo a worker had already taken off the queue (one per worker) may start in between.
            let overtaking = jobs.filter { isBacklog($0) && $0.startedAt > answeredAt && $0.startedAt < upload.startedAt }
            #expect(overtaking.count <= service.configuration.concurrency, "\(overtaking.map(\.sourceName)) started after the upload arrived")
            #expect(doneBefore < backlog, "the upload was done after the backlog of \(backlog) was drained (its POST took \(String(format: "%.1f", answeredAt - sentAt)) s)")
            // The backlog goes on after it: ten more photos, or the rest.
            let wanted = min(10, backlog - doneBefore)
            let deadline = Date().addingTimeInterval(300)
            var after = 0
            repeat {
                after = try service.allJobs().filter { isBacklog($0) && $0.finishedAt > upload.finishedAt }.count
                if after >= wanted { break }
                try await Task.sleep(for: .milliseconds(100))
            } while Date() < deadline
            #expect(after >= wanted, "\(after) backlog photos done after the upload")
        }
    }

    @Test(arguments: TestStore.available) func waitAnswersWhenTheUploadEndsAndRefusesAWaitThatIsNotSeconds(store: TestStore) async throws {
        try await TestService.with(store: store) { service in
            let accepted = try await service.upload(Samples.distinct(try Samples.gpsPhoto(), "waited for"))
            let id = try #require(try accepted.object()["id"] as? String)
            // One request, no polling: it answers once the variants exist.
            let answer = try await service.request(.GET, "/v1/uploads/\(id)?wait=60")
            #expect(answer.status == 200)
            let state = try answer.object()
            #expect(state["status"] as? String == "done", "\(answer.text)")
            #expect(state["picture_id"] as? Int != nil)
            for bad in ["abc", "-1", "61", "nan"] {
                let refused = try await service.request(.GET, "/v1/uploads/\(id)?wait=\(bad)")
                #expect(refused.status == 400, "wait=\(bad): \(refused.text)")
            }
        }
    }

    @Test func aWaitThatRunsOutAnswersWithTheCurrentState() async throws {
        // No workers in this process: the upload stays queued.
        try await TestService.with(workers: false) { service in
            let accepted = try await service.upload(Samples.distinct(try Samples.gpsPhoto(), "never processed"))
            let id = try #require(try accepted.object()["id"] as? String)
            let answer = try await service.request(.GET, "/v1/uploads/\(id)?wait=0.3")
            #expect(answer.status == 200)
            #expect(try answer.object()["status"] as? String == "queued")
            // The upload route marked it urgent for any worker that scans the spool.
            let spool = try Spool(root: service.configuration.spoolRoot, settleSeconds: 0)
            #expect(spool.isUrgent("\(id).jpg"))
            #expect(spool.scan().urgent == ["\(id).jpg"])
        }
    }
}

/// Drops backlog photos into a service's `incoming/` as a drop folder's producer would (written
/// under a hidden name, then renamed into view), keeping a stock of them waiting until stopped.
final class BacklogFeeder: @unchecked Sendable {
    // @unchecked: `spool` is set once before the feeding starts; the counts are under `lock`.
    static let prefix = "backlog-"
    /// Photos kept waiting: more than the workers take in the time the feeder sleeps.
    static let stock = 24

    let photo: [UInt8]
    var spool = ""
    private let lock = NSLock()
    private var count = 0
    private var stopped = false

    init(photo: [UInt8]) {
        self.photo = photo
    }

    /// How many photos were dropped in.
    var fed: Int { lock.withLock { count } }

    func stop() { lock.withLock { stopped = true } }

    private var isStopped: Bool { lock.withLock { stopped } }

    /// Drops photos in until `target` more are waiting.
    func stockUp(to target: Int) {
        for _ in 0..<max(0, target) {
            let number = lock.withLock { count += 1; return count }
            let name = String(format: "%@%05d.jpg", Self.prefix, number)
            let hidden = spool + "/incoming/.feeding-" + name
            let bytes = Samples.distinct(photo, "backlog \(number)")
            guard FileManager.default.createFile(atPath: hidden, contents: Data(bytes)),
                  rename(hidden, spool + "/incoming/" + name) == 0 else {
                Issue.record("cannot drop \(name) into the spool")
                return
            }
        }
    }

    /// Tops the stock up every 20 ms until stopped; `waiting` counts the backlog photos not yet
    /// taken. It sleeps without holding a thread: the test runner's threads are few (one per core),
    /// and the upload it waits for needs one.
    func keepStocked(waiting: () -> Int) async {
        while !isStopped {
            stockUp(to: Self.stock - waiting())
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}

extension TestService {
    /// The backlog photos not yet taken by a worker: in `incoming/`, and (with the shared queue)
    /// admitted under `queued/` and not yet consumed.
    func waitingBacklog() -> Int {
        let incoming = (try? FileManager.default.contentsOfDirectory(atPath: configuration.spoolRoot + "/incoming")) ?? []
        let queued = postgres == nil ? [] : waiting()
        return (incoming + queued).filter { ($0 as NSString).lastPathComponent.hasPrefix(BacklogFeeder.prefix) }.count
    }

    /// Every job of the catalog, by id.
    func allJobs() throws -> [JobRecord] {
        if let postgres { return try postgres.allJobs() }
        return try sqliteCatalog().read { db in try JobRecord.order(Column("id")).fetchAll(db) }
    }
}
