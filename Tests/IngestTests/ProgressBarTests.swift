import Testing
@testable import Ingest

@Suite("Progress line")
struct ProgressBarTests {
    @Test func showsDoneTotalRateEtaAndFailures() {
        let line = ProgressBar.render(done: 120, total: 480, failed: 2, elapsed: 40, width: 8)
        #expect(line == "[##......] 120/480  3.0 photos/s  ETA 2m00s  failed 2")
    }

    @Test func beforeAnyPhotoTheEtaIsUnknown() {
        #expect(ProgressBar.render(done: 0, total: 10, failed: 0, elapsed: 0, width: 4) == "[....] 0/10  0.0 photos/s  ETA --  failed 0")
    }

    @Test func durationsReadNaturally() {
        #expect(ProgressBar.duration(5) == "5s")
        #expect(ProgressBar.duration(125) == "2m05s")
        #expect(ProgressBar.duration(7260) == "2h01m")
    }
}
