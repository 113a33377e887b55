import BucketStorage
import Foundation
import GatewayHarness
@testable import ObjectStorage
import Storage
import Testing

/// One set of checks of the `BlobStore` seam, run against each store: the local `Library` in a
/// temporary directory, and a `BucketLibrary` on a fresh bucket of the shared RADOS Gateway.
/// Whatever photo processing relies on (paths, reads, idempotent puts, listings, sizes,
/// removal, large originals) must hold on both.
@Suite("Library conformance: a local directory")
struct DirectoryLibraryConformanceTests {
    @Test("an original is put and read back") func original() async throws { try await LibraryConformance.run(.directory, LibraryConformance.original) }
    @Test("variants are put together and each read back") func variants() async throws { try await LibraryConformance.run(.directory, LibraryConformance.variants) }
    @Test("the same original put again writes nothing") func idempotent() async throws { try await LibraryConformance.run(.directory, LibraryConformance.idempotentOriginal) }
    @Test("a listing gives exactly what was put, relative, with sizes") func listing() async throws { try await LibraryConformance.run(.directory, LibraryConformance.listing) }
    @Test("a photo's original and variants put at once read back") func wholePhoto() async throws { try await LibraryConformance.run(.directory, LibraryConformance.wholePhoto) }
    @Test("size(of:) gives the size, nil for a missing path") func sizes() async throws { try await LibraryConformance.run(.directory, LibraryConformance.sizes) }
    @Test("a removed path is absent; removing it again is fine") func removal() async throws { try await LibraryConformance.run(.directory, LibraryConformance.removal) }
    @Test("a 100 MB original put from its file reads back with the same SHA-256") func largeOriginal() async throws { try await LibraryConformance.run(.directory, LibraryConformance.largeOriginal) }
}

@Suite("Library conformance: a bucket", .enabled(if: SharedGateway.available, Comment(rawValue: SharedGateway.skipReason)))
struct BucketLibraryConformanceTests {
    @Test("an original is put and read back") func original() async throws { try await LibraryConformance.run(.bucket, LibraryConformance.original) }
    @Test("variants are put together and each read back") func variants() async throws { try await LibraryConformance.run(.bucket, LibraryConformance.variants) }
    @Test("the same original put again writes nothing") func idempotent() async throws { try await LibraryConformance.run(.bucket, LibraryConformance.idempotentOriginal) }
    @Test("a listing gives exactly what was put, relative, with sizes") func listing() async throws { try await LibraryConformance.run(.bucket, LibraryConformance.listing) }
    @Test("a photo's original and variants go at once, one PUT each and no HEAD") func wholePhoto() async throws { try await LibraryConformance.run(.bucket, LibraryConformance.wholePhoto) }
    @Test("size(of:) gives the size, nil for a missing path") func sizes() async throws { try await LibraryConformance.run(.bucket, LibraryConformance.sizes) }
    @Test("a removed path is absent; removing it again is fine") func removal() async throws { try await LibraryConformance.run(.bucket, LibraryConformance.removal) }
    @Test("a 100 MB original put from its file goes in parts and reads back with the same SHA-256") func largeOriginal() async throws { try await LibraryConformance.run(.bucket, LibraryConformance.largeOriginal) }
    @Test("a put whose Content-MD5 does not match its body is refused, and nothing is stored") func integrity() async throws { try await LibraryConformance.run(.bucket, LibraryConformance.integrityRefusal) }
    @Test("a presigned GET serves the object without credentials") func presigned() async throws { try await LibraryConformance.run(.bucket, LibraryConformance.presignedGET) }
}

/// The checks, each on a fresh store.
enum LibraryConformance {
    static func run(_ kind: LibraryFixture.Kind, _ check: (LibraryFixture) async throws -> Void) async throws {
        let clock = ContinuousClock()
        let start = clock.now
        try await LibraryFixture.with(kind, check)
        print("LibraryConformance [\(kind.rawValue)]: \(start.duration(to: clock.now))")
    }

    /// An original is stored at its content address and read back byte for byte; the bucket's
    /// object has the extension's content type; the location names the store.
    static func original(_ fixture: LibraryFixture) async throws {
        let photo = SamplePhoto(seed: 1, count: 300_000)
        let path = try await fixture.call { try $0.putOriginal(photo.bytes, sha256: photo.sha256, extension: "jpg", linkingFrom: nil) }
        #expect(path == Library.originalPath(sha256: photo.sha256, extension: "jpg"))
        #expect(path.hasPrefix("originals/\(photo.sha256.prefix(2))/\(photo.sha256.dropFirst(2).prefix(2))/"))
        let read = try await fixture.call { try $0.get(path) }
        #expect(read == photo.bytes)

        let heic = SamplePhoto(seed: 2, count: 20_000)
        let heicPath = try await fixture.call { try $0.putOriginal(heic.bytes, sha256: heic.sha256, extension: "heic", linkingFrom: nil) }
        #expect(try await fixture.call { try $0.get(heicPath) } == heic.bytes)

        switch fixture.kind {
        case .directory:
            #expect(fixture.store.location == fixture.library?.root)
        case .bucket:
            let bucket = try #require(fixture.bucket)
            #expect(bucket.location == "s3://\(bucket.bucket)/library/")
            let jpeg = try await bucket.client.head(key: "library/" + path)
            #expect(jpeg?.contentType == "image/jpeg")
            #expect(jpeg?.size == photo.bytes.count)
            #expect(try await bucket.client.head(key: "library/" + heicPath)?.contentType == "image/heic")
            // Nothing outside the prefix.
            #expect(try await bucket.client.head(key: path) == nil)
        }
    }

    /// Variants are stored together at their paths, returned in order, each read back; put
    /// again, nothing is written.
    static func variants(_ fixture: LibraryFixture) async throws {
        let sha = SamplePhoto(seed: 3, count: 10).sha256
        let samples = [("thumb", "webp", SamplePhoto(seed: 4, count: 12_000)),
                       ("feed", "jpg", SamplePhoto(seed: 5, count: 80_000)),
                       ("large", "avif", SamplePhoto(seed: 6, count: 200_000)),
                       ("square", "png", SamplePhoto(seed: 7, count: 1))]
        let variants = samples.map { (name: $0.0, extension: $0.1, bytes: $0.2.bytes) }
        let paths = try await fixture.call { try $0.putVariants(variants, sha256: sha) }
        #expect(paths == samples.map { Library.variantPath(sha256: sha, variant: $0.0, extension: $0.1) })
        for (path, sample) in zip(paths, samples) {
            #expect(try await fixture.call { try $0.get(path) } == sample.2.bytes, "\(path)")
        }
        if let bucket = fixture.bucket {
            #expect(try await bucket.client.head(key: "library/" + paths[0])?.contentType == "image/webp")
            #expect(try await bucket.client.head(key: "library/" + paths[2])?.contentType == "image/avif")
            #expect(try await bucket.client.head(key: "library/" + paths[3])?.contentType == "image/png")
        }

        let before = fixture.statistics()
        let identities = paths.map { fixture.fileIdentity($0) }
        let again = try await fixture.call { try $0.putVariants(variants, sha256: sha) }
        #expect(again == paths)
        switch fixture.kind {
        case .directory:
            #expect(identities.allSatisfy { $0 != nil })
            #expect(paths.map { fixture.fileIdentity($0) } == identities, "a variant was written again")
        case .bucket:
            let after = fixture.statistics()
            #expect(after.count(.putObject, .success) == before.count(.putObject, .success), "a variant was sent again")
            #expect(after.requests[.putObject] == before.requests[.putObject])
            #expect(after.count(.headObject, .success) == before.count(.headObject, .success) + variants.count)
        }
    }

    /// A photo's original and variants put at once are each read back at the paths `putOriginal`
    /// and `putVariants` give; in a bucket each is one PUT and nothing else (no HEAD before it).
    static func wholePhoto(_ fixture: LibraryFixture) async throws {
        let photo = SamplePhoto(seed: 11, count: 300_000)
        let samples = [("thumb", "webp", SamplePhoto(seed: 12, count: 9_000)), ("feed", "jpg", SamplePhoto(seed: 13, count: 60_000))]
        let variants = samples.map { (name: $0.0, extension: $0.1, bytes: $0.2.bytes) }
        let before = fixture.statistics()
        let original = OriginalBlob(bytes: photo.bytes, fileExtension: "heic", source: nil, sharing: false)
        let stored = try await fixture.call { try $0.putPhoto(original: original, variants: variants, sha256: photo.sha256) }
        #expect(stored.original == Library.originalPath(sha256: photo.sha256, extension: "heic"))
        #expect(stored.variants == samples.map { Library.variantPath(sha256: photo.sha256, variant: $0.0, extension: $0.1) })
        #expect(try await fixture.call { try $0.get(stored.original) } == photo.bytes)
        for (path, sample) in zip(stored.variants, samples) {
            #expect(try await fixture.call { try $0.get(path) } == sample.2.bytes, "\(path)")
        }
        if fixture.kind == .bucket {
            let after = fixture.statistics()
            #expect(after.count(.putObject, .success) - before.count(.putObject, .success) == 1 + samples.count)
            #expect(after.count(.headObject, .success) == before.count(.headObject, .success), "a HEAD before a PUT")
            #expect(try await fixture.bucket?.client.head(key: "library/" + stored.original)?.contentType == "image/heic")
        }
    }

    /// The same original put again (from bytes, then from a file holding them) writes nothing:
    /// the directory's file keeps its inode and modification time; the bucket is sent no PUT.
    static func idempotentOriginal(_ fixture: LibraryFixture) async throws {
        let photo = SamplePhoto(seed: 8, count: 500_000)
        let path = try await fixture.call { try $0.putOriginal(photo.bytes, sha256: photo.sha256, extension: "jpg", linkingFrom: nil) }
        let identity = fixture.fileIdentity(path)
        let before = fixture.statistics()
        #expect(before.count(.putObject, .success) == (fixture.kind == .bucket ? 1 : 0))

        let source = fixture.scratch + "/same.jpg"
        try Data(photo.bytes).write(to: URL(fileURLWithPath: source))
        let again = try await fixture.call { try $0.putOriginal(photo.bytes, sha256: photo.sha256, extension: "jpg", linkingFrom: nil) }
        let linked = try await fixture.call { try $0.putOriginal(photo.bytes, sha256: photo.sha256, extension: "jpg", linkingFrom: source) }
        #expect(again == path && linked == path)
        #expect(try await fixture.call { try $0.get(path) } == photo.bytes)
        switch fixture.kind {
        case .directory:
            #expect(identity != nil)
            #expect(fixture.fileIdentity(path) == identity, "the original was written again")
        case .bucket:
            let after = fixture.statistics()
            #expect(after.requests[.putObject] == before.requests[.putObject], "the original was sent again")
            #expect(after.requests[.createMultipartUpload] == nil)
            #expect(after.count(.headObject, .success) == before.count(.headObject, .success) + 2)
        }
    }

    /// `list(prefix:)` of `originals/` and `variants/` gives exactly what was put, as relative
    /// paths with their sizes, with or without the trailing `/`; a deeper prefix narrows it.
    static func listing(_ fixture: LibraryFixture) async throws {
        #expect(try await fixture.call { try $0.list(prefix: "originals/") }.isEmpty)
        var originals: Set<StoredBlob> = []
        var variants: Set<StoredBlob> = []
        for seed in UInt64(10)..<13 {
            let photo = SamplePhoto(seed: seed, count: 1_000 * Int(seed))
            let path = try await fixture.call { try $0.putOriginal(photo.bytes, sha256: photo.sha256, extension: "jpg", linkingFrom: nil) }
            originals.insert(StoredBlob(path: path, size: Int64(photo.bytes.count)))
            let thumb = SamplePhoto(seed: seed + 100, count: 100 + Int(seed))
            let feed = SamplePhoto(seed: seed + 200, count: 2_000 + Int(seed))
            let paths = try await fixture.call {
                try $0.putVariants([("thumb", "webp", thumb.bytes), ("feed", "jpg", feed.bytes)], sha256: photo.sha256)
            }
            variants.insert(StoredBlob(path: paths[0], size: Int64(thumb.bytes.count)))
            variants.insert(StoredBlob(path: paths[1], size: Int64(feed.bytes.count)))
        }
        if let bucket = fixture.bucket {
            // Objects beside the library (outside its prefix) are not the library's.
            try await bucket.client.put(key: "originals/aa/bb/stray.jpg", bytes: [1, 2, 3])
            try await bucket.client.put(key: "library-other/originals/aa/bb/stray.jpg", bytes: [1, 2, 3])
        }

        let listedOriginals = try await fixture.call { try $0.list(prefix: "originals/") }
        #expect(listedOriginals.count == originals.count)
        #expect(Set(listedOriginals) == originals)
        let listedVariants = try await fixture.call { try $0.list(prefix: "variants/") }
        #expect(listedVariants.count == variants.count)
        #expect(Set(listedVariants) == variants)
        #expect(Set(try await fixture.call { try $0.list(prefix: "originals") }) == originals)
        #expect(Set(try await fixture.call { try $0.list(prefix: "variants/thumb/") }) == variants.filter { $0.path.hasPrefix("variants/thumb/") })
        #expect(variants.filter { $0.path.hasPrefix("variants/thumb/") }.count == 3)
        #expect(try await fixture.call { try $0.list(prefix: "variants/none/") }.isEmpty)
        #expect(fixture.store.sweepTemporaries(olderThan: 0, now: Date().addingTimeInterval(3600)) == 0)
        #expect(Set(try await fixture.call { try $0.list(prefix: "originals/") }) == originals)
    }

    /// `size(of:)` gives what was stored; nil for a path where nothing is.
    static func sizes(_ fixture: LibraryFixture) async throws {
        let photo = SamplePhoto(seed: 20, count: 123_457)
        let path = try await fixture.call { try $0.putOriginal(photo.bytes, sha256: photo.sha256, extension: "png", linkingFrom: nil) }
        #expect(try await fixture.call { try $0.size(of: path) } == Int64(photo.bytes.count))
        let missing = Library.originalPath(sha256: SamplePhoto(seed: 21, count: 10).sha256, extension: "jpg")
        #expect(try await fixture.call { try $0.size(of: missing) } == nil)
        #expect(try await fixture.call { try $0.size(of: Library.variantPath(sha256: photo.sha256, variant: "thumb", extension: "webp")) } == nil)
        let empty = SamplePhoto(seed: 22, count: 0)
        let emptyPath = try await fixture.call { try $0.putOriginal(empty.bytes, sha256: empty.sha256, extension: "jpg", linkingFrom: nil) }
        #expect(try await fixture.call { try $0.size(of: emptyPath) } == 0)
        #expect(try await fixture.call { try $0.get(emptyPath) } == [])
    }

    /// A removed path is absent everywhere (size, listing, read); removing it again, or a path
    /// that never was, is not an error; the others stay.
    static func removal(_ fixture: LibraryFixture) async throws {
        let kept = SamplePhoto(seed: 30, count: 5_000)
        let removed = SamplePhoto(seed: 31, count: 6_000)
        let keptPath = try await fixture.call { try $0.putOriginal(kept.bytes, sha256: kept.sha256, extension: "jpg", linkingFrom: nil) }
        let removedPath = try await fixture.call { try $0.putOriginal(removed.bytes, sha256: removed.sha256, extension: "jpg", linkingFrom: nil) }
        try await fixture.call { try $0.remove(removedPath) }
        #expect(try await fixture.call { try $0.size(of: removedPath) } == nil)
        #expect(try await fixture.call { try $0.list(prefix: "originals/") } == [StoredBlob(path: keptPath, size: Int64(kept.bytes.count))])
        switch fixture.kind {
        case .directory:
            await #expect(throws: FileSystemError.self) { try await fixture.call { try $0.get(removedPath) } }
        case .bucket:
            let error = await #expect(throws: ObjectStorageError.self) { try await fixture.call { try $0.get(removedPath) } }
            #expect(error?.isNotFound == true)
            #expect(error?.isTransient == false)
        }
        try await fixture.call { try $0.remove(removedPath) }
        try await fixture.call { try $0.remove(Library.variantPath(sha256: removed.sha256, variant: "thumb", extension: "webp")) }
        #expect(try await fixture.call { try $0.get(keptPath) } == kept.bytes)
    }

    /// A 100 MB original put with `linkingFrom:` its file: the directory links the file in; the
    /// bucket uploads it from disk in parts (no single PUT). Read back, the SHA-256 is the
    /// same; put again, nothing is sent.
    static func largeOriginal(_ fixture: LibraryFixture) async throws {
        let source = fixture.scratch + "/panorama.jpg"
        let photo = try SamplePhoto.file(at: source, count: 100_000_000)
        let before = fixture.statistics()
        let path = try await fixture.call { try $0.putOriginal(photo.bytes, sha256: photo.sha256, extension: "jpg", linkingFrom: source) }
        #expect(path == Library.originalPath(sha256: photo.sha256, extension: "jpg"))
        let after = fixture.statistics()
        switch fixture.kind {
        case .directory:
            #expect(fixture.fileIdentity(path)?.inode == FileIdentity(path: source)?.inode, "the source was not linked in")
        case .bucket:
            #expect(after.count(.createMultipartUpload, .success) == 1)
            // 16 MiB parts: five whole ones and the rest.
            #expect(after.count(.uploadPart, .success) - before.count(.uploadPart, .success) == 6)
            #expect(after.count(.completeMultipartUpload, .success) == 1)
            #expect(after.requests[.putObject] == nil, "the original went as one PUT")
            #expect(after.bytesSent - before.bytesSent >= Int64(photo.bytes.count))
        }
        #expect(try await fixture.call { try $0.size(of: path) } == Int64(photo.bytes.count))
        let read = try await fixture.call { try $0.get(path) }
        #expect(read.count == photo.bytes.count)
        #expect(sha256Hex(read) == photo.sha256)

        let again = try await fixture.call { try $0.putOriginal(photo.bytes, sha256: photo.sha256, extension: "jpg", linkingFrom: source) }
        #expect(again == path)
        if fixture.kind == .bucket {
            let last = fixture.statistics()
            #expect(last.count(.uploadPart, .success) == after.count(.uploadPart, .success), "the parts were sent again")
            #expect(last.count(.createMultipartUpload, .success) == 1)
            #expect(last.requests[.putObject] == nil)
        }
    }

    /// A transfer corrupted on the way (the body differs from the `Content-MD5` it was sent
    /// with) is refused by the server with `BadDigest`, a malformed `Content-MD5` with
    /// `InvalidDigest`, neither retried, and no object is left under the key. Sent twice:
    /// through the client's own signer, and by curl (the harness's independent signer).
    static func integrityRefusal(_ fixture: LibraryFixture) async throws {
        let bucket = try #require(fixture.bucket)
        let client = bucket.client
        let photo = SamplePhoto(seed: 40, count: 64_000)
        var flipped = photo.bytes
        flipped[31_999] ^= 0x01
        let corrupted = flipped
        let key = bucket.key(for: Library.originalPath(sha256: photo.sha256, extension: "jpg"))

        func send(md5 contentMD5: String) async -> ObjectStorageError? {
            let call = S3Client.Call(operation: .putObject, method: .PUT, key: key,
                                     headers: [.init("Content-Type", "image/jpeg"), .init("Content-MD5", contentMD5)],
                                     body: .bytes(corrupted), payload: .hashing(corrupted))
            do throws(ObjectStorageError) {
                try await client.perform(call) { (response, context) async throws(ObjectStorageError) in
                    try await client.drain(response, context: context)
                }
                return nil
            } catch {
                return error
            }
        }
        let badDigest = await send(md5: ContentDigest.contentMD5(ContentDigest.md5(photo.bytes)))
        #expect(badDigest?.status == 400)
        #expect(badDigest?.code == "BadDigest", "\(String(describing: badDigest))")
        #expect(badDigest?.isTransient == false)
        #expect(badDigest?.context?.attempts == 1)
        #expect(try await client.head(key: key) == nil)

        let invalid = await send(md5: "bm90IGFuIE1ENQ==")
        #expect(invalid?.status == 400)
        #expect(invalid?.code == "InvalidDigest", "\(String(describing: invalid))")
        #expect(try await client.head(key: key) == nil)

        let gateway = try SharedGateway.gateway.get()
        let curlKey = bucket.key(for: "originals/cu/rl/corrupted.jpg")
        let refused = try await onPlainThread {
            try gateway.signedRequest("PUT", "/\(bucket.bucket)/\(curlKey)", body: Data(corrupted),
                                      headers: ["Content-MD5": ContentDigest.contentMD5(ContentDigest.md5(photo.bytes))])
        }
        #expect(refused.status == 400)
        #expect(refused.text.contains("<Code>BadDigest</Code>"), "\(refused.text)")
        #expect(try await client.head(key: curlKey) == nil)
        #expect(try await onPlainThread { try bucket.list(prefix: "originals/") }.isEmpty)

        // The same bytes with their own checksum go in.
        let path = try await fixture.call { try $0.putOriginal(photo.bytes, sha256: photo.sha256, extension: "jpg", linkingFrom: nil) }
        #expect(try await fixture.call { try $0.get(path) } == photo.bytes)
    }

    /// `presignedGET` gives a URL that serves the object's bytes to a request with no
    /// credentials, and a URL for a missing path is answered 404.
    static func presignedGET(_ fixture: LibraryFixture) async throws {
        let bucket = try #require(fixture.bucket)
        let photo = SamplePhoto(seed: 50, count: 40_000)
        let variant = try await fixture.call { try $0.putVariants([("feed", "jpg", photo.bytes)], sha256: photo.sha256) }[0]
        let url = try bucket.presignedGET(variant, seconds: 300)
        #expect(url.contains("/\(bucket.bucket)/library/variants/feed/"))
        #expect(url.contains("X-Amz-Signature="))
        let output = fixture.scratch + "/presigned.jpg"
        let status = try await onPlainThread { try curlGET(url, to: output) }
        #expect(status == 200)
        #expect(FileManager.default.contents(atPath: output).map { [UInt8]($0) } == photo.bytes)

        let missing = try bucket.presignedGET("variants/feed/00/00/missing.jpg", seconds: 60)
        #expect(try await onPlainThread { try curlGET(missing, to: output) } == 404)
        #expect(throws: ObjectStorageError.self) { try bucket.presignedGET(variant, seconds: 0) }
    }

    /// GETs `url` with curl (no credentials) into `path`; the HTTP status.
    private static func curlGET(_ url: String, to path: String) throws -> Int {
        let process = Process()
        let pipe = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["--silent", "--max-time", "20", "--output", path, "--write-out", "%{http_code}", url]
        process.standardOutput = pipe
        try process.run()
        let answer = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Int(String(decoding: answer, as: UTF8.self)) ?? -1
    }
}
