import Foundation
import Logging
import Terminal

/// How far `library copy` has come, shown while it runs on a thread of its own: on a terminal a
/// live bar (objects and bytes settled of all, a rate, the time left, failures) redrawn a few
/// times a second below the log lines; elsewhere a log line every `interval` seconds. Both count
/// only up: the totals are fixed before the first file goes, and the last drawing shows N/N.
public final class LibraryCopyProgress: @unchecked Sendable {
    // @unchecked: the counters and `running` are touched only while `condition` is locked;
    // the other properties never change after `start`, which runs before the thread does.
    public enum Style: Sendable, Equatable {
        /// The bar, through `Console`.
        case bar
        /// A log line every `interval` seconds.
        case log
        /// Nothing but the summary.
        case none

        /// The bar on a terminal, log lines elsewhere.
        public static var automatic: Style { Console.shared.isTerminal ? .bar : .log }
    }

    /// Where a copy stands.
    struct Snapshot: Sendable, Equatable {
        var objects = 0
        var totalObjects = 0
        var bytes: Int64 = 0
        var totalBytes: Int64 = 0
        var failed = 0
        var elapsed = 0.0
    }

    private let style: Style
    private let interval: Double
    private let logger: Logger
    private let condition = NSCondition()
    private var running = false
    private var counts = Snapshot()
    private var started = Date()
    private var thread: Thread?

    /// The bar's width in characters, and how often it is redrawn.
    static let barWidth = 28
    static let redrawSeconds = 0.2

    public init(style: Style, logger: Logger, interval: Double = 5) {
        self.style = style
        self.logger = logger
        self.interval = interval
    }

    /// The copy begins with these totals; drawing starts.
    func start(objects: Int, bytes: Int64) {
        condition.lock()
        counts = Snapshot(totalObjects: objects, totalBytes: bytes)
        started = Date()
        running = style != .none
        condition.unlock()
        guard style != .none else { return }
        let thread = Thread { [self] in loop() }
        thread.name = "copy-progress"
        self.thread = thread
        thread.start()
    }

    /// One more object settled, of `bytes`.
    func advance(bytes: Int64, failed: Bool) {
        condition.lock()
        counts.objects += 1
        counts.bytes += bytes
        if failed { counts.failed += 1 }
        condition.unlock()
    }

    /// The last drawing (N/N when all settled), then the bar is removed.
    func finish() {
        condition.lock()
        let wasRunning = running
        running = false
        condition.broadcast()
        condition.unlock()
        guard wasRunning else { return }
        while let thread, !thread.isFinished { usleep(1_000) }
        let last = snapshot()
        switch style {
        case .bar:
            Console.shared.progress(Self.barLine(last, width: Self.barWidth))
            Console.shared.endProgress()
        case .log:
            logger.info("copy progress", metadata: Self.logFields(last))
        case .none:
            break
        }
    }

    private func snapshot() -> Snapshot {
        condition.lock()
        defer { condition.unlock() }
        var copy = counts
        copy.elapsed = Date().timeIntervalSince(started)
        return copy
    }

    private func loop() {
        var lastLog = Date()
        while true {
            condition.lock()
            let deadline = Date(timeIntervalSinceNow: Self.redrawSeconds)
            while running, condition.wait(until: deadline) {}
            let stillRunning = running
            condition.unlock()
            guard stillRunning else { return }
            if style == .bar {
                Console.shared.progress(Self.barLine(snapshot(), width: Self.barWidth))
            } else if Date().timeIntervalSince(lastLog) >= interval {
                lastLog = Date()
                logger.info("copy progress", metadata: Self.logFields(snapshot()))
            }
        }
    }

    /// Bytes a second settled so far, and the time left at that rate.
    static func rateAndETA(_ s: Snapshot) -> (objectsPerSecond: Double, eta: String) {
        let objectRate = s.elapsed > 0 ? Double(s.objects) / s.elapsed : 0
        let byteRate = s.elapsed > 0 ? Double(s.bytes) / s.elapsed : 0
        let left: Double?
        if s.objects >= s.totalObjects {
            left = 0
        } else if s.totalBytes > 0 && byteRate > 0 {
            left = Double(max(0, s.totalBytes - s.bytes)) / byteRate
        } else if objectRate > 0 {
            left = Double(s.totalObjects - s.objects) / objectRate
        } else {
            left = nil
        }
        return (objectRate, left.map(duration) ?? "--")
    }

    /// `[#######.....] 1200/10000 objects  14.2 MB/120.5 MB  310 objects/s  ETA 28s  failed 0`.
    static func barLine(_ s: Snapshot, width: Int) -> String {
        let total = max(s.totalObjects, s.objects)
        let fraction = total > 0 ? Double(s.objects) / Double(total) : 1
        let filled = min(width, Int((fraction * Double(width)).rounded(.down)))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let (rate, eta) = rateAndETA(s)
        return "[\(bar)] \(s.objects)/\(total) objects  \(LibraryCopySummary.megabytes(s.bytes))/\(LibraryCopySummary.megabytes(max(s.totalBytes, s.bytes)))"
            + "  \(String(format: "%.0f", rate)) objects/s  ETA \(eta)  failed \(s.failed)"
    }

    /// The fields of a progress log line: `objects=1200/10000 bytes=14200000/120500000 ...`.
    static func logFields(_ s: Snapshot) -> Logger.Metadata {
        let (rate, eta) = rateAndETA(s)
        return [
            "objects": "\(s.objects)/\(max(s.totalObjects, s.objects))",
            "bytes": "\(s.bytes)/\(max(s.totalBytes, s.bytes))",
            "objects_per_second": "\(String(format: "%.1f", rate))",
            "eta": "\(eta)",
            "failed": "\(s.failed)",
        ]
    }

    /// `45s`, `3m05s`, `2h10m`.
    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        if s >= 3600 { return "\(s / 3600)h\(String(format: "%02d", (s % 3600) / 60))m" }
        if s >= 60 { return "\(s / 60)m\(String(format: "%02d", s % 60))s" }
        return "\(s)s"
    }
}
