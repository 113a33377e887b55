import Foundation
import MetadataReading

/// Reads the location from the GPS IFD, falls back to the sidecar, and records why a
/// location was refused (warnings) and where a sidecar disagreed with EXIF (conflicts).
struct LocationResolver {
    let tags: ExifTags?
    let sidecar: Sidecar?
    let options: MetadataOptions
    private(set) var warnings: [String] = []
    private(set) var conflicts: [String] = []
    /// The camera's location, when the sidecar's replaced it (`sidecarOverridesExif`).
    private(set) var cameraLocation: GeoLocation?

    init(tags: ExifTags?, sidecar: Sidecar?, options: MetadataOptions) {
        self.tags = tags
        self.sidecar = sidecar
        self.options = options
    }

    /// The location, or nil when neither EXIF nor the sidecar holds a usable one.
    mutating func resolve() -> GeoLocation? {
        let fromSidecar = readSidecar()
        guard let fromExif = readExif() else { return fromSidecar }
        if let fromSidecar {
            let distance = fromExif.distance(to: fromSidecar)
            if distance > options.sidecarDistanceTolerance {
                let said = "location: sidecar says \(Self.describe(fromSidecar)) but EXIF GPS says "
                    + "\(Self.describe(fromExif)) (\(Int(distance.rounded())) m apart)"
                if options.sidecarOverridesExif {
                    conflicts.append(said + "; the sidecar's kept (the backend's explicit value), the camera's kept as camera_location")
                    cameraLocation = fromExif
                    return fromSidecar
                }
                conflicts.append(said + "; EXIF kept")
            }
        }
        return fromExif
    }

    private static func describe(_ location: GeoLocation) -> String {
        String(format: "%.6f, %.6f", location.latitude, location.longitude)
    }

    // MARK: EXIF

    private mutating func readExif() -> GeoLocation? {
        guard let tags else { return nil }
        if tags.isEmpty(.gps) {
            if tags.hasGPSPointer {
                warnings.append("EXIF GPS IFD is empty or unreadable; no location")
            }
            return nil
        }
        let latitudeRead = tags.rationalsOrText(ExifTagNumber.gpsLatitude, in: .gps)
        let longitudeRead = tags.rationalsOrText(ExifTagNumber.gpsLongitude, in: .gps)
        if latitudeRead?.fromText == true || longitudeRead?.fromText == true {
            warnings.append("EXIF GPS coordinates are stored as text, not as rationals; read as numbers")
        }
        let latitudeValue = latitudeRead?.values
        let longitudeValue = longitudeRead?.values
        guard latitudeValue != nil || longitudeValue != nil else {
            warnings.append("EXIF GPS IFD has no GPSLatitude/GPSLongitude; no location")
            return nil
        }
        guard let latitude = coordinate(latitudeValue, name: "GPSLatitude", refTag: ExifTagNumber.gpsLatitudeRef,
                                        refName: "GPSLatitudeRef", positive: "N", negative: "S"),
              let longitude = coordinate(longitudeValue, name: "GPSLongitude", refTag: ExifTagNumber.gpsLongitudeRef,
                                         refName: "GPSLongitudeRef", positive: "E", negative: "W")
        else { return nil }
        if let problem = GeoLocation.problem(latitude: latitude, longitude: longitude) {
            warnings.append("EXIF GPS position is \(problem); no location")
            return nil
        }
        return GeoLocation(latitude: latitude, longitude: longitude, altitude: altitude(tags),
                           horizontalError: horizontalError(tags), source: .exif)
    }

    /// Signed decimal degrees from degrees, minutes and seconds and their reference letter, or nil
    /// (with a warning) when any part is missing or unusable.
    private mutating func coordinate(_ parts: [ExifRational]?, name: String, refTag: UInt16, refName: String,
                                     positive: String, negative: String) -> Double? {
        guard let parts else {
            warnings.append("EXIF \(name) missing; no location")
            return nil
        }
        guard let reference = tags?.string(refTag, in: .gps) else {
            warnings.append("EXIF \(refName) missing; no location (the hemisphere is unknown)")
            return nil
        }
        let sign: Double
        switch reference.uppercased() {
        case positive: sign = 1
        case negative: sign = -1
        default:
            warnings.append("EXIF \(refName) is \"\(reference)\", not \(positive) or \(negative); no location")
            return nil
        }
        // Degrees, minutes, seconds; writers that store decimal degrees or minutes leave the rest 0.
        var degrees = 0.0
        for (index, part) in parts.prefix(3).enumerated() {
            guard let value = part.value else {
                warnings.append("EXIF \(name) has a zero denominator; no location")
                return nil
            }
            guard value >= 0 else {
                warnings.append("EXIF \(name) has a negative component (\(value)); no location")
                return nil
            }
            degrees += value / [1.0, 60.0, 3600.0][index]
        }
        return sign * degrees
    }

    private mutating func altitude(_ tags: ExifTags) -> Double? {
        guard let rational = tags.rationals(ExifTagNumber.gpsAltitude, in: .gps)?.first else { return nil }
        guard let value = rational.value, value.isFinite else {
            warnings.append("EXIF GPSAltitude has a zero denominator; altitude ignored")
            return nil
        }
        // GPSAltitudeRef 1 means below sea level; 0 or absent, above.
        let reference = tags.integers(ExifTagNumber.gpsAltitudeRef, in: .gps)?.first ?? 0
        if reference != 0 && reference != 1 {
            warnings.append("EXIF GPSAltitudeRef is \(reference), not 0 or 1; altitude ignored")
            return nil
        }
        return reference == 1 ? -abs(value) : value
    }

    private mutating func horizontalError(_ tags: ExifTags) -> Double? {
        guard let rational = tags.rationals(ExifTagNumber.gpsHPositioningError, in: .gps)?.first else { return nil }
        guard let value = rational.value, value.isFinite, value >= 0 else {
            warnings.append("EXIF GPSHPositioningError is not a usable distance; ignored")
            return nil
        }
        return value
    }

    // MARK: Sidecar

    private mutating func readSidecar() -> GeoLocation? {
        guard let sidecar, let latitude = sidecar.latitude, let longitude = sidecar.longitude else { return nil }
        // Exactly (0, 0) is a GPS without a fix when a camera or another tool writes it, but a
        // place when the backend says so (an upload's fields): kept, with its altitude.
        let explicitOrigin = options.sidecarOverridesExif && latitude == 0 && longitude == 0
        if !explicitOrigin, let problem = GeoLocation.problem(latitude: latitude, longitude: longitude) {
            warnings.append("sidecar location is \(problem); ignored")
            return nil
        }
        return GeoLocation(latitude: latitude, longitude: longitude, altitude: sidecar.altitude, source: .sidecar)
    }
}
