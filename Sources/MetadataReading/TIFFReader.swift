/// Bounds-checked reads of a TIFF structure inside a byte array: its header at `start`,
/// offsets counted from there.
struct TIFFReader {
    struct Entry {
        var tag: Int
        var type: Int
        var count: Int
        /// TIFF offset of the 12-byte entry.
        var position: Int
    }

    let bytes: [UInt8]
    let start: Int
    let end: Int
    let bigEndian: Bool
    /// A directory claiming more entries than this is read as empty.
    let maximumEntries: Int

    /// The reader of the TIFF data from `start` to `end` (the array's end by default), or nil
    /// when no TIFF byte-order mark is at `start`.
    init?(_ bytes: [UInt8], start: Int, end: Int? = nil, maximumEntries: Int = 1000) {
        self.bytes = bytes
        self.start = start
        self.end = min(end ?? bytes.count, bytes.count)
        self.maximumEntries = maximumEntries
        guard start >= 0, start + 8 <= self.end else { return nil }
        switch (bytes[start], bytes[start + 1]) {
        case (0x4D, 0x4D): bigEndian = true
        case (0x49, 0x49): bigEndian = false
        default: return nil
        }
    }

    /// An unsigned value of `width` bytes at a TIFF offset.
    func unsigned(_ offset: Int, _ width: Int) -> Int? {
        let at = start + offset
        guard offset >= 0, at + width <= end else { return nil }
        var value = 0
        for index in 0..<width {
            value = value << 8 | Int(bytes[at + (bigEndian ? index : width - 1 - index)])
        }
        return value
    }

    func u8(_ offset: Int) -> Int? { unsigned(offset, 1) }
    func u32(_ offset: Int) -> Int? { unsigned(offset, 4) }
    func i16(_ offset: Int) -> Int? { unsigned(offset, 2).map { Int(Int16(truncatingIfNeeded: $0)) } }
    func i32(_ offset: Int) -> Int? { unsigned(offset, 4).map { Int(Int32(truncatingIfNeeded: $0)) } }

    /// The entries of the directory at a TIFF offset, as many as are present (none when it
    /// claims more than `maximumEntries`).
    func entries(at offset: Int) -> [Entry] {
        guard let count = unsigned(offset, 2), count <= maximumEntries else { return [] }
        var result: [Entry] = []
        for index in 0..<count {
            let position = offset + 2 + index * 12
            guard let tag = unsigned(position, 2), let type = unsigned(position + 2, 2),
                  let components = u32(position + 4) else { break }
            result.append(Entry(tag: tag, type: type, count: components, position: position))
        }
        return result
    }

    /// Where an entry's value is, as a TIFF offset: inside the entry when it fits in 4 bytes,
    /// else where its offset field points.
    func valueOffset(_ entry: Entry) -> Int? {
        let widths = [1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8]
        guard let width = widths[entry.type] else { return nil }
        let (size, overflow) = width.multipliedReportingOverflow(by: entry.count)
        guard !overflow else { return nil }
        if size <= 4 { return entry.position + 8 }
        guard let pointer = u32(entry.position + 8), pointer + size <= end - start else { return nil }
        return pointer
    }
}
