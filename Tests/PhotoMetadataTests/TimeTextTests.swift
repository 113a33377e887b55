import Foundation
import Testing
@testable import MetadataReading

/// The one reader of times the backend gives (uploads, sidecars, declared moments).
@Suite("Times given as text")
struct TimeTextTests {
    @Test func aTimeWithAnOffsetNamesItsInstant() throws {
        let instant = try TimeText.instant("2024-05-07T18:00:00+05:45").get()
        #expect(instant == Date(timeIntervalSince1970: 1_715_084_100))
        #expect(try TimeText.instant("2024-05-07T12:15:00.250Z").get() == Date(timeIntervalSince1970: 1_715_084_100.25))
        #expect(try TimeText.instant("0001-01-01T00:00:00Z").get() == Date(timeIntervalSince1970: -62_135_596_800))
        #expect(try TimeText.instant("9999-12-31T23:59:59-12:00").get() == Date(timeIntervalSince1970: 253_402_343_999))
    }

    @Test(arguments: [
        ("2024-05-07T18:00:00+99:99", "malformed offset"), ("2024-05-07T18:00:00+24:00", "outside UTC-12:00...UTC+14:00"),
        ("2024-05-07T18:00:00+14:01", "outside"), ("2024-05-07T18:00:00-12:30", "outside"),
        ("2024-05-07T18:00:00+05:60", "malformed offset"), ("2023-02-29T18:00:00Z", "day 29 of month 2"),
        ("2024-02-30T18:00:00Z", "day 30 of month 2"), ("0000-05-07T18:00:00Z", "year 0 outside 1...9999"),
        ("10000-05-07T18:00:00Z", "malformed date"), ("-0001-05-07T18:00:00Z", "malformed date"),
        ("2016-12-31T23:59:60Z", "second 60 is a leap second (such as 23:59:60), which POSIX time cannot hold; give 23:59:59 instead"),
        ("2024-05-07T24:00:00Z", "hour 24"), ("2024-05-07", "malformed date"), ("", "is empty"),
    ])
    func anImpossibleTimeIsRefusedWithItsReason(text: String, reason: String) {
        let problem = TimeText.problem(text, offsetRequired: false)
        #expect(problem?.contains(reason) == true, "\(text): \(problem ?? "accepted")")
        guard case .failure(let error) = TimeText.instant(text) else {
            Issue.record("\(text) accepted")
            return
        }
        #expect(error.reason == problem)
    }

    @Test func anOffsetIsNeededOnlyWhereTheCallerSaysSo() {
        #expect(TimeText.problem("2024-05-07T18:00:00", offsetRequired: false) == nil)
        #expect(TimeText.problem("2024-05-07T18:00:00", offsetRequired: true) == "has no UTC offset (such as +02:00 or Z)")
        guard case .failure = TimeText.instant("2024-05-07T18:00:00") else {
            Issue.record("an instant without an offset")
            return
        }
    }

    @Test func aSidecarsTakenAtIsReadByTheSameReader() throws {
        for text in ["2024-05-07T18:00:00+24:00", "2024-02-30T18:00:00Z", "2016-12-31T23:59:60Z"] {
            #expect(throws: MetadataError.self) { try Sidecar(jsonBytes: Array(#"{"taken_at": "\#(text)"}"#.utf8)) }
        }
        #expect(try Sidecar(jsonBytes: Array(#"{"taken_at": " "}"#.utf8)).takenAt == nil)
        do {
            _ = try Sidecar(jsonBytes: Array(#"{"taken_at": "2016-12-31T23:59:60Z"}"#.utf8))
        } catch {
            #expect("\(error)".contains("leap second"))
        }
    }

    @Test func sidecarTextMustBeUTF8WithoutControlsOrRepeatedKeys() {
        func problem(_ bytes: [UInt8]) -> String {
            do {
                _ = try Sidecar(jsonBytes: bytes)
                return "accepted"
            } catch {
                return "\(error)"
            }
        }
        #expect(problem(Array(#"{"title": "Caf"#.utf8) + [0xE9, 0x22, 0x7D]).contains("it must be UTF-8 text, and byte 0xE9 at offset 14 is not"))
        #expect(problem(Array(#"{"title": "a\tb"}"#.utf8)).contains(#"key "title" must not hold control characters (got a control character, U+0009, at character 1)"#))
        #expect(problem(Array(#"{"title": "a", "title": "b"}"#.utf8)).contains(#"key "title" is given twice"#))
        #expect(problem(Array(#"{"focal_point": {"x": 0.5, "y": 0.5}, "title": "x", "extra": {"x": 1}}"#.utf8)) == "accepted")
    }
}
