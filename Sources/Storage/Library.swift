internal import CRuntime
import Foundation

/// The content-addressed store of originals and variants.
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

    /// Stores bytes at a relative path, durably (see `store(_:)`).
    public func store(_ bytes: [UInt8], at relative: String) throws(FileSystemError) {
        try store([(bytes, relative)])
    }

    /// Stores files at relative paths, durably; a file already there with the same size is kept
    /// (content addressing makes a retry or a duplicate a no-op). Every other one is written
    /// under a temporary name and its writeback started, then each is fsynced, renamed into
    /// place, and each directory synced. Written together, they share the journal commits that one
    /// by one would each cost (four variants: about two commits instead of eight), which leaves
    /// the disk to the spool's uploads sooner.
    public func store(_ files: [(bytes: [UInt8], relative: String)]) throws(FileSystemError) {
        var staged: [(temporary: String, path: String, fd: Int32)] = []
        defer {
            for file in staged {
                if file.fd >= 0 { close(file.fd) }
                unlink(file.temporary)
            }
        }
        for file in files {
            let path = absolute(file.relative)
            if let existing = FileSystem.status(path), existing.size == Int64(file.bytes.count) { continue }
            let directory = (path as NSString).deletingLastPathComponent
            let temporary = FileSystem.temporaryPath(in: directory)
            // The shard folders are made when the first open finds them missing.
            var fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if fd < 0 && errno == ENOENT {
                try FileSystem.makeDirectories(directory)
                fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            }
            guard fd >= 0 else { throw .current("create", temporary) }
            staged.append((temporary, path, fd))
            try FileSystem.withBuffer(of: file.bytes) { buffer throws(FileSystemError) in try FileSystem.writeAll(buffer, to: fd, path: temporary) }
            _ = darkroom_start_writeback(fd)
        }
        for index in staged.indices {
            guard fsync(staged[index].fd) == 0 else { throw .current("fsync", staged[index].temporary) }
            close(staged[index].fd)
            staged[index].fd = -1
        }
        var directories: [String] = []
        for file in staged {
            guard rename(file.temporary, file.path) == 0 else { throw .current("rename", file.path) }
            let directory = (file.path as NSString).deletingLastPathComponent
            if !directories.contains(directory) { directories.append(directory) }
        }
        staged.removeAll()
        for directory in directories { try FileSystem.syncDirectory(directory) }
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
