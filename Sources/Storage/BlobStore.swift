import Foundation

/// The library as photo processing sees it: originals and variants put and read by content
/// address (the SHA-256 of the original). The local `Library` is the first implementation; a
/// shared or object store plugs in here without the worker changing.
public protocol BlobStore: Sendable {
    /// Puts an original durably; returns its relative path. With `source`, the store may
    /// hard-link that file instead of writing `bytes` again.
    func putOriginal(_ bytes: [UInt8], sha256: String, extension ext: String, linkingFrom source: String?) throws(FileSystemError) -> String
    /// Puts a photo's variants durably, together; returns their relative paths, in order.
    func putVariants(_ variants: [(name: String, extension: String, bytes: [UInt8])], sha256: String) throws(FileSystemError) -> [String]
    /// The bytes stored at a relative path.
    func get(_ relative: String) throws(FileSystemError) -> [UInt8]
    /// Removes temporaries left by writers that died; how many.
    func sweepTemporaries(olderThan seconds: Double, now: Date) -> Int
}

extension Library: BlobStore {
    public func putOriginal(_ bytes: [UInt8], sha256: String, extension ext: String, linkingFrom source: String?) throws(FileSystemError) -> String {
        guard let source else { return try storeOriginal(bytes, sha256: sha256, extension: ext) }
        return try linkOriginal(from: source, bytes: bytes, sha256: sha256, extension: ext)
    }

    public func putVariants(_ variants: [(name: String, extension: String, bytes: [UInt8])], sha256: String) throws(FileSystemError) -> [String] {
        let paths = variants.map { Self.variantPath(sha256: sha256, variant: $0.name, extension: $0.extension) }
        try store(zip(variants, paths).map { (bytes: $0.bytes, relative: $1) })
        return paths
    }

    public func get(_ relative: String) throws(FileSystemError) -> [UInt8] {
        try FileSystem.read(absolute(relative))
    }
}
