import Testing
@testable import Ingest

/// The progress bar's count: photos done of photos found, which never shrinks while photos
/// move from waiting to in hand (counted by neither) to done.
@Suite("Progress count")
struct ProgressCountTests {
    @Test func theTotalNeverShrinksAndEndsAtTheCountDone() {
        // 40 photos found; two workers take two at a time: waiting drops before done rises.
        // The first draw follows the first scan, which offers every photo found to the workers.
        var done = 0
        var waiting = 40
        var found = ProgressBar.found(before: 0, done: done, waiting: waiting)
        var seen = [found]
        while done < 40 {
            waiting -= min(2, waiting)
            found = ProgressBar.found(before: found, done: done, waiting: waiting)
            seen.append(found)
            done += 2
            found = ProgressBar.found(before: found, done: done, waiting: waiting)
            seen.append(found)
        }
        #expect(seen.allSatisfy { $0 == 40 }, "\(seen)")
        // Photos arriving meanwhile raise it.
        #expect(ProgressBar.found(before: 40, done: 40, waiting: 5) == 45)
    }
}
