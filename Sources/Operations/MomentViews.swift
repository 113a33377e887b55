import Catalog
import Foundation
import Moments

/// A place as the command line and exports show it.
public struct PlaceView: Encodable, Sendable {
    public var id: Int64
    public var name: String?
    public var lat: Double
    public var long: Double
    public var radiusMetres: Double

    public init(_ place: Place) {
        id = place.id
        name = place.name
        lat = place.center.latitude
        long = place.center.longitude
        radiusMetres = place.radiusMetres
    }
}

/// A moment as the command line and exports show it.
public struct MomentView: Encodable, Sendable {
    public var id: Int64
    public var kind: String
    public var title: String?
    public var place: PlaceView?
    public var start: Date
    public var end: Date
    public var creator: String?
    public var visibility: String
    public var invitees: [String]
    public var pictures: Int
    public var coverPictureId: Int64?
    public var coverSource: String
    public var coverReason: String?

    public init(_ moment: Moment, place: Place?, pictures: Int) {
        id = moment.id
        kind = moment.kind.rawValue
        title = moment.title
        self.place = place.map(PlaceView.init)
        start = moment.start
        end = moment.end
        creator = moment.creator
        visibility = moment.visibility.rawValue
        invitees = moment.invitees.sorted()
        self.pictures = pictures
        coverPictureId = moment.coverPictureId
        coverSource = moment.coverSource.rawValue
        coverReason = moment.coverReason
    }
}

/// A picture in a moment listing, with its variants' library paths.
public struct PictureView: Encodable, Sendable {
    public var id: Int64
    public var sha256: String
    public var sourceName: String
    public var author: String?
    public var title: String?
    public var momentId: Int64?
    public var capturedAt: Date?
    public var lat: Double?
    public var long: Double?
    /// Where `capturedAt` came from (`exif_original`, `sidecar`, ...; see `inspect`).
    public var capturedAtSource: String?
    /// Where `lat`/`long` came from (`exif`, `sidecar`, `none`).
    public var locationSource: String
    /// The camera's own values where the backend's explicit ones replaced them.
    public var camera: CameraValues?
    public var width: Int
    public var height: Int
    /// The placeholder to paint before the thumb arrives (a ThumbHash, base64); nil for a
    /// picture added before placeholders were made.
    public var thumbHash: String?
    public var variants: [String: String]

    public init(_ picture: PictureRecord, variants: [VariantRecord]) {
        thumbHash = picture.thumbHash
        id = picture.id ?? 0
        sha256 = picture.sha256
        sourceName = picture.sourceName
        author = picture.authorId
        title = picture.title
        momentId = picture.momentId
        capturedAt = picture.capturedAt.map { Date(timeIntervalSince1970: $0) }
        lat = picture.latitude
        long = picture.longitude
        capturedAtSource = picture.timeSource
        locationSource = picture.locationSource
        camera = CameraValues(picture)
        width = picture.displayWidth
        height = picture.displayHeight
        self.variants = Dictionary(uniqueKeysWithValues: variants.map { ($0.name, $0.path) })
    }
}

/// What the camera recorded where the backend's explicit `taken_at` or location disagreed and
/// won (the user's own correction); nil when nothing was replaced.
public struct CameraValues: Encodable, Sendable, Equatable {
    public var capturedAt: Date?
    public var lat: Double?
    public var long: Double?

    init?(_ picture: PictureRecord) {
        capturedAt = picture.cameraCapturedAt.map { Date(timeIntervalSince1970: $0) }
        lat = picture.cameraLatitude
        long = picture.cameraLongitude
        if capturedAt == nil && lat == nil { return nil }
    }
}

/// A moment and one page of its pictures in the stable order; `next` continues it.
public struct MomentPage: Encodable, Sendable {
    /// The moment, with its place and picture count.
    public var moment: MomentView
    /// This page's pictures, in the stable order.
    public var pictures: [PictureView]
    /// The cursor of the next page; nil on the last one.
    public var next: String?
}

/// Reads of moments and places for the command line and the exports.
public struct MomentCatalog: Sendable {
    public let catalog: any CatalogStore

    public init(catalog: any CatalogStore) {
        self.catalog = catalog
    }

    /// Every moment (or one place's) with its place and picture count.
    public func moments(atPlace placeId: Int64? = nil) throws -> [MomentView] {
        let places = Dictionary(uniqueKeysWithValues: try catalog.places().map { ($0.id, $0) })
        let counts = try catalog.pictureCounts()
        return try catalog.moments(atPlace: placeId).map { MomentView($0, place: places[$0.placeId], pictures: counts[$0.id] ?? 0) }
    }

    /// One moment with its place and count, or nil.
    public func moment(id: Int64) throws -> MomentView? {
        guard let moment = try catalog.moment(id: id) else { return nil }
        return MomentView(moment, place: try catalog.place(id: moment.placeId), pictures: try catalog.pictureCount(inMoment: id))
    }

    /// One page of a moment's pictures with their variants.
    public func pictures(inMoment id: Int64, after cursor: PictureCursor?, limit: Int) throws -> (pictures: [PictureView], next: PictureCursor?) {
        let page = try catalog.pictures(inMoment: id, after: cursor, limit: limit)
        let views = try page.pictures.map { picture in
            PictureView(picture, variants: try catalog.variants(ofPicture: picture.id ?? 0))
        }
        return (views, page.next)
    }

    /// A moment with one page of its pictures (`moments show`, the HTTP API); nil when there is
    /// no such moment.
    public func page(ofMoment id: Int64, after cursor: PictureCursor?, limit: Int) throws -> MomentPage? {
        guard let moment = try moment(id: id) else { return nil }
        let page = try pictures(inMoment: id, after: cursor, limit: limit)
        return MomentPage(moment: moment, pictures: page.pictures, next: page.next?.description)
    }

    /// One picture with its variants, or nil.
    public func picture(id: Int64) throws -> PictureView? {
        guard let picture = try catalog.picture(id: id) else { return nil }
        return PictureView(picture, variants: try catalog.variants(ofPicture: id))
    }

    /// Pictures per page when none is asked for.
    public static let defaultPageSize = 50
    /// The most pictures one page may hold.
    public static let maxPageSize = 1000

    /// Checks a page request (fields `limit` and `after`) and parses its cursor.
    public static func pageRequest(limit: Int, after: String?) throws(FieldError) -> PictureCursor? {
        guard limit > 0, limit <= maxPageSize else { throw FieldError("limit", "must be from 1 to \(maxPageSize) (got \(limit))") }
        guard let after else { return nil }
        guard let cursor = PictureCursor(after) else {
            throw FieldError("after", "must be the cursor printed with the previous page (got \(after))")
        }
        return cursor
    }
}
