import Foundation
import MetadataReading

/// A time given in a field by a caller (a declared moment's `start` and `end`, an upload's
/// `taken_at`): written as RFC 3339 says (`2024-05-07T09:33:04+08:00`, a fraction of a second
/// and `Z` allowed), which is what the OpenAPI document's `format: date-time` and `pattern` say,
/// then read by `TimeText` (the calendar, years 0001 to 9999, no leap second, an offset from
/// UTC-12:00 to UTC+14:00). `TimeText` alone also reads EXIF's and other tools' spellings (a
/// space for the `T`, `+0545`), which a sidecar in the spool may hold but a field may not.
public enum TimeField {
    /// The instant `text` names; it must carry an offset. `example` is shown in the error.
    public static func instant(_ text: String, field: String, example: String) throws(FieldError) -> Date {
        let refuse = { (reason: String) in
            FieldError(field, "must be an ISO 8601 time with an offset, such as \(example): \(reason) (got \(text))")
        }
        if let reason = shapeProblem(text) { throw refuse(reason) }
        switch TimeText.instant(text) {
        case .success(let date): return date
        case .failure(let error): throw refuse(error.reason)
        }
    }

    /// Refuses a time that is not one, its offset optional (a wall time then takes the zone the
    /// worker infers for the photo); an empty one is refused too, rather than taken as absent.
    public static func check(_ text: String, field: String, example: String) throws(FieldError) {
        if text.isEmpty { throw FieldError(field, "is empty; give a time such as \(example), or leave the field out") }
        if let reason = shapeProblem(text) ?? TimeText.problem(text, offsetRequired: false) {
            throw FieldError(field, "must be an ISO 8601 time, such as \(example): \(reason) (got \(text))")
        }
    }

    /// Why `text` is not written `YYYY-MM-DDThh:mm:ss`, with an optional fraction of a second,
    /// then nothing, `Z` or `±hh:mm`; nil when it is (its values are `TimeText`'s to check).
    static func shapeProblem(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        func isDigit(_ index: Int) -> Bool { index < bytes.count && (0x30...0x39).contains(bytes[index]) }
        func matches(_ shape: String, at start: Int) -> Bool {
            let pattern = Array(shape.utf8)
            guard start + pattern.count <= bytes.count else { return false }
            return pattern.indices.allSatisfy { pattern[$0] == UInt8(ascii: "9") ? isDigit(start + $0) : bytes[start + $0] == pattern[$0] }
        }
        guard matches("9999-99-99T99:99:99", at: 0) else {
            return "malformed date; write it as YYYY-MM-DDThh:mm:ss (RFC 3339)"
        }
        var index = 19
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard isDigit(index) else { return "malformed fraction of a second; write digits after the point" }
            while isDigit(index) { index += 1 }
        }
        let offset = bytes.count - index
        if offset == 0 || (offset == 1 && bytes[index] == UInt8(ascii: "Z")) { return nil }
        if offset == 6, [UInt8(ascii: "+"), UInt8(ascii: "-")].contains(bytes[index]), matches("99:99", at: index + 1) { return nil }
        return "malformed offset \"\(String(decoding: bytes[index...], as: UTF8.self))\"; write Z or ±hh:mm"
    }
}
