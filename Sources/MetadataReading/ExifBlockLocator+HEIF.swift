import CHEIF

extension ExifBlockLocator {
    /// The EXIF item of a HEIF file's primary image, read through libheif (which checks every
    /// box and item length), given the `Exif\0\0` header so the same reader as JPEG's APP1
    /// takes it. A file libheif cannot open has no EXIF read, with a warning.
    package static func heif(_ bytes: [UInt8], maxBytes: Int) -> Found {
        var out: UnsafeMutablePointer<UInt8>?
        var length = 0
        var status = dr_heif_status()
        let code = bytes.withUnsafeBufferPointer { buffer in
            // One byte over the limit, so the caller can tell that the item was cut.
            dr_heif_exif(buffer.baseAddress, buffer.count, maxBytes + 1, &out, &length, &status)
        }
        guard code == Int32(DR_HEIF_OK.rawValue) else {
            let text = withUnsafeBytes(of: &status.message) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
            return Found(block: nil, warnings: ["HEIF: cannot read the EXIF item (\(text.isEmpty ? "libheif error \(code)" : text))"])
        }
        guard let out else { return Found(block: nil) }
        defer { dr_heif_free(out) }
        return Found(block: exifHeader + Array(UnsafeBufferPointer(start: out, count: length)))
    }
}
