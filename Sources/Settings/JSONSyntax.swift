import Foundation

/// A strict reading of JSON's grammar (RFC 8259) that says where the first mistake is, as a
/// line and a column: Foundation's parser names a character offset, and lets a trailing comma
/// through. Only the syntax is checked here; the values are read by `JSONSerialization` after.
enum JSONSyntax {
    /// Where a text stops being JSON, and why.
    struct Mistake: Error, Equatable, CustomStringConvertible {
        /// 1-based, counted in lines (`\n`) and in characters within the line.
        var line: Int
        var column: Int
        var problem: String

        var description: String { "line \(line), column \(column): \(problem)" }
    }

    /// The first mistake of `bytes`, or nil when they are one JSON value (with white space
    /// around it, and an optional UTF-8 byte order mark before it).
    static func firstMistake(in bytes: [UInt8]) -> Mistake? {
        var scanner = Scanner(bytes: bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { scanner.index = 3 }
        do throws(Mistake) {
            scanner.skipSpace()
            try scanner.value(depth: 0)
            scanner.skipSpace()
            if scanner.index < bytes.count { throw scanner.mistake("text after the end of the JSON value") }
            return nil
        } catch {
            return error
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        /// Deeper nesting than this is refused rather than recursed into.
        static let depthLimit = 256

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        func mistake(_ problem: String) -> Mistake {
            var line = 1
            var column = 1
            for byte in bytes[..<min(index, bytes.count)] {
                if byte == UInt8(ascii: "\n") {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80 {
                    column += 1
                }
            }
            return Mistake(line: line, column: column, problem: problem)
        }

        mutating func skipSpace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        /// What the next byte looks like, for a message.
        var found: String {
            guard let byte = current else { return "the end of the file" }
            if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
            return String(format: "byte 0x%02X", byte)
        }

        mutating func value(depth: Int) throws(Mistake) {
            guard depth < Self.depthLimit else { throw mistake("nested more than \(Self.depthLimit) deep") }
            switch current {
            case UInt8(ascii: "{"): try object(depth: depth)
            case UInt8(ascii: "["): try array(depth: depth)
            case UInt8(ascii: "\""): try string()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            case let byte? where byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte): try number()
            case UInt8(ascii: "'"): throw mistake("expected a value, found \(found) (strings need double quotes)")
            default: throw mistake("expected a value, found \(found)")
            }
        }

        mutating func object(depth: Int) throws(Mistake) {
            try members(closing: UInt8(ascii: "}")) { scanner throws(Mistake) in
                guard scanner.current == UInt8(ascii: "\"") else { throw scanner.mistake("expected a key in double quotes, found \(scanner.found)") }
                try scanner.string()
                scanner.skipSpace()
                guard scanner.current == UInt8(ascii: ":") else { throw scanner.mistake("expected ':' after the key, found \(scanner.found)") }
                scanner.index += 1
                scanner.skipSpace()
                try scanner.value(depth: depth + 1)
            }
        }

        mutating func array(depth: Int) throws(Mistake) {
            try members(closing: UInt8(ascii: "]")) { scanner throws(Mistake) in try scanner.value(depth: depth + 1) }
        }

        /// The members of an object or an array, from its opening bracket to `closing`: each
        /// read by `member`, separated by commas, none after the last.
        mutating func members(closing: UInt8, _ member: (inout Scanner) throws(Mistake) -> Void) throws(Mistake) {
            let bracket = Character(Unicode.Scalar(closing))
            index += 1
            skipSpace()
            if current == closing { index += 1; return }
            while true {
                try member(&self)
                skipSpace()
                switch current {
                case UInt8(ascii: ","):
                    index += 1
                    skipSpace()
                    if current == closing { throw mistake("a comma before '\(bracket)': remove the trailing comma") }
                case closing:
                    index += 1
                    return
                default:
                    throw mistake("expected ',' or '\(bracket)', found \(found)")
                }
            }
        }

        mutating func string() throws(Mistake) {
            let start = index
            index += 1
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return
                case UInt8(ascii: "\\"):
                    index += 1
                    guard let escaped = current else { break }
                    if escaped == UInt8(ascii: "u") {
                        for _ in 0..<4 {
                            index += 1
                            guard let digit = current, digit.isHexDigit else { throw mistake("\\u must be followed by four hexadecimal digits") }
                        }
                    } else if !Array("\"\\/bfnrt".utf8).contains(escaped) {
                        throw mistake("unknown escape \\\(Character(Unicode.Scalar(escaped))) in a string")
                    }
                    index += 1
                case 0..<0x20:
                    throw mistake("a control character in a string (a line end must be written \\n)")
                default:
                    index += 1
                }
            }
            index = start
            throw mistake("a string that never ends: a closing '\"' is missing")
        }

        mutating func literal(_ word: String) throws(Mistake) {
            let expected = Array(word.utf8)
            guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else {
                throw mistake("expected a value, found \(found) (strings need double quotes)")
            }
            index += expected.count
        }

        mutating func number() throws(Mistake) {
            func digits(_ scanner: inout Scanner) -> Int {
                var count = 0
                while let byte = scanner.current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { scanner.index += 1; count += 1 }
                return count
            }
            if current == UInt8(ascii: "-") { index += 1 }
            if current == UInt8(ascii: "0") {
                index += 1
                if let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { throw mistake("a number must not start with 0") }
            } else if digits(&self) == 0 {
                throw mistake("expected digits in a number, found \(found)")
            }
            if current == UInt8(ascii: ".") {
                index += 1
                if digits(&self) == 0 { throw mistake("expected digits after the decimal point, found \(found)") }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                if digits(&self) == 0 { throw mistake("expected digits in the exponent, found \(found)") }
            }
        }
    }
}

private extension UInt8 {
    var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
