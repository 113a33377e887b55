import Catalog
import Foundation
import Moments
@testable import PostgresCatalog
import PostgresHarness
import Testing

/// The PostgreSQL moments store keeps what a transaction read of a picture; what it answers
/// must stay what the database holds, whatever the store itself wrote since.
@Suite("The moments store in PostgreSQL", .enabled(if: SharedCluster.available, Comment(rawValue: SharedCluster.skipReason)))
struct PostgresMomentStoreTests {
    @Test func keptReadsOfAPictureAgreeWithTheDatabaseAfterEachOfTheStoresOwnWrites() throws {
        let catalog = try PostgresCatalogTests.catalog()
        defer { catalog.close() }
        var ids: [Int64] = []
        for (i, photo) in PostgresCatalogTests.photos(seed: 11, count: 12).enumerated() {
            if case .added(let id, _) = try catalog.commitPicture(photo, variants: [], job: PostgresCatalogTests.job(i)) { ids.append(id) }
        }
        try #require(ids.count == 12)
        try catalog.write(commit: false) { session in
            var store = PostgresMomentStore(session: session)
            /// `store` (with its kept reads) against a store that keeps nothing yet, for every picture.
            func agree(_ step: String) throws {
                let fresh = PostgresMomentStore(session: session)
                for id in ids {
                    #expect(try store.picture(id: id) == fresh.picture(id: id), "\(step): the facts of \(id)")
                    #expect(try store.momentId(ofPicture: id) == fresh.momentId(ofPicture: id), "\(step): the moment of \(id)")
                    #expect(try store.candidateMoments(ofPicture: id) == fresh.candidateMoments(ofPicture: id), "\(step): the candidates of \(id)")
                }
            }
            try agree("first reads")
            let first = try #require(try ids.lazy.compactMap { try store.momentId(ofPicture: $0) }.first, "a picture in a moment")
            var copy = try #require(try store.moment(id: first))
            copy.id = 0
            let other = try store.createMoment(copy)

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
            try store.deleteMoment(id: other.id)
            try agree("a moment deleted")
            let removed = try #require(try store.picture(id: ids[3]))
            try store.deletePicture(id: ids[3])
            try agree("a picture taken out of the moments")
            try store.savePicture(removed)
            try store.assign(picture: ids[3], to: first)
            var changed = try #require(try store.picture(id: ids[4]))
            changed.coverScore += 1
            changed.capturedAt = changed.capturedAt?.addingTimeInterval(0.123_456_789)
            try store.savePicture(changed)
            try agree("pictures saved again")
        }
    }
}
