import Crypto
import Foundation

/// The text forms Signature Version 4 is made of: URI encoding, hex, the ISO 8601 basic date.
enum SigV4Encoding {
    /// RFC 3986 percent-encoding as SigV4 asks: the unreserved characters (`A-Z a-z 0-9 - . _ ~`)
    /// stay, every other byte of the UTF-8 form becomes `%XX` with uppercase hex; a `/` stays only
    /// when `keepSlash` (path segments are encoded, the slashes between them are not).
    static func uriEncode(_ text: String, keepSlash: Bool) -> String {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) || (keepSlash && byte == UInt8(ascii: "/")) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(upperHex[Int(byte >> 4)])
                out.append(upperHex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The canonical URI of a path that is not yet encoded: each segment encoded, `/` kept. S3
    /// encodes once (no double encoding, no `.`/`..` normalisation: a key is a name, not a path).
    static func canonicalURI(_ path: String) -> String {
        let encoded = uriEncode(path, keepSlash: true)
        return encoded.hasPrefix("/") ? encoded : "/" + encoded
    }

    /// The canonical query string: names and values encoded (`/` too), sorted by name then value
    /// in byte order, joined by `&`; a parameter without a value is `name=`.
    static func canonicalQuery(_ fields: [SigV4Signer.Field]) -> String {
        fields
            .map { (uriEncode($0.name, keepSlash: false), uriEncode($0.value, keepSlash: false)) }
            .sorted { lhs, rhs in
                lhs.0 == rhs.0 ? lhs.1.utf8.lexicographicallyPrecedes(rhs.1.utf8) : lhs.0.utf8.lexicographicallyPrecedes(rhs.0.utf8)
            }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    /// A header value as it is signed: leading and trailing white space removed, each run of
    /// spaces inside made one space.
    static func canonicalHeaderValue(_ value: String) -> String {
        var out = ""
        var pendingSpace = false
        for character in value.trimmingCharacters(in: .whitespacesAndNewlines) {
            if character == " " || character == "\t" {
                pendingSpace = true
            } else {
                if pendingSpace { out.append(" ") }
                pendingSpace = false
                out.append(character)
            }
        }
        return out
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    private static let upperHex = Array("0123456789ABCDEF".utf8)
    private static let lowerHex = Array("0123456789abcdef".utf8)

    /// Lowercase hex, as SigV4 writes hashes and signatures.
    static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var out = [UInt8]()
        for byte in bytes {
            out.append(lowerHex[Int(byte >> 4)])
            out.append(lowerHex[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The SHA-256 of `bytes` in lowercase hex.
    static func sha256Hex<Bytes: DataProtocol>(_ bytes: Bytes) -> String {
        hex(SHA256.hash(data: bytes))
    }

    /// `20130524T000000Z` and `20130524`: the request time and the scope's date, in UTC.
    static func timestamps(_ date: Date) -> (amzDate: String, dateStamp: String) {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let (y, m, d, hh, mm, ss) = UTCCalendar.components(seconds)
        let dateStamp = pad(y, 4) + pad(m, 2) + pad(d, 2)
        return (dateStamp + "T" + pad(hh, 2) + pad(mm, 2) + pad(ss, 2) + "Z", dateStamp)
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}

/// Civil dates in UTC without a formatter (the proleptic Gregorian calendar; Howard Hinnant's
/// days-from-civil algorithm), for the signer's timestamps and S3's dates.
enum UTCCalendar {
    /// Year, month, day, hour, minute, second of a Unix time.
    static func components(_ seconds: Int64) -> (Int, Int, Int, Int, Int, Int) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = Int(seconds - days * 86_400)
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day), rest / 3600, rest % 3600 / 60, rest % 60)
    }

    /// The Unix time of a civil date and time in UTC.
    static func seconds(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = Int64(month > 2 ? month - 3 : month + 9)
        let doy = (153 * mp + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// An HTTP date (`Last-Modified`: `Wed, 12 Oct 2009 17:50:00 GMT`, RFC 9110's IMF-fixdate).
    static func parseHTTPDate(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT",
              let day = Int(parts[1]), let month = monthNames.firstIndex(of: String(parts[2])), let year = Int(parts[3])
        else { return nil }
        let time = parts[4].split(separator: ":")
        guard time.count == 3, let h = Int(time[0]), let m = Int(time[1]), let s = Int(time[2]),
              (1...31).contains(day), (0...23).contains(h), (0...59).contains(m), (0...60).contains(s)
        else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds(year: year, month: month + 1, day: day, hour: h, minute: m, second: s)))
    }

    /// An ISO 8601 time as S3 lists it (`2009-10-12T17:50:30.000Z`; fraction optional).
    static func parseISO8601(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z"), bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":")
        else { return nil }
        func number(_ range: Range<Int>) -> Int? { Int(String(decoding: bytes[range], as: UTF8.self)) }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var fraction = 0.0
        if bytes[19] == UInt8(ascii: ".") {
            guard let digits = Double("0" + String(decoding: bytes[19..<(bytes.count - 1)], as: UTF8.self)) else { return nil }
            fraction = digits
        } else if bytes.count != 20 {
            return nil
        }
        let whole = seconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        return Date(timeIntervalSince1970: TimeInterval(whole) + fraction)
    }
}
