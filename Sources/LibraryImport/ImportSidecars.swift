import Foundation
import Ingest
import MetadataReading
import Storage

/// The sidecars of one photo of an imported library, read and merged into the one Darkroom
/// `Sidecar` the processor takes, with notes saying which file gave which value.
///
/// A Darkroom sidecar (`author_id`, `taken_at`, ...) is the uploader's word and comes first;
/// Google Takeout's JSON and an XMP sidecar then fill what is still missing, in that order. EXIF
/// in the photo itself still wins over all of them: the sidecar's values are
/// offered to the metadata reader, which records any disagreement as a conflict.
struct ImportSidecars: Sendable {
    /// The merged sidecar, nil when there is nothing to say.
    var sidecar: Sidecar?
    /// The sidecar as kept in the job row: the Darkroom file's own text, else the merged value.
    var json: String?
    /// Where values came from and what was ignored, for the picture's warnings.
    var notes: [String] = []
    /// The files read, as `kind:name` (`takeout:IMG_1.jpg.json`), for the journal.
    var used: [String] = []

    /// Reads the sidecars `match` found for `photo` in `directory`. Throws a permanent failure
    /// only for a Darkroom sidecar that is malformed, as the spool does: the uploader's word must
    /// not be dropped silently. Takeout and XMP files that cannot be used are noted and skipped.
    static func load(directory: String, photo: String, match: ImportSidecarMatcher.Match?, author: String?,
                     zone: TimeZone) throws(ProcessingFailure) -> ImportSidecars {
        var result = ImportSidecars()
        var darkroom: Sidecar?
        var darkroomText: String?
        var takeout: (TakeoutSidecar, String)?
        var xmp: (XMPSidecar, String)?

        if let name = match?.json, let bytes = result.read(directory + "/" + name, name: name) {
            let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
            if let object, TakeoutSidecar.isTakeout(object) {
                let parsed = TakeoutSidecar(object: object)
                if let rule = match?.jsonRule, [.truncated, .withoutExtension].contains(rule), let title = parsed.title,
                   !titleAgrees(photo: photo, title: title) {
                    result.notes.append("Google Takeout sidecar \(name) is for \"\(title)\", not this photo; ignored")
                } else {
                    takeout = (parsed, name)
                    result.used.append("takeout:" + name)
                }
            } else {
                do {
                    darkroom = try Sidecar(jsonBytes: bytes)
                } catch {
                    throw ProcessingFailure.permanent("sidecar \(directory)/\(name): \(error); fix or remove it, then import again with --retry-failed", .badInput)
                }
                darkroomText = String(decoding: bytes, as: UTF8.self)
                result.used.append("darkroom:" + name)
            }
        }
        if let name = match?.xmp, let bytes = result.read(directory + "/" + name, name: name) {
            xmp = (XMPSidecar(bytes: bytes), name)
            result.used.append("xmp:" + name)
        }

        var merged = darkroom ?? Sidecar()
        if let (takeout, name) = takeout {
            var gave: [String] = []
            if merged.takenAt == nil, let instant = takeout.takenAt {
                merged.takenAt = TakeoutSidecar.isoText(instant, in: zone)
                gave.append("taken_at from photoTakenTime (an instant; local time in \(zone.identifier))")
            }
            if merged.latitude == nil, let latitude = takeout.latitude, let longitude = takeout.longitude {
                merged.latitude = latitude
                merged.longitude = longitude
                merged.altitude = takeout.altitude
                gave.append("location from \(takeout.locationKey ?? "geoData")")
            }
            if merged.title == nil, let description = takeout.description {
                merged.title = description
                gave.append("title from description")
            }
            result.notes.append(note("Google Takeout", name, gave))
        }
        if let (xmp, name) = xmp {
            var gave: [String] = []
            if merged.takenAt == nil, let takenAt = xmp.takenAt {
                merged.takenAt = takenAt
                gave.append("taken_at from \(xmp.timeProperty ?? "exif:DateTimeOriginal")")
            }
            if merged.latitude == nil, let latitude = xmp.latitude, let longitude = xmp.longitude {
                merged.latitude = latitude
                merged.longitude = longitude
                merged.altitude = xmp.altitude
                gave.append("location from exif:GPSLatitude/GPSLongitude")
            }
            result.notes.append(note("XMP", name, gave))
            result.notes += xmp.problems.map { "XMP sidecar \(name): \($0); ignored" }
        }
        if merged.authorId == nil, let author { merged.authorId = author }

        guard merged != Sidecar() else { return result }
        result.sidecar = merged
        if takeout == nil, xmp == nil, merged.authorId == darkroom?.authorId, let darkroomText {
            result.json = darkroomText
        } else {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            result.json = (try? encoder.encode(merged)).map { String(decoding: $0, as: UTF8.self) }
        }
        return result
    }

    /// Reads a sidecar file, or notes why it cannot be used and returns nil.
    private mutating func read(_ path: String, name: String) -> [UInt8]? {
        guard let size = FileSystem.status(path)?.size else {
            notes.append("sidecar \(name) cannot be read; ignored")
            return nil
        }
        guard size <= Int64(Sidecar.maxBytes) else {
            notes.append("sidecar \(name) is larger than \(Sidecar.maxBytes) bytes; ignored")
            return nil
        }
        do {
            return try FileSystem.read(path)
        } catch {
            notes.append("sidecar \(name): \(error); ignored")
            return nil
        }
    }

    private static func note(_ kind: String, _ name: String, _ gave: [String]) -> String {
        gave.isEmpty ? "\(kind) sidecar \(name): nothing used (no time or place the others had not given)"
            : "\(kind) sidecar \(name): " + gave.joined(separator: ", ") + " (EXIF in the file, where present, wins)"
    }

    /// Whether Takeout's `title` (the original file name) may be this photo's, for names that
    /// matched loosely: the same name without its extension, or one a cut form of the other.
    static func titleAgrees(photo: String, title: String) -> Bool {
        func stem(_ name: String) -> String { (name.lowercased() as NSString).deletingPathExtension }
        let names = [photo, ImportSidecarMatcher.uneditedName(photo)].compactMap { $0 }.map(stem)
        let titleStem = stem(title)
        // A name Takeout cut still holds most of its limit's length; short common prefixes
        // (IMG_1 and IMG_12) prove nothing.
        let cutLength = ImportSidecarMatcher.takeoutNameLimit / 2
        return names.contains { name in
            name == titleStem
                || (min(name.count, titleStem.count) >= cutLength && (name.hasPrefix(titleStem) || titleStem.hasPrefix(name)))
        }
    }
}
