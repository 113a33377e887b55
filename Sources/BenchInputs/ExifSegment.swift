/// Moves a camera's EXIF block between JPEG files, so that generated photos carry what a real
/// camera writes (Darkroom's renders drop EXIF, and the metadata read has little to do without it).
enum ExifSegment {
    /// The whole APP1 `Exif` segment of a JPEG (marker, length and body), if it has one.
    static func find(in jpeg: [UInt8]) -> ArraySlice<UInt8>? {
        var index = 2  // after SOI
        while index + 4 <= jpeg.count, jpeg[index] == 0xFF {
            let marker = jpeg[index + 1]
            if marker == 0xDA || marker == 0xD9 { return nil }  // start of scan or end: no metadata after
            let end = index + 2 + (Int(jpeg[index + 2]) << 8 | Int(jpeg[index + 3]))
            guard end <= jpeg.count else { return nil }
            if marker == 0xE1, jpeg[(index + 4)...].starts(with: Array("Exif".utf8) + [0, 0]) {
                return jpeg[index..<end]
            }
            index = end
        }
        return nil
    }

    /// `jpeg` with `segment` inserted after its start marker and its JFIF APP0 segment, if any.
    static func insert(_ segment: ArraySlice<UInt8>, into jpeg: [UInt8]) -> [UInt8] {
        guard jpeg.count > 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return jpeg }
        var position = 2
        if jpeg[2] == 0xFF, jpeg[3] == 0xE0, jpeg.count > 6 {
            position = min(jpeg.count, 4 + (Int(jpeg[4]) << 8 | Int(jpeg[5])))
        }
        return Array(jpeg[..<position]) + segment + jpeg[position...]
    }
}
