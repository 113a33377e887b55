import Foundation
import Testing
@testable import Terminal

/// The log lines' time, written by hand, against Foundation's ISO 8601 formatter.
@Suite("Log timestamps")
struct LogTimestampTests {
    static func formatter() -> ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }

    @Test("the time reads as the ISO 8601 formatter writes it, to the millisecond, in UTC")
    func agreesWithTheFormatter() {
        var state: UInt64 = 0x2026_1127
        var dates = [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 951_782_400),  // 2000-02-29
                     Date(timeIntervalSince1970: 1_798_761_599.999), Date(timeIntervalSince1970: 4_102_444_800.5)]
        for _ in 0..<2000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            // Whole milliseconds between 1970 and 2100, as a clock reading might give.
            dates.append(Date(timeIntervalSince1970: Double(state >> 23 % 4_102_444_800_000) / 1000))
        }
        let formatter = Self.formatter()
        let differing = dates.filter { ConsoleLogHandler.timestamp($0) != formatter.string(from: $0) }
        let examples = differing.prefix(3).map { "\(ConsoleLogHandler.timestamp($0)) vs \(formatter.string(from: $0))" }
        #expect(differing.count == 0, "\(differing.count) of \(dates.count) differ, as \(examples)")
        #expect(ConsoleLogHandler.timestamp(Date(timeIntervalSince1970: 1_798_761_599.25)) == "2026-12-31T23:59:59.250Z")
    }
}
