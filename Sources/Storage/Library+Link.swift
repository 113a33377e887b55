import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Library {
    /// The device (file system) holding the library, or nil when it cannot be read.
    public var device: UInt64? {
        FileSystem.device(of: root)
    }

    /// Places an original by hard-linking the file at `source` into the library, durably (a
    /// temporary link, fsync of the source, rename, fsync of the folder), when the spool alone
    /// owns that file (`isOwnedOutright`): else, and when the file system refuses the link
    /// (another device, no hard links, too many links), `bytes` are written as a new file. So an
    /// original never shares its inode with a file someone else can still write: a producer that
    /// hard-linked its photo into `incoming/` and edits it later leaves the library's copy, and
    /// the SHA-256 it is named by, true. A linked original gets the library's own mode (0644).
    /// The backup copy, when configured, is always a real copy. Returns the relative path.
    /// With `sharing` (`import --link` or `--move`: the user asked for one file with two names,
    /// and knows an edit of the source in place changes the original), the file is linked
    /// whoever owns it, and its mode is left as it is.
    public func linkOriginal(from source: String, bytes: [UInt8], sha256: String, extension ext: String,
                             sharing: Bool = false) throws(FileSystemError) -> String {
        let relative = Self.originalPath(sha256: sha256, extension: ext)
        let path = absolute(relative)
        if FileSystem.status(path)?.size != Int64(bytes.count) {
            let linked = sharing ? try FileSystem.linkDurably(source, to: path)
                : Self.isOwnedOutright(source, size: Int64(bytes.count)) ? try FileSystem.linkDurably(source, to: path, mode: Self.fileMode) : false
            if !linked { try FileSystem.writeDurably(bytes, to: path) }
        }
        if let backupRoot {
            let backup = backupRoot + "/" + relative
            if FileSystem.status(backup)?.size != Int64(bytes.count) {
                try FileSystem.writeDurably(bytes, to: backup)
            }
        }
        return relative
    }

    /// The mode of every file the library writes (before the umask).
    public static let fileMode: mode_t = 0o644

    /// Whether the file at `source` (never followed through a link) may become a library original
    /// as it is: a regular file of `size` bytes with no other name (a link count of 1), owned by
    /// this process's user, and writable by neither its group nor others. Anything else (a
    /// producer's hard link, another user's file, a file the group may write) is copied.
    public static func isOwnedOutright(_ source: String, size: Int64) -> Bool {
        var info = stat()
        guard lstat(source, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        return info.st_nlink == 1 && info.st_uid == geteuid() && (info.st_mode & 0o022) == 0 && Int64(info.st_size) == size
    }
}
