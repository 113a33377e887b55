import Foundation

/// A calendar date and wall-clock time with no zone, as cameras record it, validated against
/// the Gregorian calendar.
package struct LocalDateTime: Sendable, Equatable {
    var year: Int
    var month: Int
    var day: Int
    var hour: Int
    var minute: Int
    var second: Int
    /// Milliseconds, or nil when the source gave no sub-second part.
    package var millisecond: Int?

    /// The outcome of reading a date-time text.
    package enum Parsed: Equatable {
        /// Blank or missing: nothing to report.
        case absent
        /// Present but unusable, with the reason (placeholder zeros, malformed, impossible).
        case invalid(String)
        /// A valid date-time.
        case valid(LocalDateTime)
    }

    /// Seconds since 1970-01-01T00:00:00 as if the wall time were UTC, ignoring milliseconds.
    package var secondsAsIfUTC: Int64 {
        Self.daysFromCivil(year: year, month: month, day: day) * 86_400
            + Int64(hour * 3600 + minute * 60 + second)
    }

    /// The instant this wall time denotes at the given UTC offset, to the millisecond.
    package func instant(offsetSeconds: Int) -> Date {
        Self.date(seconds: secondsAsIfUTC - Int64(offsetSeconds), millisecond: millisecond ?? 0)
    }

    /// The UTC offset the zone has at this wall time. Two passes so that a wall time near a
    /// daylight-saving change takes the offset in force at that moment, not the one before it.
    package func offset(in zone: TimeZone) -> Int {
        let asUTC = Self.date(seconds: secondsAsIfUTC, millisecond: 0)
        let first = zone.secondsFromGMT(for: asUTC)
        let guess = Self.date(seconds: secondsAsIfUTC - Int64(first), millisecond: 0)
        return zone.secondsFromGMT(for: guess)
    }

    /// `2014-09-16T14:05:12` or, with sub-seconds, `2014-09-16T14:05:12.345`.
    package var isoString: String {
        var text = Self.padded(year, 4) + "-" + Self.padded(month, 2) + "-" + Self.padded(day, 2) + "T"
            + Self.padded(hour, 2) + ":" + Self.padded(minute, 2) + ":" + Self.padded(second, 2)
        if let millisecond {
            text += "." + Self.padded(millisecond, 3)
        }
        return text
    }

    /// Decimal digits of a non-negative number, zero-padded to `width` (no locale involved).
    static func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    /// The wall time at `offsetSeconds` of an instant, to the millisecond.
    package init(instant: Date, offsetSeconds: Int) {
        // Nearest, not down: a Date built from (seconds, milliseconds) may sit a hair below its millisecond.
        // Clamped so that no Date, however odd, can trap the integer conversion (±3 million years).
        let raw = instant.timeIntervalSince1970 * 1000
        let limit = 1e17
        let totalMilliseconds = raw.isFinite ? Int64(min(max(raw, -limit), limit).rounded()) : 0
        let local = totalMilliseconds + Int64(offsetSeconds) * 1000
        let milliseconds = Self.floorMod(local, 1000)
        let seconds = Self.floorDiv(local, 1000)
        let days = Self.floorDiv(seconds, 86_400)
        let secondOfDay = Int(seconds - days * 86_400)
        let civil = Self.civilFromDays(days)
        self.init(
            year: civil.year, month: civil.month, day: civil.day,
            hour: secondOfDay / 3600, minute: secondOfDay / 60 % 60, second: secondOfDay % 60,
            millisecond: milliseconds == 0 ? nil : Int(milliseconds))
    }

    init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, millisecond: Int? = nil) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.millisecond = millisecond
    }

    /// Seconds between two wall times, as if both were in the same zone.
    package func seconds(since other: LocalDateTime) -> Double {
        Double(secondsAsIfUTC - other.secondsAsIfUTC)
            + Double((millisecond ?? 0) - (other.millisecond ?? 0)) / 1000
    }

    // MARK: Parsing

    /// Reads `YYYY:MM:DD HH:MM:SS` (EXIF), also accepting `-` in the date, `T` as separator and a
    /// fractional second, and checks the result against the calendar and `years`.
    package static func parse(exif text: String, years: ClosedRange<Int>) -> Parsed {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty || trimmed.allSatisfy({ $0 == ":" || $0 == " " || $0 == "-" }) {
            return .absent
        }
        let scalars = Array(trimmed.unicodeScalars)
        guard scalars.count >= 19,
              let year = number(scalars, 0, 4), [":", "-"].contains(scalars[4]),
              let month = number(scalars, 5, 2), scalars[7] == scalars[4],
              let day = number(scalars, 8, 2), [" ", "T"].contains(scalars[10]),
              let hour = number(scalars, 11, 2), scalars[13] == ":",
              let minute = number(scalars, 14, 2), scalars[16] == ":",
              let second = number(scalars, 17, 2)
        else {
            return .invalid("malformed date \"\(trimmed)\"")
        }
        var millisecond: Int?
        if scalars.count > 19 {
            guard scalars[19] == ".", scalars.count > 20,
                  let fraction = milliseconds(fromDigits: String(String.UnicodeScalarView(scalars[20...])))
            else {
                return .invalid("malformed date \"\(trimmed)\"")
            }
            millisecond = fraction
        }
        if year == 0 && month == 0 && day == 0 {
            return .invalid("placeholder date \"\(trimmed)\" (clock never set)")
        }
        let value = LocalDateTime(year: year, month: month, day: day, hour: hour, minute: minute,
                                  second: second, millisecond: millisecond)
        if let problem = value.calendarProblem(years: years) {
            return .invalid("impossible date \"\(trimmed)\": \(problem)")
        }
        return .valid(value)
    }

    /// Reads ISO 8601 date-time text with an optional offset (`2024-05-07T09:33:04+08:00`,
    /// `2024-05-07T09:33:04.5Z`, `2024-05-07T09:33:04`), checking the date against `years`.
    package static func parse(iso text: String, years: ClosedRange<Int>) -> (wall: Parsed, offset: ParsedOffset) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let scalars = Array(trimmed.unicodeScalars)
        // The offset starts at a Z, + or - after the time of day (index 19 onward).
        var split = scalars.count
        if scalars.count > 19 {
            for index in 19..<scalars.count where ["Z", "+", "-"].contains(scalars[index]) {
                split = index
                break
            }
        }
        let wallText = String(String.UnicodeScalarView(scalars[..<split]))
        let offsetText = String(String.UnicodeScalarView(scalars[split...]))
        let wall = parse(exif: wallText, years: years)
        return (wall, offsetText.isEmpty ? .absent : parseOffset(offsetText))
    }

    /// Why this value is not a real moment, or nil when it is one.
    package func calendarProblem(years: ClosedRange<Int>) -> String? {
        if !years.contains(year) {
            return "year \(year) outside \(years.lowerBound)...\(years.upperBound)"
        }
        if !(1...12).contains(month) { return "month \(month)" }
        if !(1...Self.daysInMonth(year: year, month: month)).contains(day) { return "day \(day) of month \(month)" }
        if !(0...23).contains(hour) { return "hour \(hour)" }
        if !(0...59).contains(minute) { return "minute \(minute)" }
        // A leap second (60) is not representable in POSIX time; it is rejected rather than moved.
        if second == 60 { return "second 60 is a leap second (such as 23:59:60), which POSIX time cannot hold; give 23:59:59 instead" }
        if !(0...59).contains(second) { return "second \(second)" }
        return nil
    }

    /// Milliseconds from the digits of a fraction (`"345"` → 345, `"3"` → 300, `"123456"` → 123),
    /// or nil when the text is not all digits. Extra digits are truncated, not rounded, so that a
    /// time never moves into the next second.
    package static func milliseconds(fromDigits digits: String) -> Int? {
        guard !digits.isEmpty, digits.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
        let padded = (digits + "00").prefix(3)
        return Int(padded)
    }

    /// The outcome of reading a UTC offset text.
    package enum ParsedOffset: Equatable {
        case absent
        case invalid(String)
        case valid(Int)
    }

    /// Reads a UTC offset: `+08:00`, `-05:30`, `+0545`, `+08` or `Z`, and checks that some place
    /// on Earth uses it.
    package static func parseOffset(_ text: String) -> ParsedOffset {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty || trimmed.allSatisfy({ $0 == ":" || $0 == " " }) { return .absent }
        if trimmed == "Z" { return .valid(0) }
        let scalars = Array(trimmed.unicodeScalars)
        guard let sign = scalars.first, sign == "+" || sign == "-" else {
            return .invalid("malformed offset \"\(trimmed)\"")
        }
        let rest = Array(scalars.dropFirst())
        let hours: Int?
        let minutes: Int?
        switch rest.count {
        case 2: hours = number(rest, 0, 2); minutes = 0
        case 4: hours = number(rest, 0, 2); minutes = number(rest, 2, 2)
        case 5 where rest[2] == ":": hours = number(rest, 0, 2); minutes = number(rest, 3, 2)
        default: hours = nil; minutes = nil
        }
        guard let hours, let minutes, minutes < 60 else {
            return .invalid("malformed offset \"\(trimmed)\"")
        }
        let magnitude = hours * 3600 + minutes * 60
        let seconds = sign == "-" ? -magnitude : magnitude
        guard isPlausibleOffset(seconds) else {
            return .invalid("offset \"\(trimmed)\" outside UTC-12:00...UTC+14:00")
        }
        return .valid(seconds)
    }

    /// Whether an offset is one that some place on Earth uses (UTC−12:00 … UTC+14:00).
    package static func isPlausibleOffset(_ seconds: Int) -> Bool {
        (minimumOffsetSeconds...maximumOffsetSeconds).contains(seconds)
    }

    /// The most western UTC offset in use (Baker Island, UTC−12:00), in seconds.
    static let minimumOffsetSeconds = -12 * 3600
    /// The most eastern UTC offset in use (Kiribati, UTC+14:00), in seconds.
    static let maximumOffsetSeconds = 14 * 3600

    /// `+08:00`-style text for an offset in seconds.
    package static func offsetString(_ seconds: Int) -> String {
        let sign = seconds < 0 ? "-" : "+"
        let magnitude = abs(seconds)
        return sign + padded(magnitude / 3600, 2) + ":" + padded(magnitude / 60 % 60, 2)
    }

    // MARK: Calendar arithmetic

    static func isLeapYear(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm), which avoids
    /// Foundation's calendar so that the result cannot depend on the process's locale or zone.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = floorDiv(y, 400)
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of `daysFromCivil`.
    static func civilFromDays(_ days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    /// A date built the same way everywhere, so that equal (seconds, milliseconds) pairs give
    /// bit-identical `Date`s and encoded values decode to equal ones.
    static func date(seconds: Int64, millisecond: Int) -> Date {
        Date(timeIntervalSince1970: Double(seconds) + Double(millisecond) / 1000)
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    static func floorMod(_ a: Int64, _ b: Int64) -> Int64 {
        a - floorDiv(a, b) * b
    }

    private static func number(_ scalars: [Unicode.Scalar], _ start: Int, _ length: Int) -> Int? {
        guard start + length <= scalars.count else { return nil }
        var value = 0
        for scalar in scalars[start..<(start + length)] {
            guard ("0"..."9").contains(scalar) else { return nil }
            value = value * 10 + Int(scalar.value - 48)
        }
        return value
    }
}
