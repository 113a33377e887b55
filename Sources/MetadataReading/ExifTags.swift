import Foundation

/// The image file directories of an EXIF block, numbered as libexif numbers them.
package enum ExifDirectory: Int, Sendable, CaseIterable {
    case ifd0 = 0
    case ifd1 = 1
    case exif = 2
    case gps = 3
    case interoperability = 4
}

/// Tag numbers read by this module. Numbers rather than libexif's names because libexif does not
/// name every one of them (the GPS tags are macros, the offset tags are recent).
package enum ExifTagNumber {
    package static let make: UInt16 = 0x010F
    package static let model: UInt16 = 0x0110
    package static let orientation: UInt16 = 0x0112
    package static let dateTime: UInt16 = 0x0132
    package static let dateTimeOriginal: UInt16 = 0x9003
    package static let dateTimeDigitized: UInt16 = 0x9004
    package static let offsetTime: UInt16 = 0x9010
    package static let offsetTimeOriginal: UInt16 = 0x9011
    package static let offsetTimeDigitized: UInt16 = 0x9012
    package static let subSecTime: UInt16 = 0x9290
    package static let subSecTimeOriginal: UInt16 = 0x9291
    package static let subSecTimeDigitized: UInt16 = 0x9292
    package static let gpsLatitudeRef: UInt16 = 0x0001
    package static let gpsLatitude: UInt16 = 0x0002
    package static let gpsLongitudeRef: UInt16 = 0x0003
    package static let gpsLongitude: UInt16 = 0x0004
    package static let gpsAltitudeRef: UInt16 = 0x0005
    package static let gpsAltitude: UInt16 = 0x0006
    package static let gpsTimeStamp: UInt16 = 0x0007
    package static let gpsDateStamp: UInt16 = 0x001D
    package static let gpsHPositioningError: UInt16 = 0x001F
    /// The pointer from IFD0 to the GPS IFD.
    static let gpsInfoPointer: UInt16 = 0x8825
}

/// A TIFF rational (unsigned or signed).
package struct ExifRational: Sendable, Equatable {
    var numerator: Int64
    var denominator: Int64

    /// The value, or nil when the denominator is zero.
    package var value: Double? {
        denominator == 0 ? nil : Double(numerator) / Double(denominator)
    }
}

/// One raw EXIF entry: its TIFF type, component count and the bytes of its value.
struct ExifEntryValue: Sendable, Equatable {
    var format: UInt16
    var components: Int
    var bytes: [UInt8]
}

/// The entries of an EXIF block, copied out of libexif, with typed access in the block's byte
/// order. Pure Swift so that everything after the C call can be tested without C.
package struct ExifTags: Sendable, Equatable {
    /// Motorola (big-endian) byte order; Intel otherwise.
    var bigEndian: Bool
    var directories: [ExifDirectory: [UInt16: ExifEntryValue]] = [:]
    /// Whether IFD0 points to a GPS IFD (libexif drops the pointer, so it is read separately; it
    /// tells an empty GPS IFD from no GPS IFD).
    package var hasGPSPointer = false

    /// TIFF field types.
    enum Format {
        static let byte: UInt16 = 1
        static let ascii: UInt16 = 2
        static let short: UInt16 = 3
        static let long: UInt16 = 4
        static let rational: UInt16 = 5
        static let sbyte: UInt16 = 6
        static let undefined: UInt16 = 7
        static let sshort: UInt16 = 8
        static let slong: UInt16 = 9
        static let srational: UInt16 = 10
    }

    /// Whether a directory holds any entry.
    package func isEmpty(_ directory: ExifDirectory) -> Bool {
        directories[directory]?.isEmpty ?? true
    }

    func entry(_ tag: UInt16, in directory: ExifDirectory) -> ExifEntryValue? {
        directories[directory]?[tag]
    }

    /// A text value, cut at its first NUL and trimmed of spaces; nil when absent or blank.
    package func string(_ tag: UInt16, in directory: ExifDirectory) -> String? {
        guard let entry = entry(tag, in: directory),
              entry.format == Format.ascii || entry.format == Format.undefined || entry.format == Format.byte
        else { return nil }
        let body = entry.bytes.drop(while: { $0 == 0 || $0 == 0x20 })
        let text = String(decoding: body.prefix(while: { $0 != 0 }), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// Integer values of a BYTE, SHORT or LONG (or signed) entry; nil when absent or of another type.
    package func integers(_ tag: UInt16, in directory: ExifDirectory) -> [Int64]? {
        guard let entry = entry(tag, in: directory) else { return nil }
        let width: Int
        switch entry.format {
        case Format.byte, Format.sbyte, Format.undefined: width = 1
        case Format.short, Format.sshort: width = 2
        case Format.long, Format.slong: width = 4
        default: return nil
        }
        let signed = entry.format == Format.sbyte || entry.format == Format.sshort || entry.format == Format.slong
        let count = min(entry.components, entry.bytes.count / width)
        guard count > 0 else { return nil }
        return (0..<count).map { index in
            let raw = unsigned(entry.bytes, at: index * width, width: width)
            guard signed else { return Int64(raw) }
            let shift = UInt64(64 - 8 * width)
            return Int64(bitPattern: raw << shift) >> Int64(shift)
        }
    }

    /// Rational values of a RATIONAL or SRATIONAL entry; nil when absent or of another type.
    package func rationals(_ tag: UInt16, in directory: ExifDirectory) -> [ExifRational]? {
        guard let entry = entry(tag, in: directory),
              entry.format == Format.rational || entry.format == Format.srational
        else { return nil }
        let signed = entry.format == Format.srational
        let count = min(entry.components, entry.bytes.count / 8)
        guard count > 0 else { return nil }
        return (0..<count).map { index in
            let n = unsigned(entry.bytes, at: index * 8, width: 4)
            let d = unsigned(entry.bytes, at: index * 8 + 4, width: 4)
            if signed {
                return ExifRational(numerator: Int64(Int32(bitPattern: UInt32(n))),
                                    denominator: Int64(Int32(bitPattern: UInt32(d))))
            }
            return ExifRational(numerator: Int64(n), denominator: Int64(d))
        }
    }

    /// A RATIONAL entry's values, or, for an ASCII entry, the decimal numbers written in its
    /// text, in order, as ExifTool reads them: some phones (HTC's among them) store GPS
    /// coordinates as text such as "47 21 15.06". Nil when absent, of another type, or holding
    /// no number.
    package func rationalsOrText(_ tag: UInt16, in directory: ExifDirectory) -> (values: [ExifRational], fromText: Bool)? {
        if let values = rationals(tag, in: directory) { return (values, false) }
        guard let text = string(tag, in: directory) else { return nil }
        let numbers = Self.decimalNumbers(in: text)
        guard !numbers.isEmpty else { return nil }
        // Nine decimal places: far finer than any GPS, and within Int64 for any coordinate.
        return (numbers.map { ExifRational(numerator: Int64(($0 * 1e9).rounded()), denominator: 1_000_000_000) }, true)
    }

    /// The decimal numbers in `text` ("47", "21.5", ".5", "-3", "1e-3"), in order.
    static func decimalNumbers(in text: String) -> [Double] {
        var numbers: [Double] = []
        var current = ""
        func flush() {
            if let value = Double(current), value.isFinite { numbers.append(value) }
            current = ""
        }
        for character in text {
            if character.isASCII, character.isNumber || character == "." {
                current.append(character)
            } else if (character == "-" || character == "+") && current.isEmpty {
                current.append(character)
            } else if (character == "e" || character == "E") && !current.isEmpty && !current.contains("e") {
                current.append("e")
            } else {
                flush()
                if character == "-" || character == "+" { current.append(character) }
            }
        }
        flush()
        return numbers
    }

    private func unsigned(_ bytes: [UInt8], at offset: Int, width: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<width {
            let byte = UInt64(bytes[offset + (bigEndian ? index : width - 1 - index)])
            value = value << 8 | byte
        }
        return value
    }
}
