/// Names what a file that is not a JPEG or PNG looks like, from its first bytes, so that a
/// refusal tells the user what they sent.
enum FileKind {
    private static let signatures: [(prefix: [UInt8], name: String)] = [
        ([0x47, 0x49, 0x46, 0x38], "a GIF image"),
        ([0x52, 0x49, 0x46, 0x46], "a RIFF file (WebP, AVI or WAV)"),
        ([0x49, 0x49, 0x2A, 0x00], "a TIFF image or raw camera file"),
        ([0x4D, 0x4D, 0x00, 0x2A], "a TIFF image or raw camera file"),
        ([0x25, 0x50, 0x44, 0x46], "a PDF document"),
        ([0x50, 0x4B, 0x03, 0x04], "a ZIP archive"),
        ([0x42, 0x4D], "a BMP image"),
        ([0x1F, 0x8B], "a gzip archive"),
    ]

    static func describe(_ bytes: [UInt8]) -> String {
        for signature in signatures where bytes.starts(with: signature.prefix) {
            return "looks like \(signature.name)"
        }
        if bytes.count >= 12, bytes[4...7].elementsEqual(Array("ftyp".utf8)) {
            let brand = String(decoding: bytes[8...11], as: UTF8.self)
            return brand.hasPrefix("hei") || brand.hasPrefix("mif") ? "looks like a HEIC/HEIF photo; export it as JPEG" : "looks like an ISO media file (\(brand))"
        }
        let head = bytes.prefix(512)
        if head.allSatisfy({ $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || (0x20..<0x7F).contains($0) }) {
            return "looks like text"
        }
        return "unknown format, \(bytes.count) bytes"
    }
}
