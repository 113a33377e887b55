import BucketStorage
import Crypto
import Foundation
import Logging
import NIOCore
import ObjectStorage
import Storage

/// `darkroom library copy`: every file of a local library (`library.root`) into a bucket, so that
/// the deployment can move to `library.url`.
///
/// What is copied: every file under `originals/` and `variants/`, whether the catalog names it
/// or not (those it does not are counted), and the catalog's paths that the directory lacks are
/// reported as failures unless the bucket already holds them at the catalog's size.
///
/// Resumable and verified: the bucket is listed first, and a file whose object is already there
/// with the same size and checksum (its ETag: the MD5, or the multipart ETag of the same parts)
/// is not sent again. Each file sent is read from disk as it goes (`putFile`: in one request up
/// to the client's multipart threshold, in parts above it), then checked with a HEAD: the
/// object's size and ETag must be the local file's. An ETag that cannot tell (not an MD5) is
/// settled by reading the object back and comparing its MD5. A few files go at once.
public struct LibraryCopy: Sendable {
    /// The local library's directory.
    public let sourceRoot: String
    public let target: BucketLibrary
    /// What the catalog names.
    public let references: LibraryReferences
    /// Files in flight at once.
    public let concurrency: Int
    public let logger: Logger

    public static let defaultConcurrency = 4

    public init(sourceRoot: String, target: BucketLibrary, references: LibraryReferences,
                concurrency: Int = Self.defaultConcurrency, logger: Logger) {
        self.sourceRoot = sourceRoot
        self.target = target
        self.references = references
        self.concurrency = max(1, concurrency)
        self.logger = logger
    }

    /// One path to settle: its local file (when there is one), what the catalog says of it and
    /// what the bucket held when it was listed.
    struct Item: Sendable {
        var path: String
        /// The local file's size; nil when only the catalog names the path.
        var localSize: Int64?
        var reference: LibraryReference?
        var existing: StoredObject?
    }

    /// How one path ended.
    struct Outcome: Sendable {
        enum Kind: Sendable { case copied, alreadyThere, failed }
        var kind: Kind
        var path: String
        var bytes: Int64
        var reason: String? = nil
        /// The object that was there before differed and was written over.
        var replaced = false
        /// Only the catalog names the path: the local library lacks it.
        var missingLocally = false
    }

    /// Copies, `stop` being asked between files (those in flight finish); the summary says
    /// what happened to each. Throws only when the work cannot start: the local library or the
    /// bucket cannot be listed.
    public func run(progress: LibraryCopyProgress, stop: StopRequest) async throws(LibraryMaintenanceError) -> LibraryCopySummary {
        let started = Date()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: sourceRoot, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw LibraryMaintenanceError("the local library \(sourceRoot) (library.root) is not a directory: there is nothing to copy",
                                          category: .configuration)
        }
        let local = try await offload { [sourceRoot] () throws(LibraryMaintenanceError) -> [StoredObject] in DirectoryStore.walk(sourceRoot) }
        let existing: [StoredObject]
        do {
            existing = try await BucketStore(target).listLibrary()
        } catch let error as ObjectStorageError {
            throw LibraryMaintenanceError("cannot list \(target.location): \(error)", isTransient: error.isTransient)
        } catch {
            throw LibraryMaintenanceError("cannot list \(target.location): \(error)")
        }
        let items = Self.plan(local: local, existing: existing, references: references)
        var summary = LibraryCopySummary(source: sourceRoot, target: target.location, objects: items.count,
                                         bytes: items.reduce(0) { $0 + ($1.localSize ?? 0) })
        summary.notReferenced = items.filter { $0.localSize != nil && $0.reference == nil }.count
        summary.missingLocally = items.filter { $0.localSize == nil }.count
        logger.info("library copy", metadata: [
            "from": "\(sourceRoot)", "to": "\(target.location)", "objects": "\(items.count)", "bytes": "\(summary.bytes)",
            "in_bucket_before": "\(existing.count)", "not_referenced": "\(summary.notReferenced)", "concurrency": "\(concurrency)",
        ])
        progress.start(objects: items.count, bytes: summary.bytes)
        await withTaskGroup(of: Outcome.self) { group in
            var next = 0
            while next < items.count && next < concurrency {
                let item = items[next]
                group.addTask { await transfer(item) }
                next += 1
            }
            while let outcome = await group.next() {
                summary.record(outcome)
                progress.advance(bytes: outcome.bytes, failed: outcome.kind == .failed)
                if outcome.kind == .failed {
                    logger.warning("not copied", metadata: ["path": "\(outcome.path)", "reason": "\(outcome.reason ?? "")"])
                } else if outcome.replaced {
                    logger.notice("replaced an object that differed from the local file", metadata: ["path": "\(outcome.path)"])
                }
                if next < items.count && !stop.isRequested {
                    let item = items[next]
                    group.addTask { await transfer(item) }
                    next += 1
                }
            }
        }
        progress.finish()
        summary.close(seconds: Date().timeIntervalSince(started))
        return summary
    }

    /// Every local file and every path the catalog names, by path, with what the bucket holds.
    static func plan(local: [StoredObject], existing: [StoredObject], references: LibraryReferences) -> [Item] {
        let inBucket = Dictionary(existing.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        var items: [String: Item] = [:]
        for file in local {
            items[file.path] = Item(path: file.path, localSize: file.size, reference: references.byPath[file.path], existing: inBucket[file.path])
        }
        for reference in references.all where items[reference.path] == nil && LibraryFolders.holds(reference.path) {
            items[reference.path] = Item(path: reference.path, localSize: nil, reference: reference, existing: inBucket[reference.path])
        }
        return items.values.sorted { $0.path < $1.path }
    }

    /// Settles one path: already there, copied and verified, or failed with its reason.
    func transfer(_ item: Item) async -> Outcome {
        guard let localSize = item.localSize else { return settleMissingLocally(item) }
        let client = target.client
        let key = target.key(for: item.path)
        let file = sourceRoot + "/" + item.path
        do {
            let digest = try await FileDigest.of(file, partSize: client.partSize(forFileOf: Int(localSize)))
            if let existing = item.existing {
                let same = try await holds(digest, size: Int(existing.size), etag: existing.etag ?? "", key: key)
                if same { return Outcome(kind: .alreadyThere, path: item.path, bytes: localSize) }
            }
            _ = try await client.putFile(key: key, path: file, contentType: BucketStore.contentType(of: item.path), skipIfPresent: false)
            guard let written = try await client.head(key: key) else {
                return Outcome(kind: .failed, path: item.path, bytes: localSize,
                               reason: "written, but a HEAD right after finds no object: run the same command again")
            }
            guard try await holds(digest, size: written.size, etag: written.etag, key: key) else {
                return Outcome(kind: .failed, path: item.path, bytes: localSize,
                               reason: "written, but the object does not match the local file (\(written.size) bytes, ETag \(written.etag); "
                                   + "the file has \(digest.size) bytes, MD5 \(ContentDigest.singlePartETag(md5: digest.md5))): run the same command again")
            }
            return Outcome(kind: .copied, path: item.path, bytes: localSize, replaced: item.existing != nil)
        } catch {
            return Outcome(kind: .failed, path: item.path, bytes: localSize, reason: "\(error)")
        }
    }

    /// A path the catalog names that the local library lacks: there only if the bucket already
    /// holds an object of the size the catalog records (nothing local to compare it with).
    func settleMissingLocally(_ item: Item) -> Outcome {
        let what = item.reference.map { "picture \($0.pictureId)'s \($0.what)" } ?? "a picture's file"
        if let existing = item.existing, let reference = item.reference, existing.size == reference.size {
            return Outcome(kind: .alreadyThere, path: item.path, bytes: 0, missingLocally: true)
        }
        return Outcome(kind: .failed, path: item.path, bytes: 0,
                       reason: "\(what) is not in the local library, so there is nothing to copy: `darkroom library check` lists the pictures whose files are missing",
                       missingLocally: true)
    }

    /// Whether the object at `key` (of `size` and `etag`) holds the bytes of `digest`: by its
    /// ETag, else by reading it back.
    func holds(_ digest: FileDigest, size: Int, etag: String, key: String) async throws -> Bool {
        if let same = digest.matches(size: size, etag: etag) { return same }
        return try await readBackMatches(digest, key: key)
    }

    /// Reads the object back as it streams in and compares its size and MD5 with the file's.
    func readBackMatches(_ digest: FileDigest, key: String) async throws -> Bool {
        try await target.client.getStream(key: key) { _, body in
            var md5 = Insecure.MD5()
            var count = 0
            for try await buffer in body {
                buffer.withUnsafeReadableBytes { md5.update(bufferPointer: $0) }
                count += buffer.readableBytes
            }
            return count == digest.size && Array(md5.finalize()) == digest.md5
        }
    }
}

/// A request to stop that a signal handler sets and the work asks between steps.
public final class StopRequest: @unchecked Sendable {
    // @unchecked: `requested` is touched only while `lock` is held.
    private let lock = NSLock()
    private var requested = false

    public init() {}

    public func request() {
        lock.lock()
        requested = true
        lock.unlock()
    }

    public var isRequested: Bool {
        lock.lock()
        defer { lock.unlock() }
        return requested
    }
}
