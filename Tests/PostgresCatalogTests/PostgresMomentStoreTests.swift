import Catalog
import Foundation
import Moments
@testable import PostgresCatalog
import PostgresHarness
import PostgresNIO
@testable import PostgresStore
import Testing

/// The PostgreSQL moments store keeps what a transaction read (a picture's facts, moment and
/// candidates; moments; the places holding a point; a moment's cover candidate; a new picture's
/// neighbours) and sends its writes without waiting; what it answers must stay what the
/// database holds, whatever the store itself wrote since.
@Suite("The moments store in PostgreSQL", .enabled(if: SharedCluster.available, Comment(rawValue: SharedCluster.skipReason)))
struct PostgresMomentStoreTests {
    @Test func keptReadsOfAPictureAgreeWithTheDatabaseAfterEachOfTheStoresOwnWrites() throws {
        let catalog = try PostgresCatalogTests.catalog()
        defer { catalog.close() }
        var ids: [Int64] = []
        for (i, photo) in PostgresCatalogTests.photos(seed: 11, count: 48).enumerated() {
            if case .added(let id, _) = try catalog.commitPicture(photo, variants: [], job: PostgresCatalogTests.job(i)) { ids.append(id) }
        }
        try #require(ids.count == 48)
        try catalog.write(commit: false) { session in
            let rules = MomentRules.default
            var store = PostgresMomentStore(session: session, rules: rules)
            var moments = Set<Int64>()
            /// `store` (with its kept reads) against a store that keeps nothing yet, for every
            /// picture and every moment met. What a kept read could have gone stale for is asked
            /// of `store` before anything that would fetch it afresh.
            func agree(_ step: String) throws {
                let fresh = PostgresMomentStore(session: session, rules: rules)
                for id in ids {
                    #expect(try store.picture(id: id) == fresh.picture(id: id), "\(step): the facts of \(id)")
                    #expect(try store.momentId(ofPicture: id) == fresh.momentId(ofPicture: id), "\(step): the moment of \(id)")
                    #expect(try store.candidateMoments(ofPicture: id) == fresh.candidateMoments(ofPicture: id), "\(step): the candidates of \(id)")
                    if let moment = try fresh.momentId(ofPicture: id) { moments.insert(moment) }
                    guard let facts = try fresh.picture(id: id), let here = facts.timeAndPlace else { continue }
                    #expect(Set(try store.automaticNeighbours(of: facts, rules: rules)) == Set(try fresh.automaticNeighbours(of: facts, rules: rules)),
                            "\(step): the neighbours of \(id)")
                    #expect(try store.places(containing: here.location) == fresh.places(containing: here.location),
                            "\(step): the places holding \(id)")
                }
                for moment in moments.sorted() {
                    #expect(try store.moment(id: moment) == fresh.moment(id: moment), "\(step): moment \(moment)")
                    let digest = try fresh.digest(ofMoment: moment)
                    if let best = digest.bestScore {
                        #expect(try store.earliestPicture(inMoment: moment, scoringAtLeast: best - rules.coverMargin)
                                == fresh.earliestPicture(inMoment: moment, scoringAtLeast: best - rules.coverMargin),
                                "\(step): the cover candidate of moment \(moment)")
                    }
                    #expect(try store.digest(ofMoment: moment) == digest, "\(step): the digest of moment \(moment)")
                }
            }
            try agree("first reads")
            // A saved picture's declared moments bring its neighbours along; any picture written
            // after that makes them stale.
            let probe = PostgresMomentStore(session: session, rules: rules)
            let withNeighbours = try ids.compactMap { try probe.picture(id: $0) }
                .filter { try !probe.automaticNeighbours(of: $0, rules: rules).isEmpty }
            let saved = try #require(withNeighbours.first, "a picture with neighbours")
            let here = try #require(saved.timeAndPlace)
            try store.savePicture(saved)
            _ = try store.declaredMoments(near: here.location, at: here.time, rules: rules)
            let neighbour = try #require(try store.automaticNeighbours(of: saved, rules: rules).first)
            try store.assign(picture: neighbour.photo.id, to: nil)
            try agree("a neighbour taken out of its moment")
            // A moment's cover candidate, fetched with its digest, goes stale when it leaves
            // the moment while the best score stays: scores are set so that the first picture
            // is the candidate (within the margin) and the second holds the best score.
            let shared = try #require(try moments.sorted().first { try probe.pictures(inMoment: $0).count >= 2 }, "a moment of two pictures")
            let members = PictureOrder.sorted(try probe.pictures(inMoment: shared))
            for (index, member) in members.enumerated() {
                var scored = member
                scored.coverScore = index == 0 ? 0.5 : index == 1 ? 0.55 : 0.1
                try store.savePicture(scored)
            }
            #expect(try store.earliestPicture(inMoment: shared, scoringAtLeast: try #require(store.digest(ofMoment: shared).bestScore)
                                              - rules.coverMargin)?.id == members[0].id)
            try store.assign(picture: members[0].id, to: nil)
            try agree("a cover candidate taken out of its moment")
            let first = try #require(try ids.lazy.compactMap { try store.momentId(ofPicture: $0) }.first, "a picture in a moment")
            var copy = try #require(try store.moment(id: first))
            copy.id = 0
            let other = try store.createMoment(copy)
            moments.formUnion([first, other.id])
            try agree("a moment created")

            try store.movePictures(fromMoment: first, toMoment: other.id)
            try agree("pictures moved to another moment")
            try store.recordCandidate(picture: ids[0], moment: other.id)
            try store.recordCandidate(picture: ids[2], moment: other.id)
            try agree("candidates recorded")
            try store.assign(picture: ids[1], to: first)
            try store.assign(picture: ids[5], to: nil)
            try agree("pictures assigned")
            try store.removeCandidate(picture: ids[0], moment: other.id)
            try agree("a candidate removed")
            var invited = try #require(try store.moment(id: other.id))
            invited.invitees = ["ana", "bo"]
            try store.saveMoment(invited)
            try agree("a moment saved with invitees")
            invited.invitees = ["bo"]
            invited.title = "renamed"
            try store.saveMoment(invited)
            try agree("a moment saved with fewer invitees")
            let located = try #require(try ids.lazy.compactMap { try store.picture(id: $0)?.timeAndPlace?.location }.first)
            _ = try store.createPlace(name: nil, center: located, radiusMetres: 500)
            try agree("a place created over a picture")
            try store.deleteMoment(id: other.id)
            try agree("a moment deleted")
            let removed = try #require(try store.picture(id: ids[3]))
            try store.deletePicture(id: ids[3])
            try agree("a picture taken out of the moments")
            // Its facts, its moment and the digest of that moment, asked next, go in one
            // statement (the save waits for them), and the digest sees the picture: the best
            // score is its own.
            var best = removed
            best.coverScore = 1
            try store.savePicture(best)
            try store.assign(picture: ids[3], to: first)
            #expect(try store.digest(ofMoment: first).bestScore == 1)
            #expect(try PostgresMomentStore(session: session, rules: rules).momentId(ofPicture: ids[3]) == first)
            var changed = try #require(try store.picture(id: ids[4]))
            changed.coverScore += 1
            changed.capturedAt = changed.capturedAt?.addingTimeInterval(0.123_456_789)
            try store.savePicture(changed)
            try agree("pictures saved again")
        }
    }

    /// The placing a commit asks in its picture's insert (`placingAlongside`), for a picture of
    /// the catalog as if it had just been inserted.
    static func prefetch(_ facts: PhotoFacts, into store: PostgresMomentStore, _ session: PostgresSession, rules: MomentRules) throws {
        var query = PostgresQuery(unsafeSQL: "")
        let alongside = try #require(store.placingAlongside(of: facts, rules: rules))
        let (columns, join) = alongside.make(&query.binds)
        query.binds.append(facts.id)
        query.sql = "WITH inserted AS (SELECT $\(query.binds.count)::bigint AS id) SELECT inserted.id, \(columns) FROM inserted \(join)"
        try store.knowPlacing(of: facts, rows: try session.rows(query), rules: rules)
    }

    @Test("a picture's placing asked with its insert answers the engine's first question, until a write of the store could change it")
    func aPlacingAskedWithTheInsertIsUsedUntilAWriteCouldChangeIt() throws {
        let catalog = try PostgresCatalogTests.catalog()
        defer { catalog.close() }
        for (i, photo) in PostgresCatalogTests.photos(seed: 12, count: 24).enumerated() {
            _ = try catalog.commitPicture(photo, variants: [], job: PostgresCatalogTests.job(i))
        }
        try catalog.write(commit: false) { session in
            let rules = MomentRules.default
            let probe = PostgresMomentStore(session: session, rules: rules)
            let ids = try session.values("SELECT id FROM pictures ORDER BY id", as: Int64.self)
            let subject = try #require(try ids.lazy.compactMap { try probe.picture(id: $0) }.first { $0.timeAndPlace != nil })
            let here = try #require(subject.timeAndPlace)
            func placesHoldingIt(afterOwnWrite write: (inout PostgresMomentStore) throws -> Void) throws -> [Place] {
                var store = PostgresMomentStore(session: session, rules: rules)
                try Self.prefetch(subject, into: store, session, rules: rules)
                // A place over the picture, written behind this store's back.
                var other = PostgresMomentStore(session: session, rules: rules)
                _ = try other.createPlace(name: nil, center: here.location, radiusMetres: 300)
                try write(&store)
                try store.savePicture(subject)
                _ = try store.declaredMoments(near: here.location, at: here.time, rules: rules)
                return try store.places(containing: here.location)
            }
            let before = try probe.places(containing: here.location)
            // Nothing written since: the engine's question is answered from the insert's
            // statement (which did not see the place written since).
            #expect(try placesHoldingIt { _ in } == before)
            // A place written by the store itself: asked again.
            let fresh = try placesHoldingIt { store in _ = try store.createPlace(name: nil, center: here.location, radiusMetres: 200) }
            #expect(fresh == (try PostgresMomentStore(session: session, rules: rules).places(containing: here.location)))
            #expect(fresh.count == before.count + 3, "the two places written behind its back and its own")
            // A moment written by the store: asked again too.
            let afterMoment = try placesHoldingIt { store in
                _ = try store.createMoment(Moment(id: 0, kind: .automatic, placeId: fresh[0].id, start: here.time,
                                                  end: here.time, creator: subject.author, visibility: .private))
            }
            #expect(afterMoment.count == fresh.count + 1, "the place written behind its back since")
        }
    }
}
