import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension FileSystem {
    /// Size and modification time (nanoseconds) of a regular file, not following a symlink.
    public static func version(of path: String) -> (size: Int64, modifiedNs: Int64)? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return (Int64(info.st_size), Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
    }

    /// The first `count` bytes of a file (fewer when it is shorter); nil when it cannot be read.
    public static func head(_ path: String, count: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        let n = bytes.withUnsafeMutableBytes { buffer in Glibc.read(fd, buffer.baseAddress, count) }
        guard n >= 0 else { return nil }
        return Array(bytes.prefix(n))
    }

    /// The device number of the file system holding `path`.
    public static func device(of path: String) -> UInt64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return UInt64(info.st_dev)
    }

    /// The device and inode of a file, to tell whether two paths are one file.
    public static func identity(of path: String) -> (device: UInt64, inode: UInt64)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// Hard-links `source` at `path` durably: the source's data is flushed, a temporary link is
    /// made beside `path` and renamed over it, and the folder is flushed. Returns false, having
    /// changed nothing, when the file system cannot link the two (another device, hard links
    /// unsupported or not permitted, too many links); throws on any other failure.
    /// With `mode`, the file's permission bits are set to it first (the file is the caller's).
    public static func linkDurably(_ source: String, to path: String, mode: mode_t? = nil) throws(FileSystemError) -> Bool {
        let directory = (path as NSString).deletingLastPathComponent
        try makeDirectories(directory)
        let fd = open(source, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw .current("open", source) }
        if let mode, fchmod(fd, mode & ~currentUmask) != 0 {
            let error = FileSystemError.current("chmod", source)
            close(fd)
            throw error
        }
        // A library original must survive a crash: the source may have been written moments ago.
        let synced = fsync(fd)
        close(fd)
        guard synced == 0 else { throw .current("fsync", source) }
        // Named after this process, like every temporary file, so that a sweep removes it at
        // once should the process be killed before the rename.
        let temporary = temporaryPath(in: directory)
        guard link(source, temporary) == 0 else {
            if [EXDEV, EPERM, EMLINK, EOPNOTSUPP, ENOTSUP].contains(errno) { return false }
            throw .current("link", temporary)
        }
        guard rename(temporary, path) == 0 else {
            let error = FileSystemError.current("rename", path)
            unlink(temporary)
            throw error
        }
        try syncDirectory(directory)
        return true
    }
}

extension FileSystem {
    /// The process's file-creation mask, read from `/proc/self/status` (changing it to read it
    /// would race with threads creating files); 022 where that cannot be read.
    static let currentUmask: mode_t = {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
              let mask = mode_t(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8) else { return 0o022 }
        return mask
    }()
}
