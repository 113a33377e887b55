import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What kind of entry a path names (never following a link), so that anything that is not a
/// photo file is refused with its reason instead of being opened, followed or left waiting.
public enum EntryKind: Sendable, Equatable {
    case regular, directory, symbolicLink, fifo, socket, device, missing

    /// The kind of the entry at `path` itself (`lstat`).
    public init(at path: String) {
        self = FileSystem.entryStatus(path)?.kind ?? .missing
    }

    /// The kind of what `path` leads to, following links (`stat`): for a path a person names.
    public init(following path: String) {
        var info = stat()
        self = stat(path, &info) == 0 ? EntryKind(mode: info.st_mode) : .missing
    }

    /// The kind an `lstat` mode names.
    init(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .directory
        case S_IFLNK: self = .symbolicLink
        case S_IFIFO: self = .fifo
        case S_IFSOCK: self = .socket
        default: self = .device
        }
    }

    /// What it is, in a few words.
    public var noun: String {
        switch self {
        case .regular: "a file"
        case .directory: "a directory"
        case .symbolicLink: "a symbolic link"
        case .fifo: "a FIFO (named pipe)"
        case .socket: "a socket"
        case .device: "a device"
        case .missing: "nothing"
        }
    }

    /// Why such an entry in the spool's `incoming/` cannot be a photo; nil for a regular file.
    public var refusal: String? {
        switch self {
        case .regular: return nil
        case .directory: return "a directory named like a photo, not a photo; move its photos into incoming/ themselves"
        case .symbolicLink: return "a symbolic link, not a photo; the spool takes only real files (copy the photo in, not a link to it)"
        case .fifo: return "a FIFO (named pipe), not a photo file; write the photo into a file and rename it in"
        case .socket: return "a socket, not a photo file; write the photo into a file and rename it in"
        case .device: return "a device, not a photo file; copy the photo into a file and rename it in"
        case .missing: return "it vanished before it could be read"
        }
    }
}
