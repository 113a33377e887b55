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
        guard let make = make?.lowercased(), let tiff = TIFFReader(block, start: TIFFStructure.tiffStart),
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
            return nikon(block, noteStart: TIFFStructure.tiffStart + noteOffset, noteLength: note.count)
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
