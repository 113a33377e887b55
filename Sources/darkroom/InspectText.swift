import Foundation
import Imaging
import Operations
import PhotoMetadata

/// The text form of `darkroom inspect`.
enum InspectText {
    /// Where the offset came from, and whether it is exact or inferred.
    static func zoneSource(_ source: OffsetSource) -> String {
        switch source {
        case .recorded: " recorded with the time, exact"
        case .gps: " from GPS time, exact"
        case .sidecar: " from the sidecar's time, exact"
        case .makerNote: " from the camera's maker note, inferred"
        case .place: " the zone of the place where it was taken, inferred"
        case .assumed: " the default zone, inferred"
        }
    }

    static func render(_ report: PhotoReport) -> String {
        let m = report.metadata
        var lines = ["\(report.file)"]
        func add(_ label: String, _ value: String) {
            lines.append("  " + label.padding(toLength: 12, withPad: " ", startingAt: 0) + value)
        }
        add("format", "\(report.format), \(report.width)x\(report.height), shown \(report.displayWidth)x\(report.displayHeight), \(report.color)\(report.hasIccProfile ? ", ICC profile" : "")")
        add("bytes", "\(m.byteSize)")
        add("sha256", m.sha256)
        if let thumbHash = report.thumbHash, let bytes = Data(base64Encoded: thumbHash), let average = ThumbHash.averageRGB([UInt8](bytes)) {
            add("placeholder", "\(thumbHash) (ThumbHash; average colour \(String(format: "#%02x%02x%02x", average.red, average.green, average.blue)))")
        }
        if let time = m.captureTime {
            let offset = time.offsetSeconds.map { Self.offset($0) + Self.zoneSource(time.offsetSource) }
                ?? "no offset in the file: read in the default zone, inferred"
            add("taken", "\(time.localTime) (\(offset)) = \(ISO8601DateFormatter().string(from: time.instant)) from \(time.source.rawValue)\(time.trusted ? "" : ", untrusted")")
        } else {
            add("taken", "unknown")
        }
        if let location = m.location {
            var text = String(format: "%.7f, %.7f", location.latitude, location.longitude)
            if let altitude = location.altitude { text += String(format: ", %.1f m", altitude) }
            if let error = location.horizontalError { text += String(format: " (±%.0f m)", error) }
            add("where", text + " from \(location.source.rawValue)")
        } else {
            add("where", "no location")
        }
        if let camera = m.cameraCaptureTime {
            add("camera took", "\(camera.localTime) = \(ISO8601DateFormatter().string(from: camera.instant)) from \(camera.source.rawValue): the sidecar's taken_at wins (the backend's explicit value)")
        }
        if let camera = m.cameraLocation {
            add("camera was", String(format: "%.7f, %.7f", camera.latitude, camera.longitude) + " from \(camera.source.rawValue): the sidecar's location wins (the backend's explicit value)")
        }
        add("orientation", "\(m.orientation)")
        if m.make != nil || m.model != nil { add("camera", [m.make, m.model].compactMap { $0 }.joined(separator: " ")) }
        if let author = m.authorId { add("author", author) }
        for warning in m.warnings { add("warning", warning) }
        for conflict in m.conflicts { add("conflict", conflict) }
        return lines.joined(separator: "\n")
    }

    static func offset(_ seconds: Int) -> String {
        let sign = seconds < 0 ? "-" : "+"
        let a = abs(seconds)
        return String(format: "%@%02d:%02d", sign, a / 3600, (a % 3600) / 60)
    }
}
