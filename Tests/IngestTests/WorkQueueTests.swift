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

    @Test func aLaneKeepsItsOrderThroughLongBacklogsAndDropsOnlyWaitingNames() {
        var lane = NameLane()
        var taken: [String] = []
        // Appends and takes interleaved, past the sizes where the lane drops its taken front.
        for round in 0..<30 {
            for index in 0..<500 { lane.append("r\(round)-\(index)") }
            for _ in 0..<(round.isMultiple(of: 2) ? 300 : 650) where !lane.isEmpty { taken.append(lane.removeFirst()) }
        }
        while !lane.isEmpty { taken.append(lane.removeFirst()) }
        let expected = (0..<30).flatMap { round in (0..<500).map { "r\(round)-\($0)" } }
        let inOrder = taken == expected
        #expect(taken.count == expected.count && inOrder)
        lane.append("a")
        lane.append("b")
        lane.append("c")
        let first = lane.removeFirst()
        #expect(first == "a")
        let removedTaken = lane.remove("a"), removedWaiting = lane.remove("c")
        #expect(!removedTaken, "a taken name is not waiting")
        #expect(removedWaiting)
        #expect(lane.count == 1)
        let last = lane.removeFirst()
        #expect(last == "b" && lane.isEmpty)
    }
}

