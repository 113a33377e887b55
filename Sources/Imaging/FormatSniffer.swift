import CHEIF

/// Recognises formats by their magic bytes, and names what other bytes look like.
enum FormatSniffer {
    static func format(of bytes: [UInt8]) -> ImageFormat? {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        return heifFormat(of: bytes)
    }

    /// HEIC, HEIF or AVIF by the file's `ftyp` brands, as libheif tells them: a still image
    /// (an image sequence or a video's brands are not one).
    static func heifFormat(of bytes: [UInt8]) -> ImageFormat? {
        let type = bytes.withUnsafeBufferPointer { dr_heif_mime_type($0.baseAddress, $0.count) }
        return type.flatMap { ImageFormat(mimeType: String(cString: $0)) }
    }

    /// ISO media brands of video files (phones' MP4 and 3GP, QuickTime), which a photo
    /// library's folders hold beside the photos.
    static let videoBrands: [String: String] = [
        "qt": "a QuickTime movie (MOV)",
        "isom": "an MP4 video", "iso2": "an MP4 video", "mp41": "an MP4 video", "mp42": "an MP4 video",
        "avc1": "an MP4 video", "m4v": "an MP4 video", "mmp4": "an MP4 video",
        "3gp4": "an MP4 video", "3gp5": "an MP4 video", "3g2a": "an MP4 video",
    ]

    /// A short description of bytes of no format Darkroom reads, for the refusal message: what
    /// they look like. `showingBytes` adds the first bytes of unknown data (for one file's
    /// refusal); without it, descriptions group files of one kind (for a summary).
    static func describe(_ bytes: [UInt8], showingBytes: Bool = true) -> String {
        func ascii(_ range: Range<Int>) -> String {
            guard bytes.count >= range.upperBound else { return "" }
            return String(decoding: bytes[range], as: UTF8.self)
        }
        if bytes.starts(with: Array("GIF8".utf8)) { return "a GIF image" }
        if ascii(0..<4) == "RIFF" && ascii(8..<12) == "WEBP" { return "a WebP image" }
        if ascii(4..<8) == "ftyp" {
            let brand = ascii(8..<12)
            switch brand {
            case "heic", "heix", "hevc", "heim", "heis", "mif1", "msf1": return "a HEIF image sequence or a damaged HEIF file"
            case "avif", "avis": return "an AVIF image sequence or a damaged AVIF file"
            default:
                let code = String(brand.filter { $0 != " " }).lowercased()
                return videoBrands[code] ?? "an ISO media file (brand '\(brand)')"
            }
        }
        if bytes.starts(with: [0x49, 0x49, 0x2A, 0x00]) || bytes.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) {
            return "a TIFF or camera raw file"
        }
        if bytes.starts(with: Array("BM".utf8)) { return "a BMP image" }
        if bytes.starts(with: Array("%PDF".utf8)) { return "a PDF document" }
        if bytes.starts(with: [0xFF, 0x0A]) || bytes.starts(with: [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20]) {
            return "a JPEG XL image"
        }
        // Two of the four leading signature bytes intact: a PNG whose signature was damaged
        // (by a text-mode transfer or a flipped bit).
        let pngLead: [UInt8] = [0x89, 0x50, 0x4E, 0x47]
        if bytes.count >= 4 && zip(bytes.prefix(4), pngLead).filter({ $0 == $1 }).count >= 2 && bytes.prefix(16).contains(0x1A) {
            return "a damaged PNG signature"
        }
        if bytes.starts(with: [0xFF, 0xD8]) { return "a damaged JPEG start marker" }
        if bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) { return "a ZIP archive" }
        let head = bytes.prefix(512)
        if !head.isEmpty && head.allSatisfy({ $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || (0x20..<0x7F).contains($0) }) {
            if head.first == UInt8(ascii: "<") { return "HTML or XML text" }
            return "plain text"
        }
        if head.allSatisfy({ $0 == 0 }) { return "zero bytes" }
        guard showingBytes else { return "unknown binary data" }
        let hex = bytes.prefix(4).map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }
        return "unknown binary data starting \(hex.joined(separator: " "))"
    }
}
