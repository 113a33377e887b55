import Foundation
import Testing
@testable import Moments
import SeededRandom

/// a property: random photo sets, ingested in random orders and random batches (each
/// batch run by a fresh engine, as separate worker runs would be), always give the same
/// moments, candidates and covers, equal to a rebuild from scratch.
@Suite("Order independence")
struct OrderIndependenceTests {
    /// Something that happens to the catalog: a photo arrives or the backend declares a moment.
    enum Operation {
        case photo(PhotoFacts)
        case declare(PlacedMoment)
    }

    struct Scenario {
        var rules: MomentRules
        var photos: [PhotoFacts]
        var declared: [PlacedMoment]
        var operations: [Operation] { photos.map(Operation.photo) + declared.map(Operation.declare) }
    }

    /// Clusters of photos by several authors (random walks in space and time, so chains form),
    /// clusters placed to be bridged by a late photo, photos lacking GPS, time or author, and
    /// public and private declared moments over parts of the clusters.
    static func scenario(seed: UInt64) -> Scenario {
        var rng = SplitMix64(seed: seed)
        let rules = MomentRules(graceBefore: 600, graceAfter: 600, automaticRadiusMetres: 150, automaticTimeGap: 7200,
                                coverPolicy: seed % 3 == 0 ? .first : .best, coverMargin: 0.1)
        let sites = [Fixture.origin, Coordinate(latitude: 0.0003, longitude: 179.9995),
                     Coordinate(latitude: 89.9992, longitude: 30)]
        let authors: [String?] = ["ana", "ben", "cy", nil]
        var photos: [PhotoFacts] = []
        var nextId: Int64 = 1
        func add(author: String?, time: Date?, location: Coordinate?, requested: Int64? = nil) {
            // Keys are random, so key order never follows id (arrival) order.
            let key = String(format: "%016llx", rng.next())
            let score = Double(Int.random(in: 0...10, using: &rng)) / 10  // coarse: ties happen
            photos.append(PhotoFacts(id: nextId, key: key, author: author, capturedAt: time, location: location,
                                     requestedMomentId: requested, coverScore: score))
            nextId += 1
        }
        for _ in 0..<Int.random(in: 4...7, using: &rng) {
            let site = sites.randomElement(using: &rng) ?? Fixture.origin
            let author = authors.randomElement(using: &rng) ?? nil
            var point = Geo.destination(from: site, bearingDegrees: .random(in: 0..<360, using: &rng),
                                        distanceMetres: .random(in: 0...600, using: &rng))
            var time = Fixture.time(.random(in: 0...(3 * 24 * 60), using: &rng))
            let bridged = Bool.random(using: &rng)
            for _ in 0..<Int.random(in: 2...9, using: &rng) {
                add(author: author, time: time, location: point)
                point = Geo.destination(from: point, bearingDegrees: .random(in: 0..<360, using: &rng),
                                        distanceMetres: .random(in: 0...140, using: &rng))
                time = time.addingTimeInterval(.random(in: -1800...5400, using: &rng))
            }
            if bridged {
                // A second cluster just out of reach, and the photo that bridges the two.
                let far = Geo.destination(from: point, bearingDegrees: 45, distanceMetres: 260)
                add(author: author, time: time.addingTimeInterval(600), location: far)
                add(author: author, time: time.addingTimeInterval(900), location: Geo.destination(from: far, bearingDegrees: 45, distanceMetres: 100))
                add(author: author, time: time.addingTimeInterval(300), location: Geo.destination(from: point, bearingDegrees: 45, distanceMetres: 130))
            }
        }
        var declared: [PlacedMoment] = []
        let located = photos.filter { $0.timeAndPlace != nil }
        for id in Int64(1)...Int64(Int.random(in: 2...4, using: &rng)) {
            guard let anchor = located.randomElement(using: &rng), let tp = anchor.timeAndPlace else { continue }
            let isPrivate = Bool.random(using: &rng)
            let creator = authors.compactMap { $0 }.randomElement(using: &rng)
            let invitees = Set(authors.compactMap { $0 }.filter { _ in Bool.random(using: &rng) })
            let place = Place(id: 9000 + id, name: "declared \(id)",
                              center: Geo.destination(from: tp.location, bearingDegrees: .random(in: 0..<360, using: &rng),
                                                      distanceMetres: .random(in: 0...80, using: &rng)),
                              radiusMetres: .random(in: 40...220, using: &rng))
            let start = tp.time.addingTimeInterval(-.random(in: 0...3600, using: &rng))
            let moment = Moment(id: 100 + id, kind: .declared, placeId: place.id, start: start,
                                end: start.addingTimeInterval(.random(in: 1800...10800, using: &rng)),
                                creator: creator, visibility: isPrivate ? .private : .public, invitees: invitees)
            declared.append(PlacedMoment(moment: moment, place: place))
        }
        // Photos without GPS, without time, and sidecar requests (some for moments that exist).
        for _ in 0..<Int.random(in: 2...6, using: &rng) {
            let base = located.randomElement(using: &rng)
            let requested: Int64? = Bool.random(using: &rng) ? declared.randomElement(using: &rng)?.moment.id : nil
            switch Int.random(in: 0...2, using: &rng) {
            case 0: add(author: base?.author, time: base?.capturedAt, location: nil, requested: requested)
            case 1: add(author: base?.author, time: nil, location: base?.location, requested: requested)
            default: add(author: base?.author, time: base?.capturedAt, location: base?.location, requested: requested)
            }
        }
        return Scenario(rules: rules, photos: photos, declared: declared)
    }

    /// Runs the operations in batches, each by a fresh engine over the same store.
    static func replay(_ operations: [Operation], rules: MomentRules, batches: [Int],
                       into store: inout InMemoryMomentStore) throws {
        var rest = operations[...]
        for size in batches + [rest.count] {
            let engine = MomentEngine(rules: rules)
            for operation in rest.prefix(size) {
                switch operation {
                case .photo(let photo): _ = try engine.ingest(photo, into: &store)
                case .declare(let placed): _ = try engine.declare(placed.moment, at: placed.place, into: &store)
                }
            }
            rest = rest.dropFirst(size)
        }
    }

    /// The state a rebuild computes from scratch for these photos and declared moments.
    static func fromScratch(photos: [PhotoFacts], declared: [PlacedMoment], rules: MomentRules) throws -> InMemoryMomentStore {
        var store = InMemoryMomentStore(indexedFor: rules)
        for placed in declared {
            store.savePlace(placed.place)
            store.saveMoment(placed.moment)
        }
        for photo in photos { store.savePicture(photo) }
        _ = try MomentEngine(rules: rules).rebuild(&store)
        return store
    }

    static func randomBatches(total: Int, using rng: inout SplitMix64) -> [Int] {
        var sizes: [Int] = []
        var left = total
        while left > 0 {
            let size = Int.random(in: 1...max(1, left), using: &rng)
            sizes.append(size)
            left -= size
        }
        return sizes
    }

    @Test("Any order and batching of the same photos and declared moments gives the same moments and covers",
          arguments: 0..<24)
    func orderIndependence(seed: Int) throws {
        let scenario = Self.scenario(seed: UInt64(seed))
        let expected = try Self.fromScratch(photos: scenario.photos, declared: scenario.declared, rules: scenario.rules)
        let reference = Snapshot(expected)
        #expect(!reference.automatic.isEmpty)
        var rng = SplitMix64(seed: UInt64(seed) &+ 1_000)
        for run in 0..<8 {
            var operations = scenario.operations
            operations.shuffle(using: &rng)
            let batches = run == 0 ? [] : Self.randomBatches(total: operations.count, using: &rng)
            var store = InMemoryMomentStore(indexedFor: scenario.rules)
            try Self.replay(operations, rules: scenario.rules, batches: batches, into: &store)
            let snapshot = Snapshot(store)
            #expect(snapshot == reference, "seed \(seed), run \(run): \(snapshot)\nexpected \(reference)")
            // A rebuild of a consistent store changes nothing.
            var rebuilt = store
            let events = try MomentEngine(rules: scenario.rules).rebuild(&rebuilt)
            #expect(events.isEmpty, "seed \(seed), run \(run): rebuild changed \(events)")
            #expect(Snapshot(rebuilt) == reference)
        }
    }

    @Test("Removing photos (which may split moments) gives what the remaining photos give from scratch",
          arguments: 0..<12)
    func removals(seed: Int) throws {
        let scenario = Self.scenario(seed: UInt64(seed) &+ 500)
        var rng = SplitMix64(seed: UInt64(seed) &+ 2_000)
        var store = InMemoryMomentStore(indexedFor: scenario.rules)
        try Self.replay(scenario.operations.shuffled(using: &rng), rules: scenario.rules, batches: [], into: &store)
        let removed = Set(scenario.photos.map(\.id).filter { _ in Int.random(in: 0..<3, using: &rng) == 0 })
        let engine = MomentEngine(rules: scenario.rules)
        for id in removed.shuffled(using: &rng) { _ = try engine.remove(pictureId: id, from: &store) }
        let expected = try Self.fromScratch(photos: scenario.photos.filter { !removed.contains($0.id) },
                                            declared: scenario.declared, rules: scenario.rules)
        #expect(Snapshot(store) == Snapshot(expected), "seed \(seed)")
    }

    @Test("Withdrawing a declared moment gives what the photos give without it", arguments: 0..<8)
    func withdrawals(seed: Int) throws {
        let scenario = Self.scenario(seed: UInt64(seed) &+ 900)
        var rng = SplitMix64(seed: UInt64(seed) &+ 3_000)
        var store = InMemoryMomentStore(indexedFor: scenario.rules)
        try Self.replay(scenario.operations.shuffled(using: &rng), rules: scenario.rules, batches: [], into: &store)
        let gone = try #require(scenario.declared.randomElement(using: &rng))
        _ = try MomentEngine(rules: scenario.rules).withdraw(momentId: gone.moment.id, from: &store)
        let expected = try Self.fromScratch(photos: scenario.photos,
                                            declared: scenario.declared.filter { $0.moment.id != gone.moment.id },
                                            rules: scenario.rules)
        #expect(Snapshot(store) == Snapshot(expected), "seed \(seed)")
    }

    @Test("A late photo that bridges two clusters merges them, in whichever position it arrives")
    func lateBridge() throws {
        let left = (0..<4).map { Fixture.photo(Int64($0 + 1), minutes: Double($0), at: Fixture.point(Double($0) * 50)) }
        let right = (0..<4).map { Fixture.photo(Int64($0 + 10), minutes: Double($0), at: Fixture.point(400 + Double($0) * 50)) }
        let bridge = Fixture.photo(99, minutes: 2, at: Fixture.point(275))
        let rules = MomentRules(graceBefore: 0, graceAfter: 0)
        var rng = SplitMix64(seed: 42)
        for _ in 0..<10 {
            var store = InMemoryMomentStore()
            let order = (left + right + [bridge]).shuffled(using: &rng)
            _ = try MomentEngine(rules: rules).ingest(order, into: &store)
            #expect(Snapshot(store).automatic == [Set((left + right + [bridge]).map(\.key))])
        }
    }
}
