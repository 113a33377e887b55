import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The library as photo processing sees it: originals and variants put and read by content
/// address (the SHA-256 of the original). The local `Library` is the first implementation; a
/// shared or object store plugs in here without the worker changing.
///
/// Every store keeps the same relative paths (`originals/ab/cd/<sha256>.<ext>`,
/// `variants/<name>/ab/cd/<sha256>.<ext>`), so a catalog's paths mean the same on any of them.
/// Errors carry their category and whether trying again may help (`TransientAwareError`).
public protocol BlobStore: Sendable {
    /// Where the store is, for logs and `status` (a directory, or `s3://bucket/prefix`).
    var location: String { get }
    /// Puts an original durably; returns its relative path. With `source`, the store may
    /// hard-link that file instead of writing `bytes` again: when the spool alone owns it, or,
    /// with `sharing`, whenever it can (the user asked the library to share the source's file:
    /// `import --link` or `--move`).
    func putOriginal(_ bytes: [UInt8], sha256: String, extension ext: String, linkingFrom source: String?, sharing: Bool) throws -> String
    /// Puts a photo's variants durably, together; returns their relative paths, in order.
    func putVariants(_ variants: [(name: String, extension: String, bytes: [UInt8])], sha256: String) throws -> [String]
    /// Puts a photo's original and its variants durably, as `putOriginal` and `putVariants`
    /// would; returns the original's path and the variants' paths in order. A store may put
    /// them all at once. When it throws, some may be stored: the caller commits nothing, and
    /// a retry finds the same content-addressed paths.
    func putPhoto(original: OriginalBlob, variants: [(name: String, extension: String, bytes: [UInt8])],
                  sha256: String) throws -> (original: String, variants: [String])
    /// The bytes stored at a relative path.
    func get(_ relative: String) throws -> [UInt8]
    /// The size of what is stored at a relative path; nil when nothing is.
    func size(of relative: String) throws -> Int64?
    /// Every stored path under a relative prefix (`originals/`, `variants/`), with its size, in
    /// no set order; temporaries are not listed.
    func list(prefix: String) throws -> [StoredBlob]
    /// Removes what is stored at a relative path; nothing when there is nothing.
    func remove(_ relative: String) throws
    /// Removes temporaries left by writers that died; how many.
    func sweepTemporaries(olderThan seconds: Double, now: Date) -> Int
    /// What a client fetching a file gets: the bytes of `range` (all of them without one) and
    /// the whole file's size; nil when nothing is stored there. A range past the end is clipped
    /// to it; one that starts past the end gives no bytes.
    func read(_ relative: String, range: ClosedRange<Int64>?) throws -> BlobRead?
    /// A URL that lets anyone holding it GET the file for `seconds`, without credentials; nil
    /// for a store that cannot make one (a directory).
    func presignedURL(_ relative: String, seconds: Int) throws -> String?
}

/// Bytes of a stored file read for a client, and the whole file's size.
public struct BlobRead: Sendable, Equatable {
    public var bytes: [UInt8]
    public var totalSize: Int64

    public init(bytes: [UInt8], totalSize: Int64) {
        self.bytes = bytes
        self.totalSize = totalSize
    }
}

/// A photo's original as it is handed to a store: its bytes, its file's extension, and the
/// file holding the same bytes that the store may link or read instead (see `putOriginal`).
public struct OriginalBlob: Sendable {
    public var bytes: [UInt8]
    public var fileExtension: String
    public var source: String?
    public var sharing: Bool

    public init(bytes: [UInt8], fileExtension: String, source: String?, sharing: Bool) {
        self.bytes = bytes
        self.fileExtension = fileExtension
        self.source = source
        self.sharing = sharing
    }
}

extension BlobStore {
    /// The original, then the variants: one after the other.
    public func putPhoto(original: OriginalBlob, variants: [(name: String, extension: String, bytes: [UInt8])],
                         sha256: String) throws -> (original: String, variants: [String]) {
        let path = try putOriginal(original.bytes, sha256: sha256, extension: original.fileExtension,
                                   linkingFrom: original.source, sharing: original.sharing)
        return (path, try putVariants(variants, sha256: sha256))
    }

    /// `putOriginal` linking only a file the spool alone owns.
    public func putOriginal(_ bytes: [UInt8], sha256: String, extension ext: String, linkingFrom source: String?) throws -> String {
        try putOriginal(bytes, sha256: sha256, extension: ext, linkingFrom: source, sharing: false)
    }

    /// The whole file, then the range of it: for stores whose files are small or whole reads cheap.
    public func read(_ relative: String, range: ClosedRange<Int64>?) throws -> BlobRead? {
        guard try size(of: relative) != nil else { return nil }
        return BlobRead.slice(try get(relative), range)
    }

    public func presignedURL(_ relative: String, seconds: Int) throws -> String? { nil }
}

extension BlobRead {
    /// `range` of `bytes` (clipped to their end), with their whole size.
    public static func slice(_ bytes: [UInt8], _ range: ClosedRange<Int64>?) -> BlobRead {
        guard let range else { return BlobRead(bytes: bytes, totalSize: Int64(bytes.count)) }
        let start = Int(min(range.lowerBound, Int64(bytes.count)))
        let end = Int(min(range.upperBound + 1, Int64(bytes.count)))
        return BlobRead(bytes: Array(bytes[start..<max(start, end)]), totalSize: Int64(bytes.count))
    }
}

/// One stored original or variant: its relative path and size.
public struct StoredBlob: Sendable, Hashable {
    public var path: String
    public var size: Int64

    public init(path: String, size: Int64) {
        self.path = path
        self.size = size
    }
}

extension Library: BlobStore {
    public var location: String { root }

    public func putOriginal(_ bytes: [UInt8], sha256: String, extension ext: String, linkingFrom source: String?, sharing: Bool) throws -> String {
        guard let source else { return try storeOriginal(bytes, sha256: sha256, extension: ext) }
        return try linkOriginal(from: source, bytes: bytes, sha256: sha256, extension: ext, sharing: sharing)
    }

    public func putVariants(_ variants: [(name: String, extension: String, bytes: [UInt8])], sha256: String) throws -> [String] {
        let paths = variants.map { Self.variantPath(sha256: sha256, variant: $0.name, extension: $0.extension) }
        try store(zip(variants, paths).map { (bytes: $0.bytes, relative: $1) })
        return paths
    }

    public func get(_ relative: String) throws -> [UInt8] {
        try FileSystem.read(absolute(relative))
    }

    public func size(of relative: String) throws -> Int64? {
        guard let entry = FileSystem.entryStatus(absolute(relative)), entry.kind == .regular else { return nil }
        return entry.size
    }

    public func list(prefix: String) throws -> [StoredBlob] {
        let base = absolute(prefix.hasSuffix("/") ? String(prefix.dropLast()) : prefix)
        guard let walker = FileManager.default.enumerator(atPath: base) else { return [] }
        var found: [StoredBlob] = []
        let start = prefix.hasSuffix("/") || prefix.isEmpty ? prefix : prefix + "/"
        while let relative = walker.nextObject() as? String {
            guard !(relative as NSString).lastPathComponent.hasPrefix(FileSystem.temporaryPrefix),
                  let entry = FileSystem.entryStatus(base + "/" + relative), entry.kind == .regular else { continue }
            found.append(StoredBlob(path: start + relative, size: entry.size))
        }
        return found
    }

    /// Read without following a link at any level (`LibraryFile`): a link planted in the library
    /// is never served.
    public func read(_ relative: String, range: ClosedRange<Int64>?) throws -> BlobRead? {
        let components = relative.split(separator: "/").map(String.init)
        guard let data = try LibraryFile.read(root: root, components: components) else { return nil }
        return BlobRead.slice([UInt8](data), range)
    }

    public func remove(_ relative: String) throws {
        guard unlink(absolute(relative)) == 0 || errno == ENOENT else { throw FileSystemError.current("remove", absolute(relative)) }
    }
}
