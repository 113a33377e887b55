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
    private let ifd0: Int

    /// The structure of `block`, or nil when it has no valid TIFF header.
    init?(_ block: [UInt8]) {
        self.block = block
        guard let reader = Self.reader(of: block), let offset = reader.u32(4) else { return nil }
        ifd0 = offset
    }

    /// Whether IFD0 has a GPS IFD pointer.
    var hasGPSPointer: Bool {
        entries(at: ifd0).contains { $0.tag == Int(ExifTagNumber.gpsInfoPointer) }
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
                write(Self.neutralTag, at: Self.tiffStart + entry.position)
                warnings.append("EXIF: \(name) entry 0x\(String(entry.tag, radix: 16)) points to offset \(entry.value), "
                                + "past the end of the EXIF data (\(visible) bytes); ignored")
            }
        }
        return warnings
    }

    /// A reader of the block's TIFF data. libexif reads every entry a directory has room for,
    /// so no count is refused here (a count is 16 bits).
    private static func reader(of block: [UInt8]) -> TIFFReader? {
        TIFFReader(block, start: tiffStart, maximumEntries: Int(UInt16.max))
    }

    /// The entries (tag, value as a LONG, TIFF offset of the entry) of the directory at a TIFF
    /// offset, as many as are really present.
    private func entries(at offset: Int) -> [(tag: Int, value: Int, position: Int)] {
        guard let reader = Self.reader(of: block) else { return [] }
        var result: [(tag: Int, value: Int, position: Int)] = []
        for entry in reader.entries(at: offset) {
            guard let value = reader.u32(entry.position + 8) else { break }
            result.append((entry.tag, value, entry.position))
        }
        return result
    }

    private mutating func write(_ tag: Int, at position: Int) {
        let bigEndian = block[Self.tiffStart] == 0x4D
        let high = UInt8(tag >> 8 & 0xFF)
        let low = UInt8(tag & 0xFF)
        block[position] = bigEndian ? high : low
        block[position + 1] = bigEndian ? low : high
    }
}
