import BucketStorage
import Foundation
import ObjectStorage
import Storage
#if canImport(Glibc)
import Glibc
#endif

/// One stored original or variant as `library check` and `library copy` see it.
public struct StoredObject: Sendable, Equatable {
    /// Relative to the library (`originals/...`, `variants/...`).
    public var path: String
    public var size: Int64
    /// When it was last written (a file's modification time, an object's `Last-Modified`);
    /// nil when the store does not say.
    public var modified: Date?
    /// A bucket object's ETag, unquoted; nil for a file.
    public var etag: String?

    public init(path: String, size: Int64, modified: Date?, etag: String? = nil) {
        self.path = path
        self.size = size
        self.modified = modified
        self.etag = etag
    }
}

/// A library store, a directory or a bucket, as maintenance uses it from async code: listed
/// with the times of its files, read, written and cleaned. (`BlobStore` serves the worker's
/// plain threads, and its bucket calls may not be made from a task; this one's may.)
public protocol MaintainedStore: Sendable {
    /// Where it is: a directory, or `s3://bucket/prefix/`.
    var location: String { get }
    /// Every file under `originals/` and `variants/`, temporaries left out, in no set order.
    func listLibrary() async throws -> [StoredObject]
    /// The bytes stored at one path.
    func read(_ relative: String) async throws -> [UInt8]
    /// Stores bytes at a path, durably, in place of whatever is there.
    func write(_ bytes: [UInt8], at relative: String) async throws
    /// Stores the bytes of the local file at `path` at a path (streamed from disk to a bucket).
    func copyFile(_ path: String, to relative: String) async throws
    /// Removes what is stored at a path; nothing when nothing is.
    func remove(_ relative: String) async throws
    /// The uploads in parts begun under the library and neither completed nor aborted (a
    /// process killed while it sent a large original), their keys relative to the library;
    /// none for a directory.
    func unfinishedUploads() async throws -> [UnfinishedUpload]
    /// Aborts one of them: its parts are freed.
    func abort(_ upload: UnfinishedUpload) async throws
}

extension MaintainedStore {
    public func unfinishedUploads() async throws -> [UnfinishedUpload] { [] }
    public func abort(_ upload: UnfinishedUpload) async throws {}
}

/// The two folders of a library, whatever its store.
enum LibraryFolders {
    static let all = ["originals", "variants"]

    /// Whether a relative path lies in one of them.
    static func holds(_ relative: String) -> Bool {
        all.contains { relative.hasPrefix($0 + "/") }
    }
}

/// A library in a local directory (`library.root`).
public struct DirectoryStore: MaintainedStore {
    public let root: String

    public init(root: String) {
        self.root = root
    }

    public var location: String { root }

    func absolute(_ relative: String) -> String { root + "/" + relative }

    public func listLibrary() async throws -> [StoredObject] {
        let root = root
        return try await offload { () throws(LibraryMaintenanceError) -> [StoredObject] in Self.walk(root) }
    }

    /// Every regular file under the two folders (links and temporaries left out), by `lstat`.
    static func walk(_ root: String) -> [StoredObject] {
        var found: [StoredObject] = []
        for folder in LibraryFolders.all {
            let base = root + "/" + folder
            guard let walker = FileManager.default.enumerator(atPath: base) else { continue }
            while let relative = walker.nextObject() as? String {
                guard !(relative as NSString).lastPathComponent.hasPrefix(FileSystem.temporaryPrefix),
                      let entry = FileSystem.entryStatus(base + "/" + relative), entry.kind == .regular else { continue }
                found.append(StoredObject(path: folder + "/" + relative, size: entry.size,
                                          modified: Date(timeIntervalSince1970: entry.modified)))
            }
        }
        return found
    }

    public func read(_ relative: String) async throws -> [UInt8] {
        try FileSystem.read(absolute(relative))
    }

    public func write(_ bytes: [UInt8], at relative: String) async throws {
        try FileSystem.writeDurably(bytes, to: absolute(relative))
    }

    public func copyFile(_ path: String, to relative: String) async throws {
        try FileSystem.writeDurably(try FileSystem.read(path), to: absolute(relative))
    }

    public func remove(_ relative: String) async throws {
        let path = absolute(relative)
        guard unlink(path) == 0 || errno == ENOENT else { throw FileSystemError.current("remove", path) }
    }
}

/// A library in a bucket (`library.url`), through its client's async calls.
public struct BucketStore: MaintainedStore {
    public let bucket: BucketLibrary

    public init(_ bucket: BucketLibrary) {
        self.bucket = bucket
    }

    var client: S3Client { bucket.client }

    public var location: String { bucket.location }

    public func listLibrary() async throws -> [StoredObject] {
        var found: [StoredObject] = []
        for folder in LibraryFolders.all {
            found += try await list(folder: folder + "/")
        }
        return found
    }

    /// Every object under one folder of the library, all pages, with its ETag and time.
    func list(folder: String) async throws(ObjectStorageError) -> [StoredObject] {
        var found: [StoredObject] = []
        var token: String?
        repeat {
            let page = try await client.list(prefix: bucket.key(for: folder), continuationToken: token)
            for object in page.objects {
                // A key ending in `/` is a folder marker that some tools make, not a file.
                guard !object.key.hasSuffix("/"), let relative = bucket.relativePath(ofKey: object.key) else { continue }
                found.append(StoredObject(path: relative, size: Int64(object.size), modified: object.lastModified, etag: object.etag))
            }
            token = page.isTruncated ? page.nextContinuationToken : nil
        } while token != nil
        return found
    }

    public func read(_ relative: String) async throws -> [UInt8] {
        try await client.get(key: bucket.key(for: relative))
    }

    public func write(_ bytes: [UInt8], at relative: String) async throws {
        try await client.put(key: bucket.key(for: relative), bytes: bytes, contentType: Self.contentType(of: relative))
    }

    public func copyFile(_ path: String, to relative: String) async throws {
        _ = try await client.putFile(key: bucket.key(for: relative), path: path, contentType: Self.contentType(of: relative))
    }

    public func remove(_ relative: String) async throws {
        try await client.delete(key: bucket.key(for: relative))
    }

    public func unfinishedUploads() async throws -> [UnfinishedUpload] {
        try await client.unfinishedUploads(prefix: bucket.prefix).compactMap { upload in
            bucket.relativePath(ofKey: upload.key).map { UnfinishedUpload(key: $0, uploadId: upload.uploadId, initiated: upload.initiated) }
        }
    }

    public func abort(_ upload: UnfinishedUpload) async throws {
        try await client.abortMultipartUpload(key: bucket.key(for: upload.key), uploadId: upload.uploadId)
    }

    /// The `Content-Type` of a library path, from its extension, as the worker's puts give it.
    static func contentType(of relative: String) -> String {
        BucketLibrary.contentType(forExtension: (relative as NSString).pathExtension)
    }
}

/// Runs blocking file work (a walk, checksums) on a thread of Dispatch's, off the concurrency
/// pool's few threads, and hands back its result.
func offload<T: Sendable>(_ work: @escaping @Sendable () throws(LibraryMaintenanceError) -> T) async throws(LibraryMaintenanceError) -> T {
    let result: Result<T, LibraryMaintenanceError> = await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(returning: Result { () throws(LibraryMaintenanceError) -> T in try work() })
        }
    }
    return try result.get()
}
