import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// How log lines are written.
public enum LogFormat: String, Sendable, CaseIterable {
    /// One human-readable line per event: time, level, event, key=value fields.
    case text
    /// One JSON object per line, for log collectors.
    case json
}

/// The one writer of standard error: log lines, and on a terminal a progress bar kept below them.
public final class Console: @unchecked Sendable {
    // @unchecked: every mutable property is touched only while `lock` is held.
    private let lock = NSLock()
    private var bar: String?
    /// Whether standard error is a terminal (progress bars are drawn only there).
    public let isTerminal: Bool

    public static let shared = Console()

    private init() {
        isTerminal = isatty(STDERR_FILENO) == 1
    }

    /// Writes one line, keeping the progress bar (if any) below it.
    public func line(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        var out = ""
        if bar != nil { out += "\r\u{1B}[2K" }
        out += text + "\n"
        if let bar { out += bar }
        FileHandle.standardError.write(Data(out.utf8))
    }

    /// Draws or replaces the progress bar (terminal only).
    public func progress(_ text: String) {
        guard isTerminal else { return }
        lock.lock()
        defer { lock.unlock() }
        bar = text
        FileHandle.standardError.write(Data(("\r\u{1B}[2K" + text).utf8))
    }

    /// Removes the progress bar.
    public func endProgress() {
        lock.lock()
        defer { lock.unlock() }
        guard bar != nil else { return }
        bar = nil
        FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
    }
}

/// A swift-log handler writing through `Console` in text or JSON.
public struct ConsoleLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    let label: String
    let format: LogFormat

    public init(label: String, format: LogFormat) {
        self.label = label
        self.format = format
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields = metadata
        if let extra = event.metadata { fields.merge(extra) { _, new in new } }
        let time = Self.timestamp(Date())
        switch format {
        case .text:
            Console.shared.line(Self.textLine(time: time, level: event.level, message: "\(event.message)",
                                              fields: fields.mapValues { "\($0)" }))
        case .json:
            var object: [String: String] = ["ts": time, "level": event.level.rawValue, "msg": "\(event.message)"]
            for (key, value) in fields { object[key] = "\(value)" }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            if let data = try? encoder.encode(object) { Console.shared.line(String(decoding: data, as: UTF8.self)) }
        }
    }

    /// `2026-11-27T18:40:12.345Z`: the UTC time to the millisecond, as `ISO8601DateFormatter`
    /// writes it with `.withInternetDateTime` and `.withFractionalSeconds`. Made by hand: a
    /// formatter built for every line cost a worker about 0.3 ms of CPU a photo.
    public static func timestamp(_ date: Date) -> String {
        // To the nearest millisecond, as the formatter rounds.
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = time_t(milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000)
        let millisecond = Int(milliseconds - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var text = ""
        text.reserveCapacity(24)
        func append(_ value: Int, digits: Int) {
            let string = String(value)
            if string.count < digits { text += String(repeating: "0", count: digits - string.count) }
            text += string
        }
        append(Int(parts.tm_year) + 1900, digits: 4)
        text += "-"
        append(Int(parts.tm_mon) + 1, digits: 2)
        text += "-"
        append(Int(parts.tm_mday), digits: 2)
        text += "T"
        append(Int(parts.tm_hour), digits: 2)
        text += ":"
        append(Int(parts.tm_min), digits: 2)
        text += ":"
        append(Int(parts.tm_sec), digits: 2)
        text += "."
        append(millisecond, digits: 3)
        text += "Z"
        return text
    }

    /// One event in the text format, always one line: the message, keys and values have their
    /// control characters escaped (`\n`, `\r`, `\t`, `\u{1B}`...) and backslashes doubled, so a
    /// file named with a line end cannot write a second, forged event into the log.
    public static func textLine(time: String, level: Logger.Level, message: String, fields: [String: String]) -> String {
        let pairs = fields.keys.sorted().map { "\(escaped($0))=\(quoted(escaped(fields[$0] ?? "")))" }
        let level = level.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)
        return ([time, level, escaped(message)] + pairs).joined(separator: " ")
    }

    /// The text with every control character (C0, DEL, C1, and the Unicode line and paragraph
    /// separators) written as an escape, and backslashes doubled so that escapes stay unambiguous.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { needsEscape($0) || $0 == "\\" }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where needsEscape(scalar): out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    private static func quoted(_ value: String) -> String {
        value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" }) ? "\"" + value.replacingOccurrences(of: "\"", with: "\\\"") + "\"" : value
    }
}
