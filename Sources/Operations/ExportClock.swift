import Foundation

/// The wall-clock time where a photo was taken, as the export shows it: a date whose UTC fields
/// are the local ones (the camera's own local time, or the instant moved by the photo's or the
/// place's offset), so that it formats the same on any machine.
struct WallClock: Sendable, Comparable {
    /// The local time read as if it were UTC.
    let floating: Date
    /// Whether the UTC offset was known; without one, the time is UTC and is labelled so.
    let offsetKnown: Bool

    static func < (a: WallClock, b: WallClock) -> Bool { a.floating < b.floating }

    /// An instant at a UTC offset (seconds east); a nil offset keeps UTC.
    init(instant: Date, offsetSeconds: Int?) {
        floating = instant.addingTimeInterval(Double(offsetSeconds ?? 0))
        offsetKnown = offsetSeconds != nil
    }

    /// A picture's time: the camera's local time as the catalog holds it (`2024-05-07T18:00:00`),
    /// else its instant at its own offset, else at `fallbackOffset` (the moment's). Nil without
    /// a capture time.
    init?(capturedLocal: String?, capturedAt: Double?, offsetSeconds: Int?, fallbackOffset: Int?) {
        if let local = capturedLocal, let parsed = Self.parseLocal(local) {
            floating = parsed
            offsetKnown = true
        } else if let capturedAt {
            self = WallClock(instant: Date(timeIntervalSince1970: capturedAt), offsetSeconds: offsetSeconds ?? fallbackOffset)
        } else {
            return nil
        }
    }

    private static func parseLocal(_ text: String) -> Date? {
        // Seconds and fractions are not shown: the minute is enough.
        let parts = text.prefix(16).split(whereSeparator: { "-T:".contains($0) }).compactMap { Int($0) }
        guard parts.count == 5 else { return nil }
        var components = DateComponents()
        (components.year, components.month, components.day, components.hour, components.minute) = (parts[0], parts[1], parts[2], parts[3], parts[4])
        return Self.calendar.date(from: components)
    }

    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    private static func format(_ pattern: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_GB")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = pattern
        return formatter
    }

    private static let dayFormat = format("EEEE d MMMM yyyy")
    private static let shortDayFormat = format("d MMM yyyy")
    private static let timeFormat = format("HH:mm")
    private static let monthFormat = format("MMMM yyyy")
    private static let monthKeyFormat = format("yyyy-MM")

    var day: String { Self.dayFormat.string(from: floating) }
    var shortDay: String { Self.shortDayFormat.string(from: floating) }
    var time: String { Self.timeFormat.string(from: floating) + (offsetKnown ? "" : " UTC") }
    /// "May 2024": the heading the moment is listed under.
    var month: String { Self.monthFormat.string(from: floating) }
    /// "2024-05": an anchor for the month's heading.
    var monthKey: String { Self.monthKeyFormat.string(from: floating) }
    /// "7 May 2024, 18:00".
    var dayAndTime: String { shortDay + ", " + time }

    /// A span as people write it: "Tuesday 7 May 2024, 18:00–22:00", one time when both ends
    /// fall in the same minute, both dates when it crosses midnight.
    static func span(_ start: WallClock, _ end: WallClock) -> String {
        let sameMinute = timeFormat.string(from: start.floating) == timeFormat.string(from: end.floating)
            && start.day == end.day
        if sameMinute { return start.day + ", " + start.time }
        if start.day == end.day { return start.day + ", " + timeFormat.string(from: start.floating) + "–" + end.time }
        return start.dayAndTime + " – " + end.dayAndTime
    }
}
