import CEXIF

/// Parses an EXIF block with libexif and copies its entries into an `ExifTags` value, so that no
/// libexif memory outlives the call.
package enum ExifReader {
    /// The entries of `original` (which starts with `Exif\0\0`), or nil when libexif could not be
    /// set up, and libexif's complaints about corrupt data as warnings.
    package static func read(_ original: [UInt8]) -> (tags: ExifTags?, warnings: [String]) {
        var warnings: [String] = []
        var block = original
        var hasGPSPointer = false
        if var structure = TIFFStructure(original) {
            hasGPSPointer = structure.hasGPSPointer
            warnings += structure.neutralizeBrokenPointers()
            block = structure.block
        }
        let sink = UnsafeMutablePointer<DarkroomExifLogSink>.allocate(capacity: 1)
        // Registered first so that it runs last, after the log and data that point to it are gone.
        defer { sink.deallocate() }
        sink.initialize(to: DarkroomExifLogSink())
        guard let log = darkroom_exif_log_new(sink) else {
            return (nil, ["EXIF: out of memory creating the EXIF log; EXIF not read"])
        }
        defer { exif_log_unref(log) }
        guard let data = exif_data_new() else {
            return (nil, ["EXIF: out of memory creating the EXIF reader; EXIF not read"])
        }
        defer { exif_data_unref(data) }
        exif_data_log(data, log)
        // Keep every tag, known to libexif or not (GPSHPositioningError, OffsetTime*), and do not
        // let libexif "fix" the data by inventing mandatory entries that the file does not have.
        exif_data_unset_option(data, EXIF_DATA_OPTION_IGNORE_UNKNOWN_TAGS)
        exif_data_unset_option(data, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
        block.withUnsafeBufferPointer { buffer in
            if let base = buffer.baseAddress {
                exif_data_load_data(data, base, UInt32(clamping: buffer.count))
            }
        }

        for index in 0..<Int(sink.pointee.count) {
            let message = String(cString: darkroom_exif_log_message(sink, Int32(index)))
            warnings.append("EXIF: corrupt data: \(message)")
        }
        if sink.pointee.dropped > 0 {
            warnings.append("EXIF: \(sink.pointee.dropped) more corrupt-data messages not shown")
        }

        var tags = ExifTags(bigEndian: exif_data_get_byte_order(data) == EXIF_BYTE_ORDER_MOTOROLA)
        var total = 0
        for directory in ExifDirectory.allCases {
            guard let content = darkroom_exif_ifd(data, ExifIfd(rawValue: UInt32(directory.rawValue))) else { continue }
            var entries: [UInt16: ExifEntryValue] = [:]
            for position in 0..<Int(content.pointee.count) {
                guard let entry = content.pointee.entries?[position]?.pointee else { continue }
                let size = Int(entry.size)
                let bytes: [UInt8] = if let pointer = entry.data, size > 0 {
                    Array(UnsafeBufferPointer(start: pointer, count: size))
                } else {
                    []
                }
                let tag = UInt16(truncatingIfNeeded: entry.tag.rawValue)
                // The first of duplicated tags wins, as in other readers.
                if entries[tag] == nil {
                    entries[tag] = ExifEntryValue(
                        format: UInt16(truncatingIfNeeded: entry.format.rawValue),
                        components: Int(clamping: entry.components),
                        bytes: bytes)
                }
            }
            total += entries.count
            tags.directories[directory] = entries
        }
        tags.hasGPSPointer = hasGPSPointer
        if total == 0 {
            warnings.append("EXIF: the EXIF block holds no readable entries")
        }
        return (tags, warnings)
    }
}
