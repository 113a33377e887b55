/// Finds the EXIF block in the bytes of a JPEG or PNG, without trusting any length the file
/// states: every length is checked against the bytes that are really there.
package enum ExifBlockLocator {
    /// The `Exif\0\0` header that starts an APP1 EXIF segment and that libexif expects.
    static let exifHeader: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0x00, 0x00]
    package static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// What was found: the EXIF block (starting with `Exif\0\0`) if any, and what looked wrong.
    package struct Found: Equatable {
        package var block: [UInt8]?
        package var warnings: [String] = []

        package init(block: [UInt8]? = nil, warnings: [String] = []) {
            self.block = block
            self.warnings = warnings
        }
    }

    /// The first APP1 `Exif` segment of a JPEG, walking the marker segments up to the start of scan.
    package static func jpeg(_ bytes: [UInt8]) -> Found {
        var found = Found()
        var exifSegments = 0
        var index = 2  // after SOI
        walk: while index < bytes.count {
            guard bytes[index] == 0xFF else {
                found.warnings.append("JPEG: no marker at byte \(index) (corrupt segment structure); EXIF search stopped there")
                break
            }
            // Any number of 0xFF fill bytes may precede a marker code.
            while index < bytes.count && bytes[index] == 0xFF { index += 1 }
            guard index < bytes.count else { break }
            let marker = bytes[index]
            index += 1
            switch marker {
            case 0xD8, 0x01, 0xD0...0xD7:
                continue walk  // markers without a length
            case 0xD9, 0xDA:
                break walk  // end of image or start of scan: metadata segments come before
            default:
                break
            }
            guard index + 2 <= bytes.count else {
                found.warnings.append("JPEG: truncated in the header of segment 0xFF\(hex(marker))")
                break
            }
            let length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
            guard length >= 2 else {
                found.warnings.append("JPEG: segment 0xFF\(hex(marker)) has an impossible length \(length); EXIF search stopped there")
                break
            }
            let start = index + 2
            let declaredEnd = index + length
            let end = min(declaredEnd, bytes.count)
            if marker == 0xE1 && hasPrefix(bytes, exifHeader, at: start, end: end) {
                exifSegments += 1
                if exifSegments == 1 {
                    found.block = Array(bytes[start..<end])
                    if declaredEnd > bytes.count {
                        found.warnings.append("JPEG: the EXIF segment is truncated (\(end - start) of \(length - 2) bytes present); reading what is there")
                    }
                }
            }
            if declaredEnd > bytes.count { break }
            index = declaredEnd
        }
        if exifSegments > 1 {
            found.warnings.append("JPEG: \(exifSegments) EXIF segments; the first is used")
        }
        return found
    }

    /// The `eXIf` chunk of a PNG, walking the chunk list. A chunk whose length runs past the end of
    /// the file or exceeds `maxBytes` is ignored with a warning.
    package static func png(_ bytes: [UInt8], maxBytes: Int) -> Found {
        var found = Found()
        var exifChunks = 0
        var index = pngSignature.count
        // Each chunk: length (4 bytes), type (4), data, CRC (4).
        let crcLength = 4
        while index + 8 <= bytes.count {
            let length = Int(bytes[index]) << 24 | Int(bytes[index + 1]) << 16 | Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            let type = String(decoding: bytes[(index + 4)..<(index + 8)], as: UTF8.self)
            let dataStart = index + 8
            let remaining = bytes.count - dataStart
            if type == "eXIf" {
                exifChunks += 1
                if length > remaining {
                    found.warnings.append("PNG: eXIf chunk claims \(length) bytes but only \(remaining) remain in the file; ignored")
                } else if length > maxBytes {
                    found.warnings.append("PNG: eXIf chunk of \(length) bytes exceeds the \(maxBytes)-byte limit; ignored")
                } else if exifChunks == 1 {
                    var payload = Array(bytes[dataStart..<(dataStart + length)])
                    // The eXIf chunk holds bare TIFF data; a few writers keep the JPEG-style header.
                    if !hasPrefix(payload, exifHeader, at: 0, end: payload.count) {
                        payload = exifHeader + payload
                    }
                    found.block = payload
                }
            }
            if type == "IEND" || length > remaining { break }
            index = dataStart + length + crcLength
        }
        if exifChunks > 1 {
            found.warnings.append("PNG: \(exifChunks) eXIf chunks; the first is used")
        }
        return found
    }

    private static func hasPrefix(_ bytes: [UInt8], _ prefix: [UInt8], at start: Int, end: Int) -> Bool {
        guard end - start >= prefix.count else { return false }
        return bytes[start..<(start + prefix.count)].elementsEqual(prefix)
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
