import Catalog
import Foundation
import Imaging
import Moments
import Storage

/// Writes the catalog's moments as files a person or a map tool can open without a server:
/// a static HTML page to share (see `ExportPage`), or GeoJSON points.
///
/// Private moments, and pictures their sidecar marked private, are left out of both unless
/// `includePrivate`. No source file name or path, id or internal wording reaches the page.
public struct MomentExport: Sendable {
    public let moments: MomentCatalog
    public let library: String
    /// The moment's cover image (the feed variant: a 4:5 crop).
    public let coverVariant: String
    /// The grid's images.
    public let thumbVariant: String
    /// The larger view each photo opens (the preview variant).
    public let largeVariant: String
    public let includePrivate: Bool
    /// Names for places the catalog has none for, and the time zone of a place whose pictures
    /// carry no UTC offset; nil: unnamed places show no name, such times show in UTC.
    public let naming: (any AutomaticNaming)?

    public init(moments: MomentCatalog, library: String, coverVariant: String, thumbVariant: String,
                largeVariant: String? = nil, includePrivate: Bool = false,
                naming: (any AutomaticNaming)? = GazetteerNaming.standard) {
        self.moments = moments
        self.library = library
        self.coverVariant = coverVariant
        self.thumbVariant = thumbVariant
        self.largeVariant = largeVariant ?? coverVariant
        self.includePrivate = includePrivate
        self.naming = naming
    }

    /// What an HTML export wrote and what it left out.
    public struct Summary: Sendable, Equatable {
        /// Moments on the page.
        public var moments = 0
        /// Photos on the page, those in no moment included.
        public var photos = 0
        /// Photos in the "Not in a moment" section.
        public var photosInNoMoment = 0
        /// Private moments left out (0 with `includePrivate`).
        public var privateMomentsLeftOut = 0
        /// Photos marked private left out of the moments shown and of "Not in a moment".
        public var privatePhotosLeftOut = 0
    }

    /// Writes `DIR/index.html` and copies the images it shows into `DIR/media/`; files an
    /// earlier export left in `DIR/media/` that this page does not show are removed, so that
    /// the folder never holds more than the page (a private moment exported once is gone the
    /// next time). The folder is self-contained: copy it anywhere.
    @discardableResult
    public func html(into directory: String) throws -> Summary {
        var summary = Summary()
        var written: Set<String> = []
        let places = Dictionary(uniqueKeysWithValues: try moments.catalog.places().map { ($0.id, $0) })
        var shown: [ExportMoment] = []
        for moment in try moments.catalog.moments(atPlace: nil) {
            if moment.visibility == .private && !includePrivate {
                summary.privateMomentsLeftOut += 1
                continue
            }
            let pictures = try visiblePictures(inMoment: moment.id, summary: &summary)
            let place = places[moment.placeId]
            // The moment's local time: its pictures' own offset, else the zone of its place.
            let offset = pictures.lazy.compactMap(\.capturedOffset).first
                ?? place.flatMap { naming?.timeZone(at: $0.center) }.map { $0.secondsFromGMT(for: moment.start) }
            var photos: [ExportPhoto] = []
            var coverIndex = 0
            let placeName = place.flatMap { $0.name ?? naming?.placeName(at: $0.center) }
            for picture in pictures {
                let isCover = picture.id == moment.coverPictureId
                guard let photo = try photo(picture, place: placeName, fallbackOffset: offset, withCover: isCover,
                                            into: directory, written: &written) else { continue }
                if isCover { coverIndex = photos.count }
                photos.append(photo)
            }
            guard !photos.isEmpty else { continue }
            if photos[coverIndex].cover == nil { photos[coverIndex].cover = photos[coverIndex].large }
            let start = WallClock(instant: moment.start, offsetSeconds: offset)
            let end = WallClock(instant: moment.end, offsetSeconds: offset)
            let points = pictures.compactMap { p in p.latitude.flatMap { lat in p.longitude.map { Coordinate(latitude: lat, longitude: $0) } } }
            shown.append(ExportMoment(
                title: moment.title ?? placeName.map { $0.split(separator: ",").first.map(String.init) ?? $0 }.map { "\($0), \(start.shortDay)" } ?? start.day,
                when: WallClock.span(start, end), start: start, place: placeName, photos: photos, coverIndex: coverIndex,
                map: ExportMap.svg(points: points, place: place, label: placeName)))
            summary.photos += photos.count
        }
        var loose: [ExportPhoto] = []
        for picture in try visiblePictures(inMoment: nil, summary: &summary) {
            let location = picture.latitude.flatMap { lat in picture.longitude.map { Coordinate(latitude: lat, longitude: $0) } }
            let zone = location.flatMap { naming?.timeZone(at: $0) }
            let offset = zone.map { $0.secondsFromGMT(for: Date(timeIntervalSince1970: picture.capturedAt ?? 0)) }
            guard let photo = try photo(picture, place: location.flatMap { naming?.placeName(at: $0) }, fallbackOffset: offset,
                                        withCover: false, into: directory, written: &written) else { continue }
            loose.append(photo)
        }
        // Those with a time first, by time; the catalog's order otherwise.
        loose = loose.enumerated().sorted { a, b in
            switch (a.element.time, b.element.time) {
            case let (x?, y?) where x != y: x < y
            case (.some, nil): true
            case (nil, .some): false
            default: a.offset < b.offset
            }
        }.map(\.element)
        summary.moments = shown.count
        summary.photos += loose.count
        summary.photosInNoMoment = loose.count
        try FileSystem.writeDurably(Array(ExportPage.html(moments: shown, loose: loose).utf8), to: directory + "/index.html")
        try removeStale(in: directory + "/media", keeping: written)
        return summary
    }

    /// Writes the moments as a GeoJSON FeatureCollection of points (each moment at its place);
    /// private moments only with `includePrivate`.
    @discardableResult
    public func geoJSON(to path: String) throws -> Int {
        let all = try moments.moments().filter { includePrivate || $0.visibility != Visibility.private.rawValue }
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
        // A bare file name is in the current directory (writeDurably syncs the file's directory).
        try FileSystem.writeDurably([UInt8](data), to: path.contains("/") ? path : "./" + path)
        return features.count
    }

    /// Every picture of a moment (nil: in no moment) in the stable order, less those marked
    /// private unless `includePrivate`.
    private func visiblePictures(inMoment id: Int64?, summary: inout Summary) throws -> [PictureRecord] {
        var pictures: [PictureRecord] = []
        var cursor: PictureCursor?
        repeat {
            let page = try moments.catalog.pictures(inMoment: id, after: cursor, limit: 500)
            pictures += page.pictures
            cursor = page.next
        } while cursor != nil
        let visible = pictures.filter { includePrivate || $0.visibility != Visibility.private.rawValue }
        summary.privatePhotosLeftOut += pictures.count - visible.count
        return visible
    }

    /// A picture as the page shows it, its images copied; nil when it has none to show.
    private func photo(_ picture: PictureRecord, place: String?, fallbackOffset: Int?, withCover: Bool,
                       into directory: String, written: inout Set<String>) throws -> ExportPhoto? {
        let variants = Dictionary(try moments.catalog.variants(ofPicture: picture.id ?? 0).map { ($0.name, $0.path) }) { a, _ in a }
        func copied(_ name: String) throws -> String? {
            guard let source = try copy(variants[name], into: directory) else { return nil }
            written.insert((source as NSString).lastPathComponent)
            return source
        }
        guard let thumb = try copied(thumbVariant) ?? copied(largeVariant) else { return nil }
        let large = try copied(largeVariant) ?? copied(coverVariant) ?? thumb
        let time = WallClock(capturedLocal: picture.capturedLocal, capturedAt: picture.capturedAt,
                             offsetSeconds: picture.capturedOffset, fallbackOffset: fallbackOffset)
        let title = picture.title?.trimmingCharacters(in: .whitespacesAndNewlines).nilIfEmpty
        let described = "Photo" + (time.map { " taken " + $0.dayAndTime } ?? "") + (place.map { " in " + $0 } ?? "")
        return ExportPhoto(
            thumb: thumb, large: large, cover: withCover ? try copied(coverVariant) : nil,
            alt: title ?? described,
            caption: ([title] + [time?.dayAndTime, place]).compactMap { $0 }.joined(separator: " · "),
            placeholder: Self.placeholder(thumbHash: picture.thumbHash), time: time)
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

    /// Removes the files of `media` this export did not write.
    private func removeStale(in media: String, keeping written: Set<String>) throws {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: media) else { return }
        for name in names where !written.contains(name) && !name.hasPrefix(".") {
            if unlink(media + "/" + name) != 0 && errno != ENOENT { throw FileSystemError.current("remove", media + "/" + name) }
        }
    }

    /// A picture's placeholder as attributes of its `<img>`: its ThumbHash (`data-thumbhash`,
    /// for a script that paints the blurred preview) and its average colour as the background
    /// shown until the image loads. Empty for a picture without one.
    static func placeholder(thumbHash hash: String?) -> String {
        guard let hash, let bytes = Data(base64Encoded: hash),
              let average = ThumbHash.averageRGB([UInt8](bytes)) else { return "" }
        let colour = String(format: "#%02x%02x%02x", average.red, average.green, average.blue)
        return " data-thumbhash=\"\(ExportPage.escape(hash))\" style=\"background:\(colour)\""
    }
}

private extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
