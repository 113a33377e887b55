internal import CRuntime
import Failures
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A file-system failure, classified so that the worker knows whether to retry.
public struct FileSystemError: TransientAwareError, CustomStringConvertible, Sendable, Equatable {
    /// What was being done ("write", "rename", ...).
    public var operation: String
    /// The path it was done to.
    public var path: String
    /// The errno value.
    public var code: Int32

    /// True for conditions that may pass (disk full, quota, too many open files, interrupted I/O).
    public var isTransient: Bool {
        [ENOSPC, EDQUOT, EMFILE, ENFILE, EAGAIN, EINTR, EIO, EBUSY].contains(code)
    }

    /// Always the storage's: the spool's or the library's file system.
    public var category: FailureCategory { .storage }

    public var description: String {
        let reason = String(cString: strerror(code))
        let advice = code == ENOSPC || code == EDQUOT ? "; free space" : ""
        return "cannot \(operation) \(path): \(reason)\(advice)"
    }

    /// The same for a photo's failure reason (its `.error.json`, its job, `status`): the path
    /// without what names this host and process (a temporary file's name, a worker's folder
    /// under `processing/`), which say nothing of the photo and change at every run.
    public var reason: String {
        let reason = String(cString: strerror(code))
        let advice = code == ENOSPC || code == EDQUOT ? "; free space" : ""
        return "cannot \(operation) \(Self.withoutProcess(path)): \(reason)\(advice)"
    }

    /// `path` with a temporary file's name (`.tmp-darkroom-HOST.PID-UUID`) written as
    /// `(temporary file)` and a worker's folder under `processing/` as `(worker)`.
    static func withoutProcess(_ path: String) -> String {
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        return components.indices.map { index in
            let component = components[index]
            if component.hasPrefix(FileSystem.temporaryPrefix) { return "(temporary file)" }
            if index > 0, components[index - 1] == "processing", WorkerIdentity(name: String(component)) != nil { return "(worker)" }
            return String(component)
        }.joined(separator: "/")
    }

    /// The same without the path (which may name the host and process in a temporary name), for
    /// answers to clients: the operation, the reason, and what to do.
    public var publicDescription: String {
        let reason = String(cString: strerror(code))
        let advice = code == ENOSPC || code == EDQUOT ? "; the server's disk is full, try again once space is freed"
            : "; the server's log has the path under this answer's request_id"
        return "cannot \(operation) a file on the server: \(reason)\(advice)"
    }

    public static func current(_ operation: String, _ path: String) -> FileSystemError {
        FileSystemError(operation: operation, path: path, code: errno)
    }
}

/// Small, careful file operations that the spool and the library share.
public enum FileSystem {
    /// Writes `bytes` to `path` durably: a temporary name in the same directory, fsync, rename,
    /// fsync of the directory. A crash leaves either the old state or the whole new file (and at
    /// worst a `.tmp-` file that `sweepTemporaries` removes).
    public static func writeDurably(_ bytes: UnsafeRawBufferPointer, to path: String) throws(FileSystemError) {
        let directory = (path as NSString).deletingLastPathComponent
        try makeDirectories(directory)
        let temporary = temporaryPath(in: directory)
        try writeSynced(bytes, toNew: temporary)
        guard rename(temporary, path) == 0 else {
            let error = FileSystemError.current("rename", path)
            unlink(temporary)
            throw error
        }
        try syncDirectory(directory)
    }

    /// A new temporary name in `directory`, one that `sweepTemporaries` knows as this process's.
    public static func temporaryPath(in directory: String) -> String {
        directory + "/" + temporaryPrefix + WorkerIdentity.current.name + "-" + UUID().uuidString
    }

    /// Creates `path` (never over an existing file), writes `bytes` and fsyncs it; on failure
    /// nothing is left at `path`. Its directory entry is not synced: the caller links or renames
    /// it into view and syncs the directory once.
    public static func writeSynced(_ bytes: UnsafeRawBufferPointer, toNew path: String) throws(FileSystemError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .current("create", path) }
        do throws(FileSystemError) {
            try writeAll(bytes, to: fd, path: path)
            guard fsync(fd) == 0 else { throw FileSystemError.current("fsync", path) }
        } catch {
            close(fd)
            unlink(path)
            throw error
        }
        close(fd)
    }

    /// Writes every byte of `bytes` at the file offset of `fd` (the file at `path`).
    public static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32, path: String) throws(FileSystemError) {
        guard let base = bytes.baseAddress else { return }
        var written = 0
        while written < bytes.count {
            let n = write(fd, base + written, bytes.count - written)
            if n < 0 {
                if errno == EINTR { continue }
                throw .current("write", path)
            }
            written += n
        }
    }

    /// Writes a byte array durably (see `writeDurably(_:to:)`).
    public static func writeDurably(_ bytes: [UInt8], to path: String) throws(FileSystemError) {
        try withBuffer(of: bytes) { buffer throws(FileSystemError) in try writeDurably(buffer, to: path) }
    }

    /// Writes a byte array to a new file and fsyncs it (see `writeSynced(_:toNew:)`).
    public static func writeSynced(_ bytes: [UInt8], toNew path: String) throws(FileSystemError) {
        try withBuffer(of: bytes) { buffer throws(FileSystemError) in try writeSynced(buffer, toNew: path) }
    }

    /// Runs `body` on the bytes of `bytes`, keeping its error's type.
    public static func withBuffer(of bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(FileSystemError) -> Void) throws(FileSystemError) {
        let failure: FileSystemError? = bytes.withUnsafeBytes { buffer in
            do throws(FileSystemError) {
                try body(buffer)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// Flushes a directory's entries (a rename is durable only once its directory is).
    public static func syncDirectory(_ directory: String) throws(FileSystemError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .current("open directory", directory) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .current("fsync directory", directory) }
    }

    /// Creates a directory and its parents when missing.
    /// One mkdir(2) when the parent is there (a worker makes up to ten shard folders a photo),
    /// and the error the kernel gave, not a guess from Foundation's. Each folder made is durable
    /// before this returns: its parent is fsynced. A file later written, fsynced and renamed
    /// into it, its own folder fsynced, is then reachable after a power cut even on a file
    /// system without a journal, where the new folder's entry would otherwise stay unwritten
    /// and the folder end in `lost+found`. A folder already there costs nothing more.
    public static func makeDirectories(_ path: String) throws(FileSystemError) {
        if mkdir(path, 0o777) == 0 {
            try syncParent(of: path)
            return
        }
        switch errno {
        case EEXIST:
            // A directory, or a link to one, is what was asked for; anything else is in the way.
            guard EntryKind(following: path) == .directory else { throw FileSystemError(operation: "create directory", path: path, code: EEXIST) }
        case ENOENT:
            let parent = (path as NSString).deletingLastPathComponent
            guard !parent.isEmpty, parent != path else { throw .current("create directory", path) }
            try makeDirectories(parent)
            if mkdir(path, 0o777) == 0 {
                try syncDirectory(parent)
            } else if !(errno == EEXIST && EntryKind(following: path) == .directory) {
                throw .current("create directory", path)
            }
        default:
            throw .current("create directory", path)
        }
    }

    /// Fsyncs the folder that holds `path` (the working directory for a bare name).
    static func syncParent(of path: String) throws(FileSystemError) {
        let parent = (path as NSString).deletingLastPathComponent
        try syncDirectory(parent.isEmpty ? "." : parent)
    }

    /// Moves `source` to `destination` without ever replacing an existing file: when the name is
    /// taken, a numbered name beside it is used (`IMG_1 (2).jpg`). Returns the path used.
    public static func moveNoReplace(_ source: String, to destination: String) throws(FileSystemError) -> String {
        try makeDirectories((destination as NSString).deletingLastPathComponent)
        var candidate = destination
        var number = 2
        while true {
            if link(source, candidate) == 0 {
                unlink(source)
                return candidate
            }
            // A directory cannot be hard-linked (nor, under fs.protected_hardlinks, another
            // user's file): it is renamed instead, once its new name is seen free.
            if errno == EPERM, EntryKind(at: candidate) == .missing {
                guard rename(source, candidate) == 0 else { throw .current("move to", candidate) }
                return candidate
            }
            // Taken: try the next number (a name taken under EPERM is seen by the check above).
            guard errno == EEXIST || errno == EPERM else { throw .current("move to", candidate) }
            candidate = numbered(destination, number)
            number += 1
        }
    }

    /// `dir/IMG_1.jpg` numbered 2 is `dir/IMG_1 (2).jpg`.
    public static func numbered(_ path: String, _ number: Int) -> String {
        let ns = path as NSString
        let ext = ns.pathExtension
        let stem = ns.deletingPathExtension
        return ext.isEmpty ? "\(stem) (\(number))" : "\(stem) (\(number)).\(ext)"
    }

    /// "-" and a UUID string, at the end of every temporary file's name.
    private static let uuidSuffixLength = 37

    /// The prefix of every temporary file Darkroom writes.
    public static let temporaryPrefix = ".tmp-darkroom-"

    /// Removes temporary files left under `root` by a process killed mid-write: at once when
    /// their writer (named in the file: `.tmp-darkroom-<host>.<pid>-<uuid>`) is known dead,
    /// else only when older than `seconds`, since a live worker sharing the tree may be writing.
    @discardableResult
    public static func sweepTemporaries(under root: String, olderThan seconds: Double, now: Date = Date()) -> Int {
        guard let walker = FileManager.default.enumerator(atPath: root) else { return 0 }
        var removed = 0
        while let relative = walker.nextObject() as? String {
            let name = (relative as NSString).lastPathComponent
            guard name.hasPrefix(temporaryPrefix) else { continue }
            let path = root + "/" + relative
            // "<host>.<pid>-<uuid>": the UUID has a fixed length, the host name may hold dashes.
            let rest = name.dropFirst(temporaryPrefix.count)
            let writer = rest.count > uuidSuffixLength ? WorkerIdentity(name: String(rest.dropLast(uuidSuffixLength))) : nil
            let writerDead = writer?.isKnownDead ?? false
            let old = status(path).map { now.timeIntervalSince1970 - $0.modified > seconds } ?? false
            if (writerDead || old), unlink(path) == 0 { removed += 1 }
        }
        return removed
    }

    /// Size, modification and status-change times of a regular file; nil when it is not one.
    public static func status(_ path: String) -> (size: Int64, modified: Double, changed: Double)? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        let changed = Double(info.st_ctim.tv_sec) + Double(info.st_ctim.tv_nsec) / 1e9
        return (Int64(info.st_size), modified, changed)
    }

    /// The entry at `path` itself, never following a link (`lstat`): its kind, size and times
    /// (seconds since 1970); nil when there is none.
    public static func entryStatus(_ path: String) -> (kind: EntryKind, size: Int64, modified: Double, changed: Double)? {
        entryStatus(rawPath: path)
    }

    /// `entryStatus` of a path given as bytes (a name that is not valid UTF-8).
    static func entryStatus(rawPath path: UnsafePointer<CChar>) -> (kind: EntryKind, size: Int64, modified: Double, changed: Double)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return (EntryKind(mode: info.st_mode), Int64(info.st_size),
                Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9,
                Double(info.st_ctim.tv_sec) + Double(info.st_ctim.tv_nsec) / 1e9)
    }

    /// Whether any process on this machine holds the file at `path` open for writing (asked by
    /// taking and giving back a read lease); nil when the kernel cannot tell: the file is another
    /// user's and this process may not take leases, or its file system (NFS, SMB mounts) does
    /// not support them.
    public static func isOpenForWriting(_ path: String) -> Bool? {
        switch darkroom_is_open_for_writing(path) {
        case 1: true
        case 0: false
        default: nil
        }
    }

    /// Reads a whole regular file. Opened without blocking, so that a FIFO or a device is refused
    /// ("not a regular file") at once instead of waiting for a writer.
    public static func read(_ path: String) throws(FileSystemError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw .current("open", path) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .current("stat", path) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw FileSystemError(operation: "read (not a regular file)", path: path, code: EINVAL)
        }
        return try readAll(fd, upTo: Int(info.st_size), path: path)
    }

    /// Reads from `fd` (the file at `path`) until its end or `count` bytes, whichever is first.
    /// The array is filled straight from the reads, never zeroed first (a photo's megabytes
    /// written twice).
    static func readAll(_ fd: Int32, upTo count: Int, path: String) throws(FileSystemError) -> [UInt8] {
        var failure: FileSystemError?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialised in
            var total = 0
            defer { initialised = failure == nil ? total : 0 }
            guard let base = buffer.baseAddress else { return }
            while total < count {
                let n = Glibc.read(fd, base + total, count - total)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = .current("read", path)
                    return
                }
                if n == 0 { break }
                total += n
            }
        }
        if let failure { throw failure }
        return bytes
    }
}
