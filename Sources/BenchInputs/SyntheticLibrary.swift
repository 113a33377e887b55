import BenchKit
import Foundation
import Moments
import SeededRandom

/// A made-up photo library at scale, metadata only: authors living in cities around the world
/// (one on the 180° meridian), who go on outings (walks of photos close in place and time, now
/// and then with a pause of hours), and declared moments (events; a few large festivals) that
/// many authors attend. Reproducible from its seed.
public struct SyntheticLibrary {
    /// One picture's facts, as the worker would have read them.
    public struct Picture {
        public var key: String
        public var author: Int
        /// The trusted capture time (seconds since 1970), nil for an untrusted time.
        public var time: Double?
        public var location: Coordinate?
        public var coverScore: Double
        public var requestedMomentId: Int64?

        /// Whether the moment rules can place it in space and time.
        public var isLocated: Bool { time != nil && location != nil }
    }

    /// A moment the backend declares, with its place.
    public struct Event {
        public var id: Int64
        public var name: String
        public var center: Coordinate
        public var radiusMetres: Double
        public var start: Double
        public var end: Double
        public var visibility: Visibility
        public var creator: Int
        public var invitees: [Int]
        /// Declared halfway through the ingest rather than before it: its earlier pictures are pulled in.
        public var declaredLate: Bool

        public var moment: Moment {
            Moment(id: id, kind: .declared, placeId: id, start: Date(timeIntervalSince1970: start), end: Date(timeIntervalSince1970: end),
                   creator: SyntheticLibrary.user(creator), visibility: visibility,
                   invitees: Set(invitees.map(SyntheticLibrary.user)), title: name)
        }
    }

    /// The pictures in arrival order (shuffled).
    public let pictures: [Picture]
    public let events: [Event]
    public let authors: Int
    public let festivals: Int

    public static func user(_ author: Int) -> String { "user-\(author)" }

    /// Cities (name, latitude, longitude); Taveuni straddles the 180° meridian.
    public static let cities: [(String, Double, Double)] = [
        ("Paris", 48.8566, 2.3522), ("Berlin", 52.52, 13.405), ("New York", 40.7128, -74.006),
        ("Tokyo", 35.6762, 139.6503), ("Sydney", -33.8688, 151.2093), ("São Paulo", -23.5505, -46.6333),
        ("Nairobi", -1.2921, 36.8219), ("Reykjavík", 64.1466, -21.9426), ("Suva", -18.1248, 178.4501),
        ("Taveuni", -16.85, 179.99), ("Anchorage", 61.2181, -149.9003), ("Singapore", 1.3521, 103.8198),
    ]

    /// Three years of photos.
    static let span = 1_609_459_200.0...1_704_067_200.0

    public static func make(pictures count: Int, authors: Int, seed: UInt64) -> SyntheticLibrary {
        var random = SplitMix64(seed: seed)
        var pictures: [Picture] = []
        pictures.reserveCapacity(count)
        let home = (0..<authors).map { _ in Int(random.next() % UInt64(cities.count)) }
        // Some authors post much more than others.
        let weights = (0..<authors).map { 1 / pow(Double($0 + 1), 0.8) }
        let totalWeight = weights.reduce(0, +)
        func someAuthor() -> Int {
            var pick = random.unit() * totalWeight
            for (author, weight) in weights.enumerated() {
                pick -= weight
                if pick <= 0 { return author }
            }
            return authors - 1
        }
        func photo(author: Int, time: Double, at location: Coordinate, requesting: Int64? = nil) -> Picture {
            Picture(key: random.hash(), author: author, time: time, location: location,
                    coverScore: random.uniform(0.1...0.95), requestedMomentId: requesting)
        }

        // Events: three festivals of 3 % of the library each, then smaller ones, 25 % in all.
        let festivals = count >= 1000 ? 3 : 0
        let eventBudget = count / 4
        let festivalSize = count * 3 / 100
        let smallCount = max(1, (eventBudget - festivals * festivalSize) / 115)
        var events: [Event] = []
        for index in 0..<(festivals + smallCount) {
            let festival = index < festivals
            let city = cities[Int(random.next() % UInt64(cities.count))]
            let center = offset(Coordinate(latitude: city.1, longitude: city.2), metres: random.uniform(0...10_000),
                                bearing: random.uniform(0...(2 * .pi)))
            let start = random.uniform(span)
            let duration = festival ? 3 * 86_400 : random.uniform(2...8) * 3600
            let size = festival ? festivalSize : max(5, Int(random.exponential(mean: 115)))
            let attendees = (0..<max(2, size / 25)).map { _ in someAuthor() }
            let isPrivate = !festival && random.unit() < 0.3
            var event = Event(
                id: Int64(index + 1), name: festival ? "Festival \(index + 1)" : "Event \(index + 1)", center: center,
                radiusMetres: festival ? random.uniform(500...800) : random.uniform(100...400), start: start, end: start + duration,
                visibility: isPrivate ? .private : .public, creator: attendees[0], invitees: [],
                declaredLate: !festival && index % 10 == 5)
            if isPrivate { event.invitees = Array(Set(attendees.prefix(1 + attendees.count / 2))).sorted() }
            events.append(event)
            for shot in 0..<size {
                let author = attendees[shot % attendees.count]
                // Now and then a photo from just outside the window or the circle.
                let time = random.uniform((event.start - 600)...(event.end + 600))
                let spot = offset(center, metres: event.radiusMetres * sqrt(random.unit()) * 1.05, bearing: random.uniform(0...(2 * .pi)))
                let asks = isPrivate && event.invitees.contains(author) && random.unit() < 0.2
                pictures.append(photo(author: author, time: time, at: spot, requesting: asks ? event.id : nil))
            }
        }

        // Outings: walks by one author, mostly around home, sometimes away.
        while pictures.count < count {
            let author = someAuthor()
            let city = cities[random.unit() < 0.9 ? home[author] : Int(random.next() % UInt64(cities.count))]
            var here = offset(Coordinate(latitude: city.1, longitude: city.2), metres: random.exponential(mean: 8_000),
                              bearing: random.uniform(0...(2 * .pi)))
            var time = random.uniform(span)
            let size = min(count - pictures.count, 3 + Int(random.exponential(mean: 35)))
            for _ in 0..<size {
                pictures.append(photo(author: author, time: time, at: here))
                // A pause of hours now and then splits the walk into two moments.
                time += random.unit() < 0.03 ? random.uniform(9_000...20_000) : random.exponential(mean: 240)
                here = offset(here, metres: random.uniform(0...60), bearing: random.uniform(0...(2 * .pi)))
            }
        }

        // 3 % without a location, 2 % without a trusted time: the moment rules leave them out.
        for index in pictures.indices {
            let roll = random.unit()
            if roll < 0.03 { pictures[index].location = nil } else if roll < 0.05 { pictures[index].time = nil }
        }
        pictures.shuffle(using: &random)
        return SyntheticLibrary(pictures: pictures, events: events, authors: authors, festivals: festivals)
    }

    /// The point `metres` away from `origin` in direction `bearing` (radians from north), on a
    /// locally flat Earth, with the longitude brought back into −180…180.
    static func offset(_ origin: Coordinate, metres: Double, bearing: Double) -> Coordinate {
        let latitude = origin.latitude + metres * cos(bearing) / 111_320
        var longitude = origin.longitude + metres * sin(bearing) / (111_320 * cos(origin.latitude * .pi / 180))
        if longitude >= 180 { longitude -= 360 }
        if longitude < -180 { longitude += 360 }
        return Coordinate(latitude: latitude, longitude: longitude)
    }
}
