import Catalog
import Foundation
import GRDB
import Storage
import Testing

/// Uploads go ahead of the spool's backlog, and `?wait=` answers as soon as an upload ends.
@Suite("Uploads ahead of the backlog", .serialized)
struct UploadLaneTests {
    @Test(arguments: TestStore.available) func anUploadIsProcessedBeforeABacklogOfAFewHundredPhotosIsDrained(store: TestStore) async throws {
        let backlog = 200
        // 5.5 megapixels each: the backlog outlasts the upload's arrival by far. (Of 2 megapixels,
        // three quarters of it was done while a full test run, its disk busy, took 7.5 s to
        // accept the upload.)
        let photo = try Samples.bytes("Canon_EOS5D-MIII__K6A7944.JPG")
        var queued = 0
        // The backlog is in incoming/ before the workers start: a drop folder's, or `darkroom enqueue`'s.
        try await TestService.with(store: store, configure: { configuration in
            guard let spool = try? Spool(root: configuration.spoolRoot, settleSeconds: 0) else { return }
            for i in 0..<backlog where (try? spool.enqueue(bytes: Samples.distinct(photo, "backlog \(i)"), name: "backlog-\(i).jpg", sidecar: nil)) != nil {
                queued += 1
            }
        }) { service in
            #expect(queued == backlog)
            let sentAt = Date().timeIntervalSince1970
            let accepted = try await service.upload(Samples.distinct(try Samples.gpsPhoto(), "fresh upload"))
            let answeredAt = Date().timeIntervalSince1970
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
            let isBacklog = { (job: JobRecord) in job.sourceName.hasPrefix("backlog-") }
            let doneBefore = jobs.filter { isBacklog($0) && $0.finishedAt <= upload.finishedAt }.count
            // Once the upload was handed over, the next photo a worker took was the upload: only a
            // photo a worker had already taken off the queue (one per worker) may start in between.
            let overtaking = jobs.filter { isBacklog($0) && $0.startedAt > answeredAt && $0.startedAt < upload.startedAt }
            #expect(overtaking.count <= service.configuration.concurrency, "\(overtaking.map(\.sourceName)) started after the upload arrived")
            #expect(doneBefore < backlog, "the upload was done after the backlog was drained (its POST took \(String(format: "%.1f", answeredAt - sentAt)) s)")
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

extension TestService {
    /// Every job of the catalog, by id.
    func allJobs() throws -> [JobRecord] {
        if let postgres { return try postgres.allJobs() }
        return try sqliteCatalog().read { db in try JobRecord.order(Column("id")).fetchAll(db) }
    }
}
