import Testing
@testable import Ingest

/// The work queue's lanes: urgent photos first, the backlog never starved.
@Suite("Work queue lanes")
struct WorkQueueTests {
    @Test func anUrgentPhotoIsTakenNextAheadOfTheBacklog() {
        let queue = WorkQueue()
        queue.offer((0..<300).map { "b\($0).jpg" })
        #expect(queue.next() == "b0.jpg")
        queue.offer(["upload.jpg"], urgent: ["upload.jpg"])
        #expect(queue.next() == "upload.jpg")
        #expect(queue.next() == "b1.jpg")
    }

    @Test func aQueuedBacklogPhotoMarkedUrgentLaterMovesAhead() {
        let queue = WorkQueue()
        queue.offer(["a.jpg", "b.jpg", "c.jpg"])
        queue.offer(["a.jpg", "b.jpg", "c.jpg"], urgent: ["c.jpg"])
        #expect(queue.next() == "c.jpg")
        #expect(queue.next() == "a.jpg")
        #expect(queue.tally.seen == 3, "a name offered again is counted once")
    }

    @Test func theBacklogGetsOneTakeInEightWhileUploadsKeepArriving() {
        let queue = WorkQueue()
        queue.offer((0..<100).map { "b\($0)" })
        var taken: [String] = []
        for i in 0..<80 {
            // A new upload before every take: the urgent lane is never empty.
            queue.offer(["u\(i)"], urgent: ["u\(i)"])
            if let name = queue.next() {
                taken.append(name)
                queue.finished(name, .added)
            }
        }
        let backlog = taken.filter { $0.hasPrefix("b") }
        #expect(backlog.count == 80 / WorkQueue.backlogShare)
        #expect(backlog == (0..<backlog.count).map { "b\($0)" }, "the oldest backlog photos, in order")
    }

    @Test func aPhotoStillBeingWrittenLeavesTheQueueUncountedAndCanBeOfferedAgain() {
        let queue = WorkQueue()
        queue.offer(["slow.jpg"])
        #expect(queue.next() == "slow.jpg")
        queue.finished("slow.jpg", .stillWriting)
        #expect(queue.tally.seen == 0 && queue.tally.done == 0)
        #expect(queue.isIdle)
        queue.offer(["slow.jpg"])
        #expect(queue.next() == "slow.jpg")
        queue.finished("slow.jpg", .added)
        #expect(queue.tally.seen == 1 && queue.tally.added == 1)
    }
}
