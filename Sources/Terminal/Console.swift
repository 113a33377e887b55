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
        let time = ISO8601DateFormatter.string(from: Date(), timeZone: TimeZone(identifier: "UTC") ?? .current,
                                               formatOptions: [.withInternetDateTime, .withFractionalSeconds])
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
