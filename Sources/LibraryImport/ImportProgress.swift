import Foundation
import Ingest
import Logging
import Terminal

/// How an import shows its progress.
public enum ImportProgressStyle: String, Sendable, CaseIterable {
    /// A live bar on a terminal, log lines otherwise (the default).
    case auto
    /// The live bar, even when standard error is not a terminal.
    case bar
    /// A log line every few seconds, even on a terminal.
    case log
    /// Nothing but the summary at the end.
    case none

    /// The style to use: `auto` becomes `bar` on a terminal and `log` elsewhere.
    public func resolved(isTerminal: Bool) -> ImportProgressStyle {
        self == .auto ? (isTerminal ? .bar : .log) : self
    }
}

/// Shows an import's progress while it runs, on its own thread: a live bar (done/total, photos
/// per second, ETA, failures so far) redrawn a few times a second, or a log line every
/// `interval` seconds. The bar goes through `Console` on a terminal, which keeps log lines above
/// it; forced onto a file or pipe (`--progress bar`), it is written the same way, as text.
final class ImportProgress: @unchecked Sendable {
    // @unchecked: `running` and `lastBar` are touched only while `condition` is locked; the
    // other properties never change after init.
    private let style: ImportProgressStyle
    private let interval: Double
    private let logger: Logger
    private let snapshot: @Sendable () -> ImportLedger.Snapshot
    private let condition = NSCondition()
    private var running = false
    private var lastBar: String?
    private var thread: Thread?

    /// The bar's width in characters.
    static let barWidth = 28
    /// How often the bar is redrawn, in seconds.
    static let redrawSeconds = 0.2

    /// `style` must be resolved (not `auto`).
    init(style: ImportProgressStyle, interval: Double, logger: Logger, snapshot: @escaping @Sendable () -> ImportLedger.Snapshot) {
        self.style = style
        self.interval = interval
        self.logger = logger
        self.snapshot = snapshot
    }

    /// Starts drawing (or logging) on a thread of its own.
    func start() {
        guard style == .bar || style == .log else { return }
        condition.lock()
        running = true
        condition.unlock()
        let thread = Thread.named("import-progress") { [self] in self.loop() }
        self.thread = thread
        thread.start()
    }

    /// Stops: the bar is drawn one last time and removed; a last log line says where it ended.
    func finish() {
        condition.lock()
        let wasRunning = running
        running = false
        condition.broadcast()
        condition.unlock()
        guard wasRunning else { return }
        while let thread, !thread.isFinished { usleep(1_000) }
        switch style {
        case .bar: clearBar()
        case .log: logLine(snapshot())
        default: break
        }
    }

    /// Runs `body` (which logs) with the bar lifted out of its way, when the bar is drawn as text.
    func aside(_ body: () -> Void) {
        guard style == .bar, !Console.shared.isTerminal else { return body() }
        condition.lock()
        defer { condition.unlock() }
        if lastBar != nil { FileHandle.standardError.write(Data(Self.clear.utf8)) }
        body()
        if let lastBar { FileHandle.standardError.write(Data((Self.clear + lastBar).utf8)) }
    }

    private static let clear = "\r\u{1B}[2K"

    private func loop() {
        var lastLog = Date()
        while true {
            condition.lock()
            let deadline = Date(timeIntervalSinceNow: style == .bar ? Self.redrawSeconds : min(interval, Self.redrawSeconds * 5))
            while running, condition.wait(until: deadline) {}
            let stillRunning = running
            condition.unlock()
            guard stillRunning else { return }
            if style == .bar {
                drawBar(Self.barLine(snapshot(), width: Self.barWidth))
            } else if Date().timeIntervalSince(lastLog) >= interval {
                lastLog = Date()
                logLine(snapshot())
            }
        }
    }

    private func drawBar(_ line: String) {
        if Console.shared.isTerminal {
            Console.shared.progress(line)
            return
        }
        condition.lock()
        lastBar = line
        FileHandle.standardError.write(Data((Self.clear + line).utf8))
        condition.unlock()
    }

    private func clearBar() {
        drawBar(Self.barLine(snapshot(), width: Self.barWidth))
        if Console.shared.isTerminal {
            Console.shared.endProgress()
            return
        }
        condition.lock()
        if lastBar != nil { FileHandle.standardError.write(Data((Self.clear).utf8)) }
        lastBar = nil
        condition.unlock()
    }

    private func logLine(_ s: ImportLedger.Snapshot) {
        logger.info("import progress", metadata: Self.logFields(s))
    }

    /// Photos per second of this run's processing, and the time left at that rate.
    static func rateAndETA(_ s: ImportLedger.Snapshot) -> (rate: Double, eta: String) {
        let rate = s.elapsed > 0 ? Double(s.processed) / s.elapsed : 0
        let left = max(0, s.total - s.settled)
        let eta = left == 0 ? ProgressBar.duration(0) : rate > 0 ? ProgressBar.duration(Double(left) / rate) : "--"
        return (rate, eta)
    }

    /// The live bar, e.g. `[#######.......] 120/480  3.1 photos/s  ETA 1m56s  failed 2`.
    static func barLine(_ s: ImportLedger.Snapshot, width: Int) -> String {
        let total = max(s.total, s.settled)
        let fraction = total > 0 ? Double(s.settled) / Double(total) : 0
        let filled = min(width, Int((fraction * Double(width)).rounded(.down)))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let (rate, eta) = rateAndETA(s)
        return "[\(bar)] \(s.settled)/\(total)  \(String(format: "%.1f", rate)) photos/s  ETA \(eta)  failed \(s.failed)"
    }

    /// The fields of a progress log line: `done=120/480 photos_per_second=3.1 eta=1m56s failed=2 ...`.
    static func logFields(_ s: ImportLedger.Snapshot) -> Logger.Metadata {
        let (rate, eta) = rateAndETA(s)
        return [
            "done": "\(s.settled)/\(max(s.total, s.settled))",
            "photos_per_second": "\(String(format: "%.1f", rate))",
            "eta": "\(eta)",
            "failed": "\(s.failed)",
            "duplicates": "\(s.duplicates)",
            "skipped": "\(s.skipped)",
        ]
    }
}
