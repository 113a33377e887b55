import BucketStorage
import Foundation
import GatewayHarness
import ObjectStorage
import Settings
import Storage
import Testing

@Suite("Direct uploads never completed", .enabled(if: SharedGateway.available, Comment(rawValue: SharedGateway.skipReason)))
struct DirectUploadExpiryTests {
    @Test("a grant whose URL expired is removed with its bytes; one still valid, and the staging area, are left alone")
    func expiredGrantsAreRemoved() async throws {
        let (gateway, bucket) = try await onPlainThread { (try SharedGateway.gateway.get(), try SharedGateway.freshBucket(prefix: "expiry")) }
        let (configuration, environment) = LibraryStoresGatewayTests.settings(gateway, bucket: bucket)
        let library = try #require(try LibraryStores.open(configuration, environment: environment) as? BucketLibrary)
        let staging = BucketStaging(library: library)
        let uploads = DirectUploads(staging: staging)
        // Whole seconds: a grant is recorded with its expiry to the second.
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let stale = DirectUploads.Grant(id: String(repeating: "a", count: 32), size: 4, contentType: "image/jpeg", sidecar: nil,
                                        expiresAt: now.addingTimeInterval(60))
        let fresh = DirectUploads.Grant(id: String(repeating: "b", count: 32), size: 4, contentType: "image/jpeg",
                                        sidecar: #"{"author_id":"alice"}"#, expiresAt: now.addingTimeInterval(3600))
        let ticket = try await onPlainThread { try uploads.grant(stale, now: now) }
        #expect(ticket.url.contains("X-Amz-Expires=60"), "the URL expires when the grant does")
        #expect(ticket.headers["Content-Length"] == "4")
        _ = try await onPlainThread { try uploads.grant(fresh, now: now) }
        // The stale upload's bytes arrived but it was never completed.
        try await library.client.put(key: "library/direct/\(stale.id)/photo", bytes: [1, 2, 3, 4])
        try await library.client.put(key: "library/staging/t0k3n/photo.jpg", bytes: [9])
        #expect(try await onPlainThread { try uploads.recorded(fresh.id) } == fresh)

        // Before its URL has expired (and the grace after it) nothing goes.
        #expect(try await onPlainThread { try staging.sweep(now: now.addingTimeInterval(120), quietFor: 30).removed } == 0)
        // After, the stale grant and its bytes go; the valid grant and the staging area stay.
        #expect(try await onPlainThread { try staging.sweep(now: now.addingTimeInterval(60 + 301), quietFor: 30).removed } == 1)
        let left = try await library.client.list(prefix: "library/").objects.map(\.key).sorted()
        #expect(left == ["library/direct/\(fresh.id)/grant.json", "library/staging/t0k3n/photo.jpg"])
        #expect(try await onPlainThread { try uploads.recorded(stale.id) } == nil)
        try await library.shutdown()
    }

    @Test("a ticket or sidecar staged without its photo goes after twice the quiet time; a photo's own stay")
    func strayCompanionsAreRemoved() async throws {
        let (gateway, bucket) = try await onPlainThread { (try SharedGateway.gateway.get(), try SharedGateway.freshBucket(prefix: "strays")) }
        let (configuration, environment) = LibraryStoresGatewayTests.settings(gateway, bucket: bucket)
        let library = try #require(try LibraryStores.open(configuration, environment: environment) as? BucketLibrary)
        let staging = BucketStaging(library: library)
        // A whole photo with its sidecar and ticket, and what a publish or discard cut short left.
        let whole = ["t1/a.jpg", "t1/a.jpg.json", "t1/a.jpg" + Spool.importTicketSuffix]
        let strays = ["t2/b.jpg" + Spool.importTicketSuffix, "t3/c.jpg.json"]
        for key in whole + strays { try await library.client.put(key: "library/staging/" + key, bytes: [1]) }
        let now = Date()

        #expect(try await onPlainThread { try staging.sweep(now: now.addingTimeInterval(50), quietFor: 30).removed } == 0,
                "within twice the quiet time nothing goes: a publish may still be putting its photo")
        // One listing serves both: the strays go, and the same look finds the whole photo, quiet by then.
        #expect(try await onPlainThread { try staging.sweep(now: now.addingTimeInterval(65), quietFor: 30) }
                == StagingSweep(quietPhotos: ["t1/a.jpg"], removed: 2))
        let left = try await library.client.list(prefix: "library/staging/").objects.map(\.key).sorted()
        #expect(left == whole.map { "library/staging/" + $0 }.sorted())
        #expect(try await onPlainThread { try staging.sweep(now: Date(), quietFor: 60).quietPhotos } == [], "a photo staged a moment ago is not quiet yet")
        // The reconciliation sees the photo only, never its companions.
        try await Task.sleep(for: .milliseconds(1100))
        #expect(try await onPlainThread { try staging.sweep(now: Date(), quietFor: 0).quietPhotos } == ["t1/a.jpg"])
        try await library.shutdown()
    }
}
