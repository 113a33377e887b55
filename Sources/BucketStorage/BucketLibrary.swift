import Foundation
import ObjectStorage
import Storage
#if canImport(Glibc)
import Glibc
#endif

/// The library of originals and variants in an S3-compatible bucket: each original and variant
/// is one object under the address's prefix, at the same relative path as in a local `Library`
/// (`PREFIX` + `originals/ab/cd/<sha256>.<ext>`), so a catalog's paths mean the same in either.
///
/// The worker's threads call it synchronously: every operation runs the client's async calls
/// through `blocking`, so it must be called from a plain thread (never from an event loop or an
/// async task). Keys are content-addressed, so a put of what is already there sends nothing
/// (same size and checksum) and a retried put rewrites nothing. Objects appear whole or not at
/// all: there are no temporaries to sweep. Errors are the client's `ObjectStorageError`, which
/// says whether it is transient (the worker retries those).
public final class BucketLibrary: BlobStore, Sendable {
    /// The client of the bucket; shared with the HTTP media route and `library copy`.
    public let client: S3Client
    /// The key prefix every relative path goes under: empty, or ending with `/`.
    public let prefix: String

    /// A library under `prefix` of the client's bucket (a missing trailing `/` is added). The
    /// library owns the client from then on: call `shutdown` (or `shutdownBlocking`) once done.
    public init(client: S3Client, prefix: String) {
        self.client = client
        self.prefix = Self.normalizedPrefix(prefix)
    }

    /// A library under `prefix` of the bucket `configuration` names, with a client of its own.
    public convenience init(configuration: S3Configuration, prefix: String,
                            statistics: ObjectStorageStatistics = ObjectStorageStatistics()) throws(ObjectStorageError) {
        self.init(client: try S3Client(configuration: configuration, statistics: statistics), prefix: prefix)
    }

    /// The bucket's name.
    public var bucket: String { client.configuration.bucket }

    /// The client's counters of requests and bytes, for metrics.
    public var statistics: ObjectStorageStatistics { client.statistics }

    /// `s3://bucket/prefix`.
    public var location: String { "s3://\(bucket)/\(prefix)" }

    /// The object key of a relative library path.
    public func key(for relative: String) -> String {
        prefix + relative
    }

    /// The relative library path of an object key under the prefix; nil for a key outside it.
    public func relativePath(ofKey key: String) -> String? {
        guard key.hasPrefix(prefix), key.count > prefix.count else { return nil }
        return String(key.dropFirst(prefix.count))
    }

    // MARK: - BlobStore

    /// Puts an original unless an object of the same size and checksum is already at its key.
    /// With `source` (a file holding the same bytes), the file is uploaded from disk instead,
    /// in parts above the client's multipart threshold; a source that cannot be read as a
    /// regular file of `bytes.count` bytes is ignored and `bytes` are sent.
    public func putOriginal(_ bytes: [UInt8], sha256: String, extension ext: String, linkingFrom source: String?, sharing: Bool) throws -> String {
        let relative = Library.originalPath(sha256: sha256, extension: ext)
        let key = key(for: relative)
        let contentType = Self.contentType(forExtension: ext)
        let client = client
        if let source, Self.isRegularFile(source, size: bytes.count) {
            _ = try blocking { () async throws(ObjectStorageError) -> PutOutcome in
                try await client.putFile(key: key, path: source, contentType: contentType, skipIfPresent: true)
            }
        } else {
            _ = try blocking { () async throws(ObjectStorageError) -> PutOutcome in
                try await client.putIfAbsent(key: key, bytes: bytes, contentType: contentType)
            }
        }
        return relative
    }

    /// Puts every variant, concurrently, each unless already there; returns their relative
    /// paths in order. When one fails the others may have been stored: the caller commits
    /// nothing until all are, and a retry rewrites none of them (content-addressed keys).
    public func putVariants(_ variants: [(name: String, extension: String, bytes: [UInt8])], sha256: String) throws -> [String] {
        let paths = variants.map { Library.variantPath(sha256: sha256, variant: $0.name, extension: $0.extension) }
        let uploads = zip(variants, paths).map { (key: key(for: $1), bytes: $0.bytes, contentType: Self.contentType(forExtension: $0.extension)) }
        let client = client
        try blocking { () async throws -> Void in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for upload in uploads {
                    group.addTask {
                        _ = try await client.putIfAbsent(key: upload.key, bytes: upload.bytes, contentType: upload.contentType)
                    }
                }
                try await group.waitForAll()
            }
        }
        return paths
    }

    /// Puts the original and every variant at once, each in one request where it fits in one
    /// (no HEAD first: a photo is stored once, when it is first committed, and a retry rewrites
    /// the same bytes at the same content-addressed keys). An original above the multipart
    /// threshold is sent from its file in parts, unless an object of the same size and checksum
    /// is already there.
    public func putPhoto(original: OriginalBlob, variants: [(name: String, extension: String, bytes: [UInt8])],
                         sha256: String) throws -> (original: String, variants: [String]) {
        let originalPath = Library.originalPath(sha256: sha256, extension: original.fileExtension)
        let paths = variants.map { Library.variantPath(sha256: sha256, variant: $0.name, extension: $0.extension) }
        var uploads = zip(variants, paths).map { (key: key(for: $1), bytes: $0.bytes, contentType: Self.contentType(forExtension: $0.extension)) }
        let originalKey = key(for: originalPath)
        let originalType = Self.contentType(forExtension: original.fileExtension)
        let client = client
        let fromFile = original.bytes.count > client.configuration.multipartThreshold
            ? original.source.flatMap { Self.isRegularFile($0, size: original.bytes.count) ? $0 : nil } : nil
        if fromFile == nil { uploads.insert((key: originalKey, bytes: original.bytes, contentType: originalType), at: 0) }
        let puts = uploads
        try blocking { () async throws -> Void in
            try await withThrowingTaskGroup(of: Void.self) { group in
                if let fromFile {
                    group.addTask {
                        _ = try await client.putFile(key: originalKey, path: fromFile, contentType: originalType, skipIfPresent: true)
                    }
                }
                for upload in puts {
                    group.addTask { _ = try await client.put(key: upload.key, bytes: upload.bytes, contentType: upload.contentType) }
                }
                try await group.waitForAll()
            }
        }
        return (originalPath, paths)
    }

    /// The object's bytes; a missing one throws the client's 404 (`isNotFound`).
    public func get(_ relative: String) throws -> [UInt8] {
        let key = key(for: relative)
        let client = client
        return try blocking { () async throws(ObjectStorageError) -> [UInt8] in try await client.get(key: key) }
    }

    /// The object's size from a HEAD; nil when there is none.
    public func size(of relative: String) throws -> Int64? {
        let key = key(for: relative)
        let client = client
        let info = try blocking { () async throws(ObjectStorageError) -> ObjectInfo? in try await client.head(key: key) }
        return info.map { Int64($0.size) }
    }

    /// Every object under the relative prefix (taken as a folder: `originals` lists
    /// `originals/...`), all pages, with paths relative to the library's prefix.
    public func list(prefix relativePrefix: String) throws -> [StoredBlob] {
        let folder = relativePrefix.isEmpty || relativePrefix.hasSuffix("/") ? relativePrefix : relativePrefix + "/"
        let keyPrefix = key(for: folder)
        let client = client
        let objects = try blocking { () async throws(ObjectStorageError) -> [ListedObject] in
            var objects: [ListedObject] = []
            var token: String?
            repeat {
                let page = try await client.list(prefix: keyPrefix, continuationToken: token)
                objects += page.objects
                token = page.isTruncated ? page.nextContinuationToken : nil
            } while token != nil
            return objects
        }
        return objects.compactMap { object in
            relativePath(ofKey: object.key).map { StoredBlob(path: $0, size: Int64(object.size)) }
        }
    }

    /// Deletes the object; nothing when there is none.
    public func remove(_ relative: String) throws {
        let key = key(for: relative)
        let client = client
        try blocking { () async throws(ObjectStorageError) -> Void in try await client.delete(key: key) }
    }

    /// Nothing to sweep: an object appears whole or not at all (an upload in parts that was
    /// never completed is aborted by the client, or by the bucket's lifecycle rule).
    public func sweepTemporaries(olderThan seconds: Double, now: Date) -> Int {
        0
    }

    // MARK: - Beyond the seam

    /// A URL that lets whoever holds it GET the object at `relative` for `seconds` (1 to
    /// 604,800) without credentials. A bearer credential: never log it.
    public func presignedGET(_ relative: String, seconds: Int) throws(ObjectStorageError) -> String {
        try client.presignedURL(method: "GET", key: key(for: relative), expires: seconds)
    }

    /// `BlobStore`'s presigned URL: a GET of the object, valid `seconds`.
    public func presignedURL(_ relative: String, seconds: Int) throws -> String? {
        try presignedGET(relative, seconds: seconds)
    }

    /// The bytes of `range` only, asked of the bucket (a `Range` request), and the object's size
    /// from a HEAD; nil when there is no object.
    public func read(_ relative: String, range: ClosedRange<Int64>?) throws -> BlobRead? {
        let key = key(for: relative)
        let client = client
        guard let info = try blocking({ () async throws(ObjectStorageError) -> ObjectInfo? in try await client.head(key: key) }) else {
            return nil
        }
        let size = Int64(info.size)
        guard let range else {
            return BlobRead(bytes: try blocking { () async throws(ObjectStorageError) -> [UInt8] in try await client.get(key: key) },
                            totalSize: size)
        }
        guard range.lowerBound < size, size > 0 else { return BlobRead(bytes: [], totalSize: size) }
        let bounded = Int(range.lowerBound)...Int(min(range.upperBound, size - 1))
        let bytes = try blocking { () async throws(ObjectStorageError) -> [UInt8] in try await client.get(key: key, range: bounded) }
        return BlobRead(bytes: bytes, totalSize: size)
    }

    /// Asks the bucket for at most one key under the prefix: throws when it cannot be reached,
    /// the credentials are refused, or the bucket does not exist.
    public func checkReachable() throws(ObjectStorageError) {
        let prefix = prefix
        let client = client
        _ = try blocking { () async throws(ObjectStorageError) -> ListPage in
            try await client.list(prefix: prefix, maxKeys: 1)
        }
    }

    /// Closes the client's connections; call once, with no operation in flight.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    /// `shutdown()` for a plain thread.
    @available(*, noasync, message: "use shutdown() from async code")
    public func shutdownBlocking() throws {
        try client.shutdownBlocking()
    }

    // MARK: - Helpers

    /// The `Content-Type` an object gets from its extension.
    public static func contentType(forExtension ext: String) -> String {
        switch ext.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "heic": "image/heic"
        case "heif": "image/heif"
        case "avif": "image/avif"
        case "webp": "image/webp"
        default: "application/octet-stream"
        }
    }

    /// Empty, or ending with exactly one `/`, without a leading one.
    static func normalizedPrefix(_ prefix: String) -> String {
        let trimmed = String(prefix.drop { $0 == "/" })
        guard !trimmed.isEmpty else { return "" }
        return trimmed.hasSuffix("/") ? trimmed : trimmed + "/"
    }

    /// Whether `path` is a regular file of `size` bytes.
    private static func isRegularFile(_ path: String, size: Int) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return (info.st_mode & S_IFMT) == S_IFREG && Int(info.st_size) == size
    }
}
