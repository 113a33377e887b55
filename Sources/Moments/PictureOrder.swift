import Foundation

/// The stable order of a moment's pictures: capture time, then content key; pictures
/// without a time come last. It depends only on the pictures, never on arrival order.
public enum PictureOrder {
    /// Whether `a` comes before `b`.
    public static func precedes(_ a: PhotoFacts, _ b: PhotoFacts) -> Bool {
        let order = compare(time: a.capturedAt, key: a.key, with: b.capturedAt, key: b.key)
        return order != .orderedSame ? order == .orderedAscending : a.id < b.id
    }

    /// The pictures in the stable order.
    public static func sorted(_ pictures: some Sequence<PhotoFacts>) -> [PhotoFacts] {
        pictures.sorted(by: precedes)
    }

    /// One page of `pictures` (in any order): the first `limit` pictures after `cursor` (from
    /// the start when nil) in the stable order, and the cursor of the next page.
    public static func page(_ pictures: some Sequence<PhotoFacts>, after cursor: PictureCursor?, limit: Int) -> PicturePage {
        let remaining = sorted(pictures).filter { picture in
            guard let cursor else { return true }
            return compare(time: picture.capturedAt, key: picture.key, with: cursor.capturedAt, key: cursor.key)
                == .orderedDescending
        }
        let page = Array(remaining.prefix(max(0, limit)))
        let next = remaining.count > page.count ? page.last.map(PictureCursor.init(after:)) : nil
        return PicturePage(pictures: page, next: next)
    }

    /// Orders (time, key) pairs: earlier time first, no time last, then key.
    static func compare(time t1: Date?, key k1: String, with t2: Date?, key k2: String) -> ComparisonResult {
        switch (t1, t2) {
        case let (a?, b?) where a != b: return a < b ? .orderedAscending : .orderedDescending
        case (nil, _?): return .orderedDescending
        case (_?, nil): return .orderedAscending
        default: return k1 == k2 ? .orderedSame : (k1 < k2 ? .orderedAscending : .orderedDescending)
        }
    }
}

/// A page of pictures in the stable order.
public struct PicturePage: Sendable, Hashable {
    /// The pictures of this page.
    public var pictures: [PhotoFacts]
    /// Where the next page starts; nil on the last page.
    public var next: PictureCursor?
}

/// A position in the stable picture order: "after this picture". Survives insertions, unlike an
/// offset. As a string (`description`) it is an opaque token for an API's `next` link.
public struct PictureCursor: Sendable, Hashable, Codable, LosslessStringConvertible {
    /// Capture time of the last picture seen (nil: it had none).
    public var capturedAt: Date?
    /// Content key of the last picture seen.
    public var key: String

    /// The cursor just after `picture`.
    public init(after picture: PhotoFacts) {
        capturedAt = picture.capturedAt
        key = picture.key
    }

    /// Parses a token made by `description`; nil for anything else.
    public init?(_ description: String) {
        guard let colon = description.firstIndex(of: ":") else { return nil }
        let time = description[..<colon]
        key = String(description[description.index(after: colon)...])
        if time == "-" {
            capturedAt = nil
        } else {
            guard let bits = UInt64(time, radix: 16) else { return nil }
            capturedAt = Date(timeIntervalSince1970: Double(bitPattern: bits))
        }
    }

    /// The token: the exact time bits in hex (or "-"), a colon, the key.
    public var description: String {
        let time = capturedAt.map { String($0.timeIntervalSince1970.bitPattern, radix: 16) } ?? "-"
        return "\(time):\(key)"
    }
}

/// Place and moment queries the app's API needs, as pure filters over candidates that
/// an index (the catalog's R*Tree, or `InMemoryMomentStore`) has already narrowed down.
public enum PlaceQuery {
    /// The places whose centre lies within `radiusMetres` of `center` (the seeds'
    /// `places/around_location?lat=…&long=…&rad=…`), nearest first, then by id.
    public static func around(_ center: Coordinate, radiusMetres: Double, among places: some Sequence<Place>) -> [Place] {
        let measured: [(place: Place, distance: Double)] = places.compactMap { place in
            let distance = Geo.distanceMetres(center, place.center)
            return distance <= radiusMetres ? (place, distance) : nil
        }
        return measured.sorted { a, b in
            a.distance != b.distance ? a.distance < b.distance : a.place.id < b.place.id
        }.map { $0.place }
    }

    /// The moments held at `placeId`, latest start first, then by id.
    public static func moments(at placeId: Int64, among moments: some Sequence<Moment>) -> [Moment] {
        moments.filter { $0.placeId == placeId }
            .sorted { $0.start != $1.start ? $0.start > $1.start : $0.id < $1.id }
    }
}
