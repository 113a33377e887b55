import Foundation
import MetadataReading

/// Chooses the capture time by priority and records why other candidates were
/// passed over (warnings) and where a sidecar disagreed with EXIF (conflicts). When the
/// sidecar is the backend's own word (`sidecarOverridesExif`) and disagrees, its time wins and
/// the camera's is kept in `cameraTime`.
struct CaptureTimeResolver {
    let tags: ExifTags?
    let sidecar: Sidecar?
    let fileTime: Date?
    let options: MetadataOptions
    /// The camera's zone from its maker note, when it records one.
    let makerNoteZone: MakerNoteZone?
    /// Where the photo was taken: its zone on that date is the next guess after the maker note.
    let location: GeoLocation?
    private(set) var warnings: [String] = []
    private(set) var conflicts: [String] = []
    /// The camera's time, when the sidecar's replaced it.
    private(set) var cameraTime: CaptureTime?

    init(tags: ExifTags?, sidecar: Sidecar?, fileTime: Date?, options: MetadataOptions,
         makerNoteZone: MakerNoteZone? = nil, location: GeoLocation? = nil) {
        self.makerNoteZone = makerNoteZone
        self.location = location
        self.tags = tags
        self.sidecar = sidecar
        self.fileTime = fileTime
        self.options = options
    }

    /// One EXIF date-time field with the tags that complete it and the sources it reports.
    private struct ExifTimeField {
        var name: String
        var dateTag: UInt16
        var directory: ExifDirectory
        var subSecondTag: UInt16
        var subSecondName: String
        var offsetTag: UInt16
        var offsetName: String
        var recordedSource: TimeSource
        var gpsSource: TimeSource
        var assumedSource: TimeSource
        /// With the camera's maker-note zone, and with the place's zone.
        var makerNoteSource: TimeSource
        var placeSource: TimeSource
        /// With the offset that makes it the sidecar's instant.
        var sidecarSource: TimeSource
    }

    private static let exifFields = [
        ExifTimeField(name: "DateTimeOriginal", dateTag: ExifTagNumber.dateTimeOriginal, directory: .exif,
                      subSecondTag: ExifTagNumber.subSecTimeOriginal, subSecondName: "SubSecTimeOriginal",
                      offsetTag: ExifTagNumber.offsetTimeOriginal, offsetName: "OffsetTimeOriginal",
                      recordedSource: .exifOriginal, gpsSource: .exifOriginalGPSOffset,
                      assumedSource: .exifOriginalAssumedZone, makerNoteSource: .exifOriginalMakerNoteZone,
                      placeSource: .exifOriginalPlaceZone, sidecarSource: .exifOriginalSidecarOffset),
        ExifTimeField(name: "DateTimeDigitized", dateTag: ExifTagNumber.dateTimeDigitized, directory: .exif,
                      subSecondTag: ExifTagNumber.subSecTimeDigitized, subSecondName: "SubSecTimeDigitized",
                      offsetTag: ExifTagNumber.offsetTimeDigitized, offsetName: "OffsetTimeDigitized",
                      recordedSource: .exifDigitized, gpsSource: .exifDigitized, assumedSource: .exifDigitized,
                      makerNoteSource: .exifDigitized, placeSource: .exifDigitized,
                      sidecarSource: .exifDigitized),
        ExifTimeField(name: "DateTime", dateTag: ExifTagNumber.dateTime, directory: .ifd0,
                      subSecondTag: ExifTagNumber.subSecTime, subSecondName: "SubSecTime",
                      offsetTag: ExifTagNumber.offsetTime, offsetName: "OffsetTime",
                      recordedSource: .exifDateTime, gpsSource: .exifDateTime, assumedSource: .exifDateTime,
                      makerNoteSource: .exifDateTime, placeSource: .exifDateTime,
                      sidecarSource: .exifDateTime),
    ]

    /// The capture time, or nil when no source holds a usable one.
    mutating func resolve() -> CaptureTime? {
        let sidecarTime = readSidecarTime()
        for field in Self.exifFields {
            if let time = readExif(field) {
                guard let sidecarTime else { return time }
                if let zoned = zoned(time, field: field, bySidecar: sidecarTime) { return zoned }
                guard let apart = disagreement(exif: time, sidecar: sidecarTime) else { return time }
                let said = "capture time: sidecar taken_at says \(Self.describe(sidecarTime)) but EXIF \(field.name) says "
                    + "\(Self.describe(time)) (\(apart) s apart)"
                if options.sidecarOverridesExif {
                    conflicts.append(said + "; the sidecar's kept (the backend's explicit value), the camera's kept as camera_capture_time")
                    cameraTime = time
                    return sidecarTime
                }
                conflicts.append(said + "; EXIF kept")
                return time
            }
        }
        if let sidecarTime {
            if sidecarTime.offsetSource == .assumed {
                warnings.append("sidecar taken_at has no usable UTC offset; default zone "
                                + "\(options.defaultTimeZone.identifier) assumed")
            }
            return sidecarTime
        }
        if let fileTime {
            let offset = options.defaultTimeZone.secondsFromGMT(for: fileTime)
            let wall = LocalDateTime(instant: fileTime, offsetSeconds: offset)
            if let problem = wall.calendarProblem(years: options.plausibleYears) {
                warnings.append("file time \(wall.isoString) is impossible (\(problem)); no capture time")
                return nil
            }
            return CaptureTime(instant: wall.instant(offsetSeconds: offset), localTime: wall.isoString,
                               offsetSeconds: nil, source: .fileTime, offsetSource: .assumed, trusted: false)
        }
        return nil
    }

    // MARK: EXIF

    private mutating func readExif(_ field: ExifTimeField) -> CaptureTime? {
        guard let tags, let text = tags.string(field.dateTag, in: field.directory) else { return nil }
        var wall: LocalDateTime
        switch LocalDateTime.parse(exif: text, years: options.plausibleYears) {
        case .absent:
            return nil
        case .invalid(let reason):
            warnings.append("EXIF \(field.name): \(reason); ignored")
            return nil
        case .valid(let value):
            wall = value
        }
        if let digits = exifString(field.subSecondTag) {
            if let milliseconds = LocalDateTime.milliseconds(fromDigits: digits) {
                wall.millisecond = milliseconds
            } else {
                warnings.append("EXIF \(field.subSecondName): \"\(digits)\" is not a fraction of a second; ignored")
            }
        }
        if let offsetText = exifString(field.offsetTag) {
            switch LocalDateTime.parseOffset(offsetText) {
            case .valid(let offset):
                return time(wall, offset: offset, source: field.recordedSource, offsetSource: .recorded)
            case .invalid(let reason):
                warnings.append("EXIF \(field.offsetName): \(reason); ignored")
            case .absent:
                break
            }
        }
        if let offset = gpsDerivedOffset(for: wall) {
            return time(wall, offset: offset, source: field.gpsSource, offsetSource: .gps)
        }
        if let makerNoteZone {
            return time(wall, offset: makerNoteZone.offsetSeconds, source: field.makerNoteSource, offsetSource: .makerNote)
        }
        return inferred(wall, placeSource: field.placeSource, assumedSource: field.assumedSource)
    }

    /// OffsetTime* and SubSecTime* belong in the Exif IFD; some writers put them in IFD0.
    private func exifString(_ tag: UInt16) -> String? {
        tags?.string(tag, in: .exif) ?? tags?.string(tag, in: .ifd0)
    }

    /// The UTC offset of `wall` implied by the GPS time stamp (which is UTC), rounded to 15 minutes,
    /// or nil when there is no usable GPS time or the difference is not a real offset.
    private mutating func gpsDerivedOffset(for wall: LocalDateTime) -> Int? {
        guard let tags,
              let dateText = tags.string(ExifTagNumber.gpsDateStamp, in: .gps),
              let clock = tags.rationals(ExifTagNumber.gpsTimeStamp, in: .gps)
        else { return nil }
        guard case .valid(let day) = LocalDateTime.parse(exif: dateText + " 00:00:00", years: options.plausibleYears) else {
            warnings.append("EXIF GPSDateStamp: \"\(dateText)\" is not a valid date; no GPS-derived offset")
            return nil
        }
        let values = clock.prefix(3).compactMap(\.value)
        guard clock.count >= 3, values.count == 3,
              (0..<24).contains(values[0]), (0..<60).contains(values[1]), values[2] >= 0, values[2] < 61
        else {
            warnings.append("EXIF GPSTimeStamp: not a valid time of day; no GPS-derived offset")
            return nil
        }
        let gpsSeconds = Double(day.secondsAsIfUTC) + values[0] * 3600 + values[1] * 60 + values[2]
        let wallSeconds = Double(wall.secondsAsIfUTC) + Double(wall.millisecond ?? 0) / 1000
        let step = Double(MetadataLimits.offsetRoundingSeconds)
        let offset = Int(((wallSeconds - gpsSeconds) / step).rounded()) * MetadataLimits.offsetRoundingSeconds
        let residual = abs(wallSeconds - gpsSeconds - Double(offset))
        guard LocalDateTime.isPlausibleOffset(offset), residual <= MetadataLimits.gpsClockToleranceSeconds else {
            warnings.append("EXIF GPS time differs from the camera time by \(Int(wallSeconds - gpsSeconds)) s, "
                            + "which is no time zone (within \(Int(MetadataLimits.gpsClockToleranceSeconds)) s); "
                            + "GPS-derived offset ignored")
            return nil
        }
        return offset
    }

    // MARK: Sidecar

    /// The sidecar's `taken_at` as a capture time, or nil (with a warning when it is unusable).
    private mutating func readSidecarTime() -> CaptureTime? {
        guard let text = sidecar?.takenAt else { return nil }
        let parsed = LocalDateTime.parse(iso: text, years: options.plausibleYears)
        guard case .valid(let wall) = parsed.wall else {
            if case .invalid(let reason) = parsed.wall {
                warnings.append("sidecar taken_at: \(reason); ignored")
            }
            return nil
        }
        switch parsed.offset {
        case .valid(let offset):
            return time(wall, offset: offset, source: .sidecar, offsetSource: .recorded)
        case .invalid(let reason):
            warnings.append("sidecar taken_at: \(reason); offset ignored")
        case .absent:
            break
        }
        return inferred(wall, placeSource: .sidecar, assumedSource: .sidecar)
    }

    /// An EXIF time without an offset, given the offset that makes it the sidecar's instant
    /// (Takeout's `photoTakenTime` is the right instant but says nothing of the zone; the camera's
    /// wall time is right but has no zone): nil unless the EXIF zone was inferred, the sidecar's
    /// instant is known, and the difference is a real offset to within the tolerance.
    private func zoned(_ exif: CaptureTime, field: ExifTimeField, bySidecar sidecar: CaptureTime) -> CaptureTime? {
        guard !exif.offsetSource.isExact, sidecar.offsetSource == .recorded,
              case .valid(let wall) = LocalDateTime.parse(exif: exif.localTime, years: 1...9999) else { return nil }
        let difference = Double(wall.secondsAsIfUTC) + Double(wall.millisecond ?? 0) / 1000 - sidecar.instant.timeIntervalSince1970
        let step = Double(MetadataLimits.offsetRoundingSeconds)
        let offset = Int((difference / step).rounded()) * MetadataLimits.offsetRoundingSeconds
        guard LocalDateTime.isPlausibleOffset(offset), abs(difference - Double(offset)) <= options.sidecarTimeTolerance else { return nil }
        return time(wall, offset: offset, source: field.sidecarSource, offsetSource: .sidecar)
    }

    /// How many seconds apart the sidecar's time and the EXIF time are, when more than the
    /// tolerance; nil when they agree. When either side's zone was inferred, wall times are
    /// compared, since its instant is only a guess.
    private func disagreement(exif: CaptureTime, sidecar: CaptureTime) -> Int? {
        let difference: Double
        if !exif.offsetSource.isExact || !sidecar.offsetSource.isExact {
            guard case .valid(let a) = LocalDateTime.parse(exif: exif.localTime, years: 1...9999),
                  case .valid(let b) = LocalDateTime.parse(exif: sidecar.localTime, years: 1...9999)
            else { return nil }
            difference = a.seconds(since: b)
        } else {
            difference = exif.instant.timeIntervalSince(sidecar.instant)
        }
        guard abs(difference) > options.sidecarTimeTolerance else { return nil }
        return Int(abs(difference).rounded())
    }

    private static func describe(_ time: CaptureTime) -> String {
        guard let offset = time.offsetSeconds else { return time.localTime + " (zone unknown)" }
        return time.localTime + LocalDateTime.offsetString(offset)
    }

    // MARK: Building

    private func time(_ wall: LocalDateTime, offset: Int, source: TimeSource, offsetSource: OffsetSource) -> CaptureTime {
        CaptureTime(instant: wall.instant(offsetSeconds: offset), localTime: wall.isoString, offsetSeconds: offset,
                    source: source, offsetSource: offsetSource, trusted: true)
    }

    /// A wall time without a recorded offset: in the zone of the place it was taken when the
    /// location is known (and the gazetteer loaded), else in the default zone.
    private mutating func inferred(_ wall: LocalDateTime, placeSource: TimeSource, assumedSource: TimeSource) -> CaptureTime {
        if options.zoneFromPlace, let location, let zone = PlaceZone.zone(latitude: location.latitude, longitude: location.longitude) {
            return time(wall, offset: wall.offset(in: zone), source: placeSource, offsetSource: .place)
        }
        return assumed(wall, source: assumedSource)
    }

    private func assumed(_ wall: LocalDateTime, source: TimeSource) -> CaptureTime {
        let offset = wall.offset(in: options.defaultTimeZone)
        return CaptureTime(instant: wall.instant(offsetSeconds: offset), localTime: wall.isoString, offsetSeconds: nil,
                           source: source, offsetSource: .assumed, trusted: true)
    }
}
