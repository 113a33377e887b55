import Foundation
import Testing
@testable import Ingest

/// When a run lists `incoming/` again: a watching daemon for arrivals at most a tenth of its
/// time, at once for an urgent photo, and its memory of listed names bounded by the spool.
@Suite("Listing pace")
struct ListingPaceTests {
    let start = Date(timeIntervalSince1970: 1_000_000)

    @Test func aWatchingLoopWaitsTenTimesTheLastListingBeforeListingForArrivals() {
        var pace = ListingPace()
        let due1 = pace.isDue(now: start, watching: true, required: false, urgentNames: { [] })
        #expect(due1, "the first wake lists")
        // A listing of 0.2 s: the next one for an arrival no sooner than 2 s after it ended.
        pace.recordListing(["a.jpg"], marked: [], began: start, ended: start + 0.2, watching: true)
        let due2 = pace.isDue(now: start + 1.0, watching: true, required: false, urgentNames: { [] })
        #expect(!due2)
        let resume = try! #require(pace.resumeIn(now: start + 1.0))
        #expect(abs(resume - 1.2) < 1e-5, "\(resume)")
        let due3 = pace.isDue(now: start + 2.3, watching: true, required: false, urgentNames: { [] })
        #expect(due3)
        #expect(pace.resumeIn(now: start + 2.3) == nil, "nothing deferred once it lists")
    }

    @Test func theLoopsOwnReasonListsAtOnceAndARunOnceIsNeverThrottled() {
        var pace = ListingPace()
        pace.recordListing(["a.jpg"], marked: [], began: start, ended: start + 1, watching: true)
        let due4 = pace.isDue(now: start + 1.1, watching: true, required: true, urgentNames: { [] })
        #expect(due4)
        // Not watching: only the loop's reason counts, and nothing is deferred.
        let due5 = pace.isDue(now: start + 1.1, watching: false, required: false, urgentNames: { [] })
        #expect(!due5)
        #expect(pace.resumeIn(now: start + 1.1) == nil)
    }

    @Test func anUrgentArrivalIsListedAtOnceAndOnlyOnce() {
        var pace = ListingPace()
        pace.recordListing(["a.jpg"], marked: [], began: start, ended: start + 1, watching: true)
        var reads = 0
        let marked: () -> Set<String> = { reads += 1; return ["upload.jpg"] }
        let due6 = pace.isDue(now: start + 1.5, watching: true, required: false, urgentNames: marked)
        #expect(due6)
        #expect(reads == 1)
        pace.recordListing(["a.jpg", "upload.jpg"], marked: marked(), began: start + 1.5, ended: start + 2.5, watching: true)
        // Listed now: its mark, still there while it is processed, lists nothing more.
        let due7 = pace.isDue(now: start + 3, watching: true, required: false, urgentNames: marked)
        #expect(!due7)
        // Claimed and out of incoming/ at the next listing, but still marked: still known.
        pace.recordListing(["a.jpg"], marked: marked(), began: start + 20, ended: start + 20.1, watching: true)
        let due8 = pace.isDue(now: start + 20.2, watching: true, required: false, urgentNames: marked)
        #expect(!due8)
    }

    @Test func theNamesKeptAreThoseStillInTheSpoolOrStillMarked() {
        var pace = ListingPace()
        // A daemon that has seen thousands of photos come and go keeps only the last listing's
        // names and the marked ones it has listed.
        for round in 0..<50 {
            let names = (0..<100).map { "r\(round)-\($0).jpg" }
            let marks: Set<String> = round == 3 ? ["r3-7.jpg"] : round > 3 && round < 10 ? ["r3-7.jpg"] : []
            pace.recordListing(names, marked: marks, began: start + Double(round), ended: start + Double(round) + 0.01, watching: true)
        }
        #expect(pace.listed.count == 100)
        #expect(pace.listed.contains("r49-0.jpg") && !pace.listed.contains("r3-7.jpg"))
        pace.recordListing(["x.jpg"], marked: ["r49-5.jpg"], began: start + 60, ended: start + 60.01, watching: true)
        #expect(pace.listed == ["x.jpg", "r49-5.jpg"])
    }
}
