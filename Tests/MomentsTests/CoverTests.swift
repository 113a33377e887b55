import Foundation
import Testing
@testable import Moments
import SeededRandom

@Suite("Covers")
struct CoverTests {
    static func world(_ policy: CoverPolicy, margin: Double = 0.1) -> World {
        World(rules: MomentRules(graceBefore: 0, graceAfter: 0, coverPolicy: policy, coverMargin: margin))
    }

    @Test("Policy first: the earliest picture by capture time, whatever arrives first")
    func first() throws {
        var world = Self.world(.first)
        try world.declare(Fixture.declared(1))
        try world.ingest(Fixture.photo(10, minutes: 30, score: 0.9))
        #expect(world.store.moment(id: 1)?.coverPictureId == 10)
        let events = try world.ingest(Fixture.photo(11, minutes: 10, score: 0.1))
        #expect(world.store.moment(id: 1)?.coverPictureId == 11)
        #expect(world.store.moment(id: 1)?.coverReason?.hasPrefix("first picture") == true)
        #expect(events.contains { if case .coverChanged(1, 11, _) = $0 { true } else { false } })
        // A same-time picture: the content key decides.
        try world.ingest(Fixture.photo(12, minutes: 10, key: "a-first-key", score: 0))
        #expect(world.store.moment(id: 1)?.coverPictureId == 12)
    }

    @Test("Policy best: a later picture takes the cover only when clearly better")
    func clearlyBetter() throws {
        var world = Self.world(.best, margin: 0.1)
        try world.declare(Fixture.declared(1))
        try world.ingest(Fixture.photo(10, minutes: 10, score: 0.70))
        let slightly = try world.ingest(Fixture.photo(11, minutes: 20, score: 0.79))
        #expect(world.store.moment(id: 1)?.coverPictureId == 10)
        #expect(!slightly.contains { if case .coverChanged = $0 { true } else { false } })
        let clearly = try world.ingest(Fixture.photo(12, minutes: 30, score: 0.95))
        // 0.95 - 0.1 = 0.85: neither 10 nor 11 is within the margin any more.
        #expect(world.store.moment(id: 1)?.coverPictureId == 12)
        #expect(clearly.contains { if case .coverChanged(1, 12, _) = $0 { true } else { false } })
        #expect(world.store.moment(id: 1)?.coverReason?.contains("0.95") == true)
        #expect(world.store.moment(id: 1)?.coverSource == .policy)
    }

    @Test("Policy best: an earlier picture about as good takes the cover")
    func earlierAndAsGood() throws {
        var world = Self.world(.best, margin: 0.1)
        try world.declare(Fixture.declared(1))
        try world.ingest(Fixture.photo(10, minutes: 30, score: 0.80))
        try world.ingest(Fixture.photo(11, minutes: 5, score: 0.75))
        #expect(world.store.moment(id: 1)?.coverPictureId == 11)
        try world.ingest(Fixture.photo(12, minutes: 1, score: 0.50))  // earlier but clearly worse
        #expect(world.store.moment(id: 1)?.coverPictureId == 11)
    }

    @Test("A cover set by the creator survives later, better uploads; removing it falls back to the policy")
    func creatorCover() throws {
        var world = Self.world(.best)
        try world.declare(Fixture.declared(1, creator: "owner"))
        try world.ingest(Fixture.photo(10, minutes: 10, score: 0.2), Fixture.photo(11, minutes: 20, score: 0.6))
        let set = try world.engine.setCover(momentId: 1, pictureId: 10, by: "owner", in: &world.store)
        #expect(set == [.coverChanged(momentId: 1, pictureId: 10, reason: "set by creator")])
        let later = try world.ingest(Fixture.photo(12, minutes: 5, score: 1.0))
        #expect(world.store.moment(id: 1)?.coverPictureId == 10)
        #expect(world.store.moment(id: 1)?.coverSource == .creator)
        #expect(!later.contains { if case .coverChanged = $0 { true } else { false } })
        // Re-declaring the moment (an edit of its title) keeps the creator's cover.
        var edited = Fixture.declared(1, creator: "owner")
        edited.moment.title = "renamed"
        try world.update(edited)
        #expect(world.store.moment(id: 1)?.coverPictureId == 10)
        let removal = try world.remove(10)
        #expect(world.store.moment(id: 1)?.coverPictureId == 12)
        #expect(world.store.moment(id: 1)?.coverSource == .policy)
        #expect(removal.contains { if case .coverChanged(1, 12, _) = $0 { true } else { false } })
    }

    @Test("Only the creator sets a cover, and only to one of the moment's pictures; clearing hands it back")
    func setCoverRules() throws {
        var world = Self.world(.first)
        try world.declare(Fixture.declared(1, creator: "owner"))
        try world.ingest(Fixture.photo(10, minutes: 10), Fixture.photo(11, minutes: 20), Fixture.photo(99, minutes: nil))
        #expect(throws: MomentError.notCreator(momentId: 1, user: "guest")) {
            try world.engine.setCover(momentId: 1, pictureId: 11, by: "guest", in: &world.store)
        }
        #expect(throws: MomentError.pictureNotInMoment(pictureId: 99, momentId: 1)) {
            try world.engine.setCover(momentId: 1, pictureId: 99, by: "owner", in: &world.store)
        }
        #expect(throws: MomentError.momentNotFound(id: 5)) {
            try world.engine.setCover(momentId: 5, pictureId: 10, by: "owner", in: &world.store)
        }
        _ = try world.engine.setCover(momentId: 1, pictureId: 11, by: "owner", in: &world.store)
        #expect(world.store.moment(id: 1)?.coverPictureId == 11)
        let cleared = try world.engine.setCover(momentId: 1, pictureId: nil, by: "owner", in: &world.store)
        #expect(world.store.moment(id: 1)?.coverPictureId == 10)
        #expect(cleared.contains { if case .coverChanged(1, 10, _) = $0 { true } else { false } })
    }

    @Test("A removed policy cover falls back to the next choice; the last removal leaves none")
    func removalFallsBack() throws {
        var world = Self.world(.best)
        try world.ingest(Fixture.photo(10, minutes: 0, score: 0.9), Fixture.photo(11, minutes: 1, score: 0.3))
        let id = try #require(world.momentOf(10))
        #expect(world.store.moment(id: id)?.coverPictureId == 10)
        try world.remove(10)
        #expect(world.store.moment(id: id)?.coverPictureId == 11)
    }

    @Test("An automatic moment's cover is chosen like a declared one's")
    func automaticCover() throws {
        var world = Self.world(.best)
        let events = try world.ingest(Fixture.photo(10, score: 0.4))
        let id = try #require(world.momentOf(10))
        #expect(events.contains { if case .coverChanged(id, 10, _) = $0 { true } else { false } })
        #expect(world.store.moment(id: id)?.coverSource == .policy)
    }

    @Test("The author's cover of an automatic moment survives a merge and goes with its picture on a split")
    func creatorCoverOfAutomaticMoments() throws {
        var world = Self.world(.best)
        try world.ingest(Fixture.photo(10, minutes: 0, at: Fixture.point(0), score: 0.1),
                         Fixture.photo(11, minutes: 0, at: Fixture.point(250), score: 0.9))
        let right = try #require(world.momentOf(11))
        _ = try world.engine.setCover(momentId: right, pictureId: 11, by: "ana", in: &world.store)
        try world.ingest(Fixture.photo(12, minutes: 0, at: Fixture.point(125), score: 1.0))  // bridges: the left moment survives
        let merged = try #require(world.moment(of: 11))
        #expect(merged.id == world.momentOf(10))
        #expect(merged.coverPictureId == 11 && merged.coverSource == .creator)
        try world.remove(12)  // splits again: the creator's cover goes with picture 11
        let split = try #require(world.moment(of: 11))
        #expect(split.id != world.momentOf(10))
        #expect(split.coverPictureId == 11 && split.coverSource == .creator)
        #expect(world.moment(of: 10)?.coverPictureId == 10 && world.moment(of: 10)?.coverSource == .policy)
    }

    @Test("The store's digest path chooses the same cover as the pure function", arguments: [CoverPolicy.first, .best])
    func digestAgreesWithPureChoice(_ policy: CoverPolicy) throws {
        var rng = SplitMix64(seed: 9)
        var world = Self.world(policy)
        try world.declare(Fixture.declared(1, radius: 1_000))
        var pictures: [PhotoFacts] = []
        for id in Int64(1)...60 {
            let photo = Fixture.photo(id, minutes: .random(in: 0...60, using: &rng), at: Fixture.point(.random(in: 0...900, using: &rng)),
                                      key: String(format: "%08x", rng.next() & 0xffff_ffff),
                                      score: Double(Int.random(in: 0...20, using: &rng)) / 20)
            pictures.append(photo)
            try world.ingest(photo)
            let expected = policy.choose(among: pictures, margin: 0.1)
            #expect(world.store.moment(id: 1)?.coverPictureId == expected?.pictureId)
            #expect(world.store.moment(id: 1)?.coverReason == expected?.reason)
        }
    }

    @Test("CoverScore rewards sharpness, mid exposure, resolution and the feed aspect")
    func coverScore() {
        let ideal = CoverScore.score(sharpness: 1, meanLuma: 0.5, clippedFraction: 0, width: 2400, height: 3000)
        #expect(abs(ideal.value - 1) < 1e-12)
        #expect(ideal.aspectFit == 1 && ideal.resolution == 1)
        let landscape = CoverScore.score(sharpness: 1, meanLuma: 0.5, clippedFraction: 0, width: 4000, height: 3000)
        #expect(abs(landscape.aspectFit - 0.6) < 1e-12)
        let dark = CoverScore.score(sharpness: 1, meanLuma: 0.1, clippedFraction: 0, width: 2400, height: 3000)
        let clipped = CoverScore.score(sharpness: 1, meanLuma: 0.5, clippedFraction: 0.2, width: 2400, height: 3000)
        let blurry = CoverScore.score(sharpness: 0.2, meanLuma: 0.5, clippedFraction: 0, width: 2400, height: 3000)
        let small = CoverScore.score(sharpness: 1, meanLuma: 0.5, clippedFraction: 0, width: 400, height: 500)
        for worse in [landscape, dark, clipped, blurry, small] { #expect(worse.value < ideal.value) }
        let broken = CoverScore.score(sharpness: .nan, meanLuma: 7, clippedFraction: -1, width: 0, height: -5)
        #expect((0...1).contains(broken.value))
        #expect(ideal.description.hasPrefix("1.00 (sharpness 1.00"))
    }
}
