import Foundation
import Terminal

/// The live progress line of a run on a terminal: done/total, photos per second, ETA, failures.
public final class ProgressBar: @unchecked Sendable {
    // @unchecked: drawn from the one scanning thread only.
    private let start: Date
    private var lastDraw = Date.distantPast
    private let width = 28
    /// Photos found so far: never less than before, since a photo taken from the waiting ones
    /// is in hand until it is done (and counted by neither).
    private var found = 0
    private var last: RunTally?

    public init(start: Date) {
        self.start = start
    }

    public func draw(_ tally: RunTally, waiting: Int) {
        found = Self.found(before: found, done: tally.done, waiting: waiting)
        last = tally
        guard Console.shared.isTerminal, Date().timeIntervalSince(lastDraw) >= 0.2 else { return }
        lastDraw = Date()
        Console.shared.progress(Self.render(done: tally.done, total: found, failed: tally.failed,
                                            elapsed: Date().timeIntervalSince(start), width: width))
    }

    /// The last line drawn once more with the final count (every photo found is done: N/N), then
    /// the line left in place.
    public func finish() {
        if Console.shared.isTerminal, let last {
            Console.shared.progress(Self.render(done: last.done, total: last.done, failed: last.failed,
                                                elapsed: Date().timeIntervalSince(start), width: width))
        }
        Console.shared.endProgress()
    }

    /// The photos found, from what was found before and what is done and waiting now.
    public static func found(before: Int, done: Int, waiting: Int) -> Int {
        max(before, done + waiting)
    }

    /// One progress line, e.g. `[#######.......]  120/480  3.1 photos/s  ETA 1m56s  failed 2`.
    public static func render(done: Int, total: Int, failed: Int, elapsed: Double, width: Int) -> String {
        let total = max(total, done)
        let fraction = total > 0 ? Double(done) / Double(total) : 0
        let filled = Int((fraction * Double(width)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        let eta = rate > 0 ? Self.duration(Double(total - done) / rate) : "--"
        return "[\(bar)] \(done)/\(total)  \(String(format: "%.1f", rate)) photos/s  ETA \(eta)  failed \(failed)"
    }

    public static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        if s >= 3600 { return "\(s / 3600)h\(String(format: "%02d", (s % 3600) / 60))m" }
        if s >= 60 { return "\(s / 60)m\(String(format: "%02d", s % 60))s" }
        return "\(s)s"
    }
}
