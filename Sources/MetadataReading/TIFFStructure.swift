/// Just enough of the TIFF structure of an EXIF block (starting with `Exif\0\0`) to see what
/// libexif 0.6.24 loses: the GPS IFD pointer (libexif drops pointers, so an empty GPS IFD looks
/// like none) and sub-IFD pointers that point past the end (on which libexif 0.6.24 abandons the
/// rest of the directory; fixed upstream in 0.6.25, "skip invalid tags rather than abort").
struct TIFFStructure {
    /// Where the TIFF header starts in the block, after `Exif\0\0`.
    static let tiffStart = 6
    /// libexif reads at most this many bytes of a block (the JPEG APP1 limit).
    static let libexifMaxBlock = 0xFFFE
    /// Tags whose value is an offset into the TIFF data that libexif follows.
    static let pointerTags: Set<Int> = [0x8769, 0x8825, 0xA005, 0x0201, 0x0202]
    /// An unassigned tag number that a broken pointer is renamed to, so that libexif keeps it as
    /// an ordinary entry instead of following it.
    static let neutralTag = 0xFFFF

    private(set) var block: [UInt8]
    private let bigEndian: Bool
    private let ifd0: Int

    /// The structure of `block`, or nil when it has no valid TIFF header.
    init?(_ block: [UInt8]) {
        self.block = block
        let t = Self.tiffStart
        guard block.count >= t + 8 else { return nil }
        switch (block[t], block[t + 1]) {
        case (0x4D, 0x4D): bigEndian = true
        case (0x49, 0x49): bigEndian = false
        default: return nil
        }
        guard let offset = Self.read(block, bigEndian: bigEndian, at: t + 4, width: 4) else { return nil }
        ifd0 = offset
    }

    /// Whether IFD0 has a GPS IFD pointer.
    var hasGPSPointer: Bool {
        entries(at: ifd0).contains { $0.tag == 0x8825 }
    }

    /// Renames sub-IFD and thumbnail pointers of IFD0 and the Exif IFD that point past the data
    /// libexif will see, and says which. The block is otherwise unchanged.
    mutating func neutralizeBrokenPointers() -> [String] {
        let visible = min(block.count, Self.libexifMaxBlock) - Self.tiffStart
        var warnings: [String] = []
        var directories = [("IFD0", ifd0)]
        if let exif = entries(at: ifd0).first(where: { $0.tag == 0x8769 }), exif.value < visible {
            directories.append(("Exif IFD", exif.value))
        }
        for (name, offset) in directories {
            for entry in entries(at: offset) where Self.pointerTags.contains(entry.tag) && entry.value >= visible {
                write(Self.neutralTag, at: entry.position)
                warnings.append("EXIF: \(name) entry 0x\(String(entry.tag, radix: 16)) points to offset \(entry.value), "
                                + "past the end of the EXIF data (\(visible) bytes); ignored")
            }
        }
        return warnings
    }

    /// The entries (tag, value as a LONG, absolute position) of the directory at a TIFF offset,
    /// as many as are really present.
    private func entries(at offset: Int) -> [(tag: Int, value: Int, position: Int)] {
        let start = Self.tiffStart + offset
        guard offset >= 0, let count = read(start, 2) else { return [] }
        var result: [(tag: Int, value: Int, position: Int)] = []
        // Each entry: tag (2), type (2), count (4), value or offset (4).
        for index in 0..<count {
            let position = start + 2 + index * 12
            guard let tag = read(position, 2), let value = read(position + 8, 4) else { break }
            result.append((tag, value, position))
        }
        return result
    }

    private func read(_ position: Int, _ width: Int) -> Int? {
        Self.read(block, bigEndian: bigEndian, at: position, width: width)
    }

    private static func read(_ block: [UInt8], bigEndian: Bool, at position: Int, width: Int) -> Int? {
        guard position >= 0, position + width <= block.count else { return nil }
        var value = 0
        for index in 0..<width {
            value = value << 8 | Int(block[position + (bigEndian ? index : width - 1 - index)])
        }
        return value
    }

    private mutating func write(_ tag: Int, at position: Int) {
        let high = UInt8(tag >> 8 & 0xFF)
        let low = UInt8(tag & 0xFF)
        block[position] = bigEndian ? high : low
        block[position + 1] = bigEndian ? low : high
    }
}
