import Foundation

/// The content-addressed store of originals and variants (WK5).
///
/// Originals are kept byte for byte at `originals/ab/cd/<sha256>.<ext>`, variants at
/// `variants/<name>/ab/cd/<sha256>.<ext>`. Every file is written durably (temporary name, fsync,
/// rename). Paths returned are relative to the root, so a library can move.
public struct Library: Sendable {
    /// The library's root directory.
    public let root: String
    /// Where a second copy of every original goes, when configured.
    public let backupRoot: String?

    public init(root: String, backupRoot: String?) throws(FileSystemError) {
        self.root = root
        self.backupRoot = backupRoot
        try FileSystem.makeDirectories(root)
        if let backupRoot { try FileSystem.makeDirectories(backupRoot) }
    }

    /// The relative path of an original.
    public static func originalPath(sha256: String, extension ext: String) -> String {
        "originals/" + shard(sha256) + "/" + sha256 + "." + ext
    }

    /// The relative path of a variant.
    public static func variantPath(sha256: String, variant: String, extension ext: String) -> String {
        "variants/" + variant + "/" + shard(sha256) + "/" + sha256 + "." + ext
    }

    private static func shard(_ sha256: String) -> String {
        let chars = Array(sha256)
        guard chars.count >= 4 else { return "00/00" }
        return String(chars[0..<2]) + "/" + String(chars[2..<4])
    }

    /// The absolute path of a relative library path.
    public func absolute(_ relative: String) -> String {
        root + "/" + relative
    }

    /// Stores bytes at a relative path, durably; a file already there with the same size is kept
    /// (content addressing makes a retry or a duplicate a no-op).
    public func store(_ bytes: [UInt8], at relative: String) throws(FileSystemError) {
        let path = absolute(relative)
        if let existing = FileSystem.status(path), existing.size == Int64(bytes.count) { return }
        try FileSystem.writeDurably(bytes, to: path)
    }

    /// Stores an original, and its backup copy when a backup directory is configured.
    public func storeOriginal(_ bytes: [UInt8], sha256: String, extension ext: String) throws(FileSystemError) -> String {
        let relative = Self.originalPath(sha256: sha256, extension: ext)
        try store(bytes, at: relative)
        if let backupRoot {
            let path = backupRoot + "/" + relative
            if FileSystem.status(path)?.size != Int64(bytes.count) {
                try FileSystem.writeDurably(bytes, to: path)
            }
        }
        return relative
    }

    /// Removes temporary files left by a killed process (see `FileSystem.sweepTemporaries`);
    /// returns how many.
    @discardableResult
    public func sweepTemporaries(olderThan seconds: Double, now: Date = Date()) -> Int {
        FileSystem.sweepTemporaries(under: root, olderThan: seconds, now: now)
            + (backupRoot.map { FileSystem.sweepTemporaries(under: $0, olderThan: seconds, now: now) } ?? 0)
    }
}
