import Foundation
import Terminal

/// The live progress line of a run on a terminal: done/total, photos per second, ETA, failures.
public final class ProgressBar: @unchecked Sendable {
    // @unchecked: drawn from the one scanning thread only.
    private let start: Date
    private var lastDraw = Date.distantPast
    private let width = 28

    public init(start: Date) {
        self.start = start
    }

    public func draw(_ tally: RunTally, waiting: Int) {
        guard Console.shared.isTerminal, Date().timeIntervalSince(lastDraw) >= 0.2 else { return }
        lastDraw = Date()
        Console.shared.progress(Self.render(done: tally.done, total: tally.done + waiting, failed: tally.failed,
                                            elapsed: Date().timeIntervalSince(start), width: width))
    }

    public func finish() {
        Console.shared.endProgress()
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
