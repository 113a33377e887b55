import Failures
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A file refused before it was read: larger than the limit its kind may have (a photo above
/// `imaging.max_file_bytes`, a sidecar above `Sidecar.maxBytes`). Its size is the file's own,
/// read with `fstat` from the open file, never from its bytes.
public struct FileTooLargeError: CategorizedError, CustomStringConvertible, Sendable, Equatable {
    /// The path opened.
    public var path: String
    /// The file's size in bytes.
    public var size: Int64
    /// The most bytes that may be read.
    public var limit: Int64

    public init(path: String, size: Int64, limit: Int64) {
        self.path = path
        self.size = size
        self.limit = limit
    }

    /// Above a limit: a possible bomb, never a fault of the storage.
    public var category: FailureCategory { .tooLarge }

    public var description: String {
        "\((path as NSString).lastPathComponent) is \(size) bytes, more than the \(limit) that may be read"
    }
}

/// A file refused because it is a symbolic link: the spool and the library never follow one.
public struct FollowedLinkError: CategorizedError, CustomStringConvertible, Sendable, Equatable {
    /// The path opened.
    public var path: String

    public init(path: String) {
        self.path = path
    }

    public var category: FailureCategory { .badInput }

    public var description: String {
        "\((path as NSString).lastPathComponent) is a symbolic link, which is never followed; put the file itself in its place"
    }
}

extension FileSystem {
    /// Reads a whole regular file of at most `limit` bytes, without following a link at its last
    /// component (`O_NOFOLLOW`) and without blocking on a FIFO or a device. The size is taken
    /// from the open file (`fstat`) before any byte is read or any memory allocated: a 40 GiB
    /// sparse file is refused at once. A file that grows while it is read is cut at `limit + 1`
    /// bytes and refused too.
    /// - Throws: `FileTooLargeError` above the limit, `FollowedLinkError` for a link,
    ///   `FileSystemError` for anything else.
    public static func read(_ path: String, atMost limit: Int64) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        guard fd >= 0 else {
            if errno == ELOOP, EntryKind(at: path) == .symbolicLink { throw FollowedLinkError(path: path) }
            throw FileSystemError.current("open", path)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileSystemError.current("stat", path) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw FileSystemError(operation: "read (not a regular file)", path: path, code: EINVAL)
        }
        let size = Int64(info.st_size)
        guard size <= limit else { throw FileTooLargeError(path: path, size: size, limit: limit) }
        // One byte more than the size, to see a file that grew since: refused like a large one.
        let bytes = try readAll(fd, upTo: Int(size + 1), path: path)
        if Int64(bytes.count) > limit { throw FileTooLargeError(path: path, size: Int64(bytes.count), limit: limit) }
        return bytes
    }
}
