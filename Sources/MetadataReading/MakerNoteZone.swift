/// The time zone a camera records in its maker note, where EXIF has no offset:
///
/// - Canon: tag 0x0035 `TimeInfo`, signed 32-bit values; [1] is the zone in minutes from UTC,
///   [3] the daylight-saving shift in minutes (0 or 60).
/// - Nikon (type 2 maker notes, `Nikon\0` then a TIFF header of their own): tag 0x0024
///   `WorldTime`, bytes [0..1] the zone in minutes (signed 16-bit), byte [2] daylight saving
///   (1: one hour more).
///
/// The offset of the camera's clock is the zone plus the daylight-saving shift, as ExifTool
/// composes it. libexif keeps the MakerNote's bytes but not where they were in the block, and
/// Canon's entries point into the whole TIFF data, so the note is found here by walking the
/// block's own directories (IFD0, then the Exif IFD's tag 0x927C).
package struct MakerNoteZone: Equatable, Sendable {
    /// Which maker's note said it ("Canon", "Nikon").
    var maker: String
    /// The zone in minutes east of UTC, without daylight saving.
    var zoneMinutes: Int
    /// The daylight-saving shift in minutes (0 or 60).
    var daylightMinutes: Int

    /// The camera clock's UTC offset in seconds.
    package var offsetSeconds: Int { (zoneMinutes + daylightMinutes) * 60 }

    /// The zone of the maker note in `block` (which starts with `Exif\0\0`), or nil when the
    /// camera is not one whose note is read, the note has no zone, or it is malformed.
    package static func read(block: [UInt8], make: String?) -> MakerNoteZone? {
        guard let make = make?.lowercased(), let tiff = TIFFReader(block, start: 6),
              let ifd0 = tiff.u32(4),
              let exifPointer = tiff.entries(at: ifd0).first(where: { $0.tag == 0x8769 }),
              let exifOffset = tiff.u32(exifPointer.position + 8),
              let note = tiff.entries(at: exifOffset).first(where: { $0.tag == 0x927C }),
              let noteOffset = tiff.valueOffset(note)
        else { return nil }
        if make.hasPrefix("canon") {
            return canon(tiff, noteOffset: noteOffset)
        }
        if make.hasPrefix("nikon") {
            return nikon(block, noteStart: 6 + noteOffset, noteLength: note.count)
        }
        return nil
    }

    /// Canon's note is a bare IFD whose offsets count from the main TIFF header.
    private static func canon(_ tiff: TIFFReader, noteOffset: Int) -> MakerNoteZone? {
        guard let entry = tiff.entries(at: noteOffset).first(where: { $0.tag == 0x0035 }),
              entry.type == 4 || entry.type == 9, entry.count >= 4, let at = tiff.valueOffset(entry),
              let zone = tiff.i32(at + 4), let daylight = tiff.i32(at + 12),
              abs(zone) <= 14 * 60, daylight == 0 || daylight == 60
        else { return nil }
        return MakerNoteZone(maker: "Canon", zoneMinutes: zone, daylightMinutes: daylight)
    }

    /// Nikon's type 2 note: `Nikon\0`, a version, then a TIFF header whose offsets count from itself.
    private static func nikon(_ block: [UInt8], noteStart: Int, noteLength: Int) -> MakerNoteZone? {
        let signature: [UInt8] = Array("Nikon".utf8) + [0]
        guard noteStart >= 0, noteStart + 18 <= block.count,
              Array(block[noteStart..<(noteStart + 6)]) == signature,
              let inner = TIFFReader(block, start: noteStart + 10, end: min(block.count, noteStart + noteLength)),
              let ifd = inner.u32(4),
              let entry = inner.entries(at: ifd).first(where: { $0.tag == 0x0024 }),
              entry.count >= 3, let at = inner.valueOffset(entry),
              let zone = inner.i16(at), let daylight = inner.u8(at + 2),
              abs(zone) <= 14 * 60, daylight <= 1
        else { return nil }
        return MakerNoteZone(maker: "Nikon", zoneMinutes: zone, daylightMinutes: daylight == 1 ? 60 : 0)
    }
}

/// Bounds-checked reads of a TIFF structure inside a byte array: its header at `start`,
/// offsets counted from there.
private struct TIFFReader {
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

    init?(_ bytes: [UInt8], start: Int, end: Int? = nil) {
        self.bytes = bytes
        self.start = start
        self.end = min(end ?? bytes.count, bytes.count)
        guard start >= 0, start + 8 <= self.end else { return nil }
        switch (bytes[start], bytes[start + 1]) {
        case (0x4D, 0x4D): bigEndian = true
        case (0x49, 0x49): bigEndian = false
        default: return nil
        }
    }

    /// An unsigned value of `width` bytes at a TIFF offset.
    private func unsigned(_ offset: Int, _ width: Int) -> Int? {
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

    /// The entries of the directory at a TIFF offset (at most 1,000, as many as are present).
    func entries(at offset: Int) -> [Entry] {
        guard let count = unsigned(offset, 2), count <= 1000 else { return [] }
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
