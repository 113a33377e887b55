import Foundation

/// The one reader of times given as text by the backend and its users: an upload's or a
/// sidecar's `taken_at`, and a declared moment's `start` and `end` (`POST /v1/moments`,
/// `darkroom moments create`). ISO 8601 (`2024-05-07T09:33:04+08:00`, a fraction of a second
/// and `Z` allowed), checked against the calendar: years 0001 to 9999, real days (no February
/// 30), hours, minutes and seconds in range (a leap second, `23:59:60`, is refused with its own
/// reason: POSIX time cannot hold it), and an offset some place on Earth uses (UTC-12:00 to
/// UTC+14:00, minutes under 60). Every caller refuses the same texts with the same reasons.
public enum TimeText {
    /// The years a time may name.
    public static let years = 1...9999

    /// Why `text` is not a usable time, or nil when it is one; with `offsetRequired`, a time
    /// without an offset is refused too (without, it is a wall time in a zone the reader knows).
    public static func problem(_ text: String, offsetRequired: Bool) -> String? {
        switch read(text) {
        case .failure(let error): return error.reason
        case .success(let parsed): return offsetRequired && parsed.offset == nil ? "has no UTC offset (such as +02:00 or Z)" : nil
        }
    }

    /// The instant `text` names; it must carry an offset. Fails with the reason it is not one.
    public static func instant(_ text: String) -> Result<Date, TimeTextError> {
        switch read(text) {
        case .failure(let error): return .failure(error)
        case .success(let parsed):
            guard let offset = parsed.offset else { return .failure(TimeTextError(reason: "has no UTC offset (such as +02:00 or Z)")) }
            return .success(parsed.wall.instant(offsetSeconds: offset))
        }
    }

    /// The wall time and offset (nil when none is written) of `text`, or why it is not a time.
    static func read(_ text: String) -> Result<(wall: LocalDateTime, offset: Int?), TimeTextError> {
        let parsed = LocalDateTime.parse(iso: text, years: years)
        let wall: LocalDateTime
        switch parsed.wall {
        case .valid(let value): wall = value
        case .absent: return .failure(TimeTextError(reason: "is empty"))
        case .invalid(let reason): return .failure(TimeTextError(reason: reason))
        }
        switch parsed.offset {
        case .absent: return .success((wall, nil))
        case .valid(let seconds): return .success((wall, seconds))
        case .invalid(let reason): return .failure(TimeTextError(reason: "has an unusable UTC offset: \(reason)"))
        }
    }
}

/// Why a text is not a usable time: one phrase, for the caller to put after the field's name.
public struct TimeTextError: Error, CustomStringConvertible, Sendable, Equatable {
    public var reason: String
    public var description: String { reason }
}
