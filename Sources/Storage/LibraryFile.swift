#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Reads a file of the library for the media route without ever following a symbolic link: each
/// folder below the library's root is opened with `O_NOFOLLOW | O_DIRECTORY` relative to the one
/// before (`openat`), and the file itself with `O_NOFOLLOW`, then checked to be a regular file.
/// The library may sit on a volume that other programs write; a link placed there under a valid
/// name (to `/etc/passwd`, or to a folder elsewhere) is answered as missing, never served. So is
/// a hard link (a file with more than one name, `SharedFileError`): the library writes every
/// file it serves itself, with one name, and a second name is someone's planted link to a file
/// outside it.
public enum LibraryFile {
    /// The file's bytes (empty when `contents` is false), or nil when some component is missing,
    /// is a link, or the file is not a regular file.
    /// - Throws: `SharedFileError` when the file has more than one name (a hard link).
    public static func read(root: String, components: [String], contents: Bool = true) throws(SharedFileError) -> Data? {
        guard !components.isEmpty, components.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && !$0.contains("/") }) else {
            return nil
        }
        var directory = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { return nil }
        for name in components.dropLast() {
            let next = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            close(directory)
            guard next >= 0 else { return nil }
            directory = next
        }
        // O_NONBLOCK: a FIFO placed under a valid name must not hold the thread.
        let fd = openat(directory, components[components.count - 1], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        close(directory)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        guard status.st_nlink <= 1 else { throw SharedFileError(path: components.joined(separator: "/"), links: Int(status.st_nlink)) }
        guard contents else { return Data() }
        return try? FileHandle(fileDescriptor: fd, closeOnDealloc: false).readToEnd() ?? Data()
    }
}

/// A library file refused because it has more than one name (its link count): a hard link
/// planted in the library could make it serve any file of its volume.
public struct SharedFileError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The file's path relative to the library.
    public var path: String
    /// Its link count.
    public var links: Int

    public init(path: String, links: Int) {
        self.path = path
        self.links = links
    }

    public var description: String {
        "\(path) has \(links) names (hard links); the library serves only files it wrote, with one name: check who linked it"
    }
}
