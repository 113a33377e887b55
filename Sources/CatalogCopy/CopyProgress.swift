import Foundation
import Logging
import Terminal

/// How a copy shows how far it has come: a live bar on a terminal (rows copied of all, the
/// table at hand, rows a second, time left), a log line every few seconds elsewhere. Drawn
/// from the copying thread after each batch, so it needs no thread of its own.
public final class CopyProgress {
    public enum Style: Sendable, Equatable {
        /// The bar, through `Console` (which keeps log lines above it).
        case bar
        /// A log line every `interval` seconds, and one per table copied.
        case log
        /// Nothing but the summary.
        case none

        /// The bar on a terminal, log lines elsewhere.
        public static var automatic: Style { Console.shared.isTerminal ? .bar : .log }
    }

    private let style: Style
    private let logger: Logger
    private let interval: Double
    private var start = Date()
    private var total = 0
    private var done = 0
    private var lastDraw = Date.distantPast
    private var lastLog = Date()

    /// The bar's width in characters, and how often it is redrawn.
    static let barWidth = 28
    static let redrawSeconds = 0.2

    public init(style: Style, logger: Logger, interval: Double = 5) {
        self.style = style
        self.logger = logger
        self.interval = interval
    }

    /// The copy starts with `total` rows left to copy.
    func begin(total: Int) {
        self.total = total
        done = 0
        start = Date()
        lastLog = start
    }

    /// A batch of `rows` of `table` has been committed.
    func advance(table: String, rows: Int) {
        done += rows
        let now = Date()
        switch style {
        case .bar where now.timeIntervalSince(lastDraw) >= Self.redrawSeconds:
            lastDraw = now
            Console.shared.progress(Self.render(done: done, total: total, table: table, elapsed: now.timeIntervalSince(start)))
        case .log where now.timeIntervalSince(lastLog) >= interval:
            lastLog = now
            logger.info("copying", metadata: ["table": "\(table)", "rows": "\(done)", "of": "\(total)"])
        default:
            break
        }
    }

    /// Every row of `table` is in (a log line in the log style).
    func finished(table: String, rows: Int) {
        guard style == .log else { return }
        logger.info("table copied", metadata: ["table": "\(table)", "rows": "\(rows)"])
    }

    /// Removes the bar.
    func end() {
        if style == .bar { Console.shared.endProgress() }
    }

    /// One bar, e.g. `[#######.....................] 12000/52000 rows  pictures  4100 rows/s  ETA 10s`.
    static func render(done: Int, total: Int, table: String, elapsed: Double) -> String {
        let total = max(total, done)
        let filled = total > 0 ? Int(Double(barWidth) * Double(done) / Double(total)) : 0
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        let left = rate > 0 ? "\(Int((Double(total - done) / rate).rounded()))s" : "--"
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: barWidth - filled) + "] "
            + "\(done)/\(total) rows  \(table)  \(Int(rate)) rows/s  ETA \(left)"
    }
}
