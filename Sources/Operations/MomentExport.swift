import Catalog
import Foundation
import Imaging
import Moments
import Storage

/// Writes the catalog's moments as files a person or a map tool can open without a server:
/// a static HTML page with covers and thumbnails, or GeoJSON points.
public struct MomentExport: Sendable {
    public let moments: MomentCatalog
    public let library: String
    public let coverVariant: String
    public let thumbVariant: String

    public init(moments: MomentCatalog, library: String, coverVariant: String, thumbVariant: String) {
        self.moments = moments
        self.library = library
        self.coverVariant = coverVariant
        self.thumbVariant = thumbVariant
    }

    /// Writes `DIR/index.html` and copies the images it shows into `DIR/media/`. Returns the
    /// number of moments written.
    @discardableResult
    public func html(into directory: String) throws -> Int {
        let all = try moments.moments()
        var sections: [String] = []
        for moment in all {
            var pictures: [PictureView] = []
            var cursor: PictureCursor?
            repeat {
                let page = try moments.pictures(inMoment: moment.id, after: cursor, limit: 500)
                pictures += page.pictures
                cursor = page.next
            } while cursor != nil
            let cover = pictures.first { $0.id == moment.coverPictureId } ?? pictures.first
            let coverTag = try cover.flatMap { try copy($0.variants[coverVariant], into: directory) }
                .map { "<img class=\"cover\" src=\"\(Self.escape($0))\"\(Self.placeholder(cover)) alt=\"cover\">" } ?? "<div class=\"cover none\">no cover</div>"
            let thumbs = try pictures.compactMap { picture -> String? in
                guard let src = try copy(picture.variants[thumbVariant], into: directory) else { return nil }
                return "<img src=\"\(Self.escape(src))\"\(Self.placeholder(picture)) title=\"\(Self.escape(picture.sourceName))\" alt=\"\(Self.escape(picture.sourceName))\">"
            }.joined()
            let place = moment.place.map { p in
                "\(Self.escape(p.name ?? "place \(p.id)")) (\(String(format: "%.5f, %.5f", p.lat, p.long)), \(Int(p.radiusMetres)) m)"
            } ?? "no place"
            sections.append("""
            <section>\(coverTag)
            <h2>\(Self.escape(moment.title ?? "Moment \(moment.id)"))</h2>
            <p class="meta">\(Self.span(moment.start, moment.end)) · \(place) · \(moment.pictures) picture\(moment.pictures == 1 ? "" : "s") · \(moment.kind), \(moment.visibility)\(moment.creator.map { " · by " + Self.escape($0) } ?? "")</p>
            <p class="meta">cover: \(Self.escape(moment.coverReason ?? moment.coverSource))</p>
            <div class="thumbs">\(thumbs)</div>
            </section>
            """)
        }
        let page = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>Darkroom moments</title>
        <style>
        body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; color: #222; }
        section { border-bottom: 1px solid #ddd; padding: 1rem 0; }
        .cover { width: 16rem; aspect-ratio: 4 / 5; object-fit: cover; float: right; margin-left: 1rem; border-radius: 4px; }
        .none { background: #eee; display: flex; align-items: center; justify-content: center; }
        .meta { color: #666; margin: 0.2rem 0; }
        .thumbs { clear: none; } .thumbs img { width: 6rem; height: 6rem; object-fit: cover; margin: 2px; border-radius: 2px; }
        section::after { content: ""; display: block; clear: both; }
        </style></head><body>
        <h1>Moments</h1><p class="meta">\(all.count) moment\(all.count == 1 ? "" : "s"), exported \(ISO8601DateFormatter().string(from: Date()))</p>
        \(sections.joined(separator: "\n"))
        </body></html>
        """
        try FileSystem.writeDurably(Array(page.utf8), to: directory + "/index.html")
        return all.count
    }

    /// Writes the moments as a GeoJSON FeatureCollection of points (each moment at its place).
    @discardableResult
    public func geoJSON(to path: String) throws -> Int {
        let all = try moments.moments()
        let formatter = ISO8601DateFormatter()
        let features: [[String: Any]] = all.compactMap { moment in
            guard let place = moment.place else { return nil }
            var properties: [String: Any] = [
                "id": moment.id, "kind": moment.kind, "start": formatter.string(from: moment.start),
                "end": formatter.string(from: moment.end), "pictures": moment.pictures, "visibility": moment.visibility,
                "radius_metres": place.radiusMetres, "place_id": place.id,
            ]
            properties["title"] = moment.title
            properties["place_name"] = place.name
            properties["creator"] = moment.creator
            properties["cover_picture_id"] = moment.coverPictureId
            return ["type": "Feature", "geometry": ["type": "Point", "coordinates": [place.long, place.lat]], "properties": properties]
        }
        let collection: [String: Any] = ["type": "FeatureCollection", "features": features]
        let data = try JSONSerialization.data(withJSONObject: collection, options: [.prettyPrinted, .sortedKeys])
        try FileSystem.writeDurably([UInt8](data), to: path)
        return features.count
    }

    /// Copies a library file into `DIR/media/` once; returns its path relative to DIR.
    private func copy(_ relative: String?, into directory: String) throws -> String? {
        guard let relative else { return nil }
        let file = (relative as NSString).lastPathComponent as NSString
        let name = "media/" + file.deletingPathExtension + "-" + ((relative as NSString).pathComponents.dropFirst().first ?? "v") + "." + file.pathExtension
        let target = directory + "/" + name
        if FileSystem.status(target) == nil {
            try FileSystem.writeDurably(try FileSystem.read(library + "/" + relative), to: target)
        }
        return name
    }

    private static func span(_ start: Date, _ end: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_GB")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "d MMM yyyy HH:mm"
        return "\(formatter.string(from: start)) – \(formatter.string(from: end)) UTC"
    }

    /// A picture's placeholder as attributes of its `<img>`: its ThumbHash (`data-thumbhash`,
    /// for a script that paints the blurred preview) and its average colour as the background
    /// shown until the image loads. Empty for a picture without one.
    static func placeholder(_ picture: PictureView?) -> String {
        guard let hash = picture?.thumbHash, let bytes = Data(base64Encoded: hash),
              let average = ThumbHash.averageRGB([UInt8](bytes)) else { return "" }
        let colour = String(format: "#%02x%02x%02x", average.red, average.green, average.blue)
        return " data-thumbhash=\"\(escape(hash))\" style=\"background:\(colour)\""
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
