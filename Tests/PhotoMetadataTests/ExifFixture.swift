import Foundation

/// Builds small EXIF blocks byte by byte, in either byte order, and wraps them in a minimal JPEG
/// (APP1) or PNG (eXIf chunk), so that tests control every tag, including broken ones.
struct ExifFixture {
    struct Entry {
        var tag: UInt16
        var format: UInt16
        var count: UInt32
        /// The value's bytes, already in the fixture's byte order.
        var data: [UInt8]
    }

    var bigEndian = true
    var ifd0: [Entry] = []
    var exif: [Entry] = []
    var gps: [Entry] = []
    /// Writes a GPS IFD pointer even when `gps` is empty (an empty GPS IFD).
    var forceGPSDirectory = false

    // MARK: Values

    func ascii(_ tag: UInt16, _ text: String) -> Entry {
        let bytes = Array(text.utf8) + [0]
        return Entry(tag: tag, format: 2, count: UInt32(bytes.count), data: bytes)
    }

    func short(_ tag: UInt16, _ value: UInt16) -> Entry {
        Entry(tag: tag, format: 3, count: 1, data: bytes(UInt64(value), width: 2))
    }

    func byte(_ tag: UInt16, _ value: UInt8) -> Entry {
        Entry(tag: tag, format: 1, count: 1, data: [value])
    }

    func rationals(_ tag: UInt16, _ values: [(UInt32, UInt32)]) -> Entry {
        let data = values.flatMap { bytes(UInt64($0.0), width: 4) + bytes(UInt64($0.1), width: 4) }
        return Entry(tag: tag, format: 5, count: UInt32(values.count), data: data)
    }

    /// Degrees, minutes and seconds as three rationals; seconds with a denominator of 10 000 so
    /// that test coordinates survive the trip to 1e-6 degrees.
    func dms(_ tag: UInt16, _ decimal: Double) -> Entry {
        let value = abs(decimal)
        let degrees = value.rounded(.down)
        let minutes = ((value - degrees) * 60).rounded(.down)
        let seconds = ((value - degrees) * 60 - minutes) * 60
        return rationals(tag, [(UInt32(degrees), 1), (UInt32(minutes), 1), (UInt32((seconds * 10_000).rounded()), 10_000)])
    }

    // MARK: Containers

    /// `Exif\0\0` followed by the TIFF structure.
    var block: [UInt8] { [0x45, 0x78, 0x69, 0x66, 0, 0] + tiff }

    /// SOI, an APP1 EXIF segment, EOI: enough for the metadata reader.
    var jpeg: [UInt8] {
        let payload = block
        let length = payload.count + 2
        return [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload + [0xFF, 0xD9]
    }

    /// PNG signature, IHDR, an eXIf chunk with the bare TIFF data, IEND (CRCs left zero: the
    /// metadata reader does not check them).
    var png: [UInt8] {
        ExifFixture.pngSignature + ExifFixture.chunk("IHDR", [0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0])
            + ExifFixture.chunk("eXIf", tiff) + ExifFixture.chunk("IEND", [])
    }

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func chunk(_ type: String, _ data: [UInt8], claimedLength: UInt32? = nil) -> [UInt8] {
        let length = claimedLength ?? UInt32(data.count)
        let header: [UInt8] = [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
        return header + Array(type.utf8) + data + [0, 0, 0, 0]
    }

    // MARK: TIFF layout

    var tiff: [UInt8] {
        var first = ifd0
        let hasExif = !exif.isEmpty
        let hasGPS = !gps.isEmpty || forceGPSDirectory
        if hasExif { first.append(Entry(tag: 0x8769, format: 4, count: 1, data: bytes(0, width: 4))) }
        if hasGPS { first.append(Entry(tag: 0x8825, format: 4, count: 1, data: bytes(0, width: 4))) }
        let headerSize = 8
        let exifOffset = headerSize + size(of: first)
        let gpsOffset = exifOffset + (hasExif ? size(of: exif) : 0)
        for index in first.indices {
            if first[index].tag == 0x8769 { first[index].data = bytes(UInt64(exifOffset), width: 4) }
            if first[index].tag == 0x8825 { first[index].data = bytes(UInt64(gpsOffset), width: 4) }
        }
        var out: [UInt8] = bigEndian ? [0x4D, 0x4D, 0, 0x2A] : [0x49, 0x49, 0x2A, 0]
        out += bytes(UInt64(headerSize), width: 4)
        out += directory(first, at: headerSize)
        if hasExif { out += directory(exif, at: exifOffset) }
        if hasGPS { out += directory(gps, at: gpsOffset) }
        return out
    }

    private func size(of entries: [Entry]) -> Int {
        2 + 12 * entries.count + 4 + entries.reduce(0) { $0 + ($1.data.count > 4 ? padded($1.data.count) : 0) }
    }

    private func padded(_ count: Int) -> Int { count + count % 2 }

    private func directory(_ entries: [Entry], at offset: Int) -> [UInt8] {
        let sorted = entries.sorted { $0.tag < $1.tag }
        var table = bytes(UInt64(sorted.count), width: 2)
        var area: [UInt8] = []
        let areaStart = offset + 2 + 12 * sorted.count + 4
        for entry in sorted {
            table += bytes(UInt64(entry.tag), width: 2) + bytes(UInt64(entry.format), width: 2)
                + bytes(UInt64(entry.count), width: 4)
            if entry.data.count > 4 {
                table += bytes(UInt64(areaStart + area.count), width: 4)
                area += entry.data
                if entry.data.count % 2 == 1 { area.append(0) }
            } else {
                table += entry.data + [UInt8](repeating: 0, count: 4 - entry.data.count)
            }
        }
        return table + bytes(0, width: 4) + area
    }

    func bytes(_ value: UInt64, width: Int) -> [UInt8] {
        let little = (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
        return bigEndian ? little.reversed() : little
    }
}

/// Tag numbers used by the tests (EXIF 2.32).
enum Tag {
    static let make: UInt16 = 0x010F
    static let model: UInt16 = 0x0110
    static let orientation: UInt16 = 0x0112
    static let dateTime: UInt16 = 0x0132
    static let dateTimeOriginal: UInt16 = 0x9003
    static let dateTimeDigitized: UInt16 = 0x9004
    static let offsetTime: UInt16 = 0x9010
    static let offsetTimeOriginal: UInt16 = 0x9011
    static let offsetTimeDigitized: UInt16 = 0x9012
    static let subSecTimeOriginal: UInt16 = 0x9291
    static let gpsLatitudeRef: UInt16 = 0x0001
    static let gpsLatitude: UInt16 = 0x0002
    static let gpsLongitudeRef: UInt16 = 0x0003
    static let gpsLongitude: UInt16 = 0x0004
    static let gpsAltitudeRef: UInt16 = 0x0005
    static let gpsAltitude: UInt16 = 0x0006
    static let gpsTimeStamp: UInt16 = 0x0007
    static let gpsDateStamp: UInt16 = 0x001D
    static let gpsHPositioningError: UInt16 = 0x001F
}
