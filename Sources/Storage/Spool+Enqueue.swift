import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Spool {
    /// Copies a photo into `incoming/` the safe way (for scripts and backends): see
    /// `StagedPhoto.publish(name:sidecar:)`. Returns the photo's name in `incoming/`.
    public func enqueue(bytes: [UInt8], name: String, sidecar: [UInt8]?) throws(FileSystemError) -> String {
        let staged = try stage()
        defer { staged.discard() }
        try staged.append(bytes)
        return try staged.publish(name: name, sidecar: sidecar)
    }

    /// Starts a photo in `incoming/` under a hidden temporary name, for bytes that arrive piece
    /// by piece (an upload read from the network): nothing takes it until it is published.
    public func stage() throws(FileSystemError) -> StagedPhoto {
        try StagedPhoto(incoming: incoming)
    }

    /// Removes the folder `stageQueued` made, when nothing was published in it.
    public func removeQueuedFolder(_ token: String) {
        rmdir(queued + "/" + token)
    }

    /// Starts a photo in a new folder of its own under `queued/` instead (`queued/TOKEN`), where
    /// no scan of `incoming/` sees it: for an upload that is admitted to the shared queue by its
    /// own request, published to the staging area and given its job before it is answered.
    /// Published under NAME, its place is `TOKEN/NAME`.
    public func stageQueued() throws(FileSystemError) -> (photo: StagedPhoto, token: String) {
        let token = Self.randomToken(length: 16)
        let folder = queued + "/" + token
        try FileSystem.makeDirectories(folder)
        return (try StagedPhoto(incoming: folder), token)
    }

    /// A name safe to place in `incoming/`: its last path component, never hidden or empty.
    public static func safeFileName(_ name: String) -> String {
        var base = (name as NSString).lastPathComponent
        while base.hasPrefix(".") { base.removeFirst() }
        if base.hasSuffix(".partial") { base = String(base.dropLast(".partial".count)) }
        return base.isEmpty ? "upload" : base
    }
}

/// A photo being written into a spool's `incoming/` under a hidden temporary name: `append` its
/// bytes, then `publish` it (durable and visible) or `discard` it. A process killed before it
/// publishes leaves only a temporary file, which the workers sweep. One caller at a time.
public final class StagedPhoto: @unchecked Sendable {
    // @unchecked: the file descriptor and the counts are used by one task at a time (each call
    // is awaited before the next), as the type's contract says.
    private let incoming: String
    private let path: String
    private var fd: Int32
    /// Whether the temporary file is still there to remove.
    private var staged = true
    /// The bytes appended so far.
    public private(set) var byteCount = 0

    public init(incoming: String) throws(FileSystemError) {
        self.incoming = incoming
        path = FileSystem.temporaryPath(in: incoming)
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .current("create", path) }
    }

    deinit { discard() }

    /// Writes the next bytes of the photo.
    public func append(_ bytes: UnsafeRawBufferPointer) throws(FileSystemError) {
        guard fd >= 0 else { throw FileSystemError(operation: "write", path: path, code: EBADF) }
        try FileSystem.writeAll(bytes, to: fd, path: path)
        byteCount += bytes.count
    }

    /// Writes the next bytes of the photo.
    public func append(_ bytes: [UInt8]) throws(FileSystemError) {
        try FileSystem.withBuffer(of: bytes) { buffer throws(FileSystemError) in try append(buffer) }
    }

    /// Makes the photo durable and visible: it is fsynced, its sidecar (when given) is written
    /// and fsynced under a temporary name, the sidecar is linked into view first, then the
    /// photo, never over an existing file (a taken name gets a number), and the directory is
    /// synced once. When this returns, both survive a crash. Returns the photo's name.
    public func publish(name: String, sidecar: [UInt8]?) throws(FileSystemError) -> String {
        guard fd >= 0 else { throw FileSystemError(operation: "publish", path: path, code: EBADF) }
        guard fsync(fd) == 0 else { throw .current("fsync", path) }
        // Closed before it comes into view: a photo nobody holds open for writing is taken at once.
        close(fd)
        fd = -1
        var sidecarStaging: String?
        if let sidecar {
            let staging = FileSystem.temporaryPath(in: incoming)
            try FileSystem.writeSynced(sidecar, toNew: staging)
            sidecarStaging = staging
        }
        defer { if let sidecarStaging { unlink(sidecarStaging) } }
        let safeName = Spool.safeFileName(name)
        var number = 1
        while true {
            let candidate = number == 1 ? safeName : (FileSystem.numbered(safeName, number) as String)
            number += 1
            let finalPath = incoming + "/" + candidate
            if FileManager.default.fileExists(atPath: finalPath) { continue }
            if let sidecarStaging, link(sidecarStaging, finalPath + ".json") != 0 {
                if errno == EEXIST { continue }
                throw .current("enqueue", finalPath + ".json")
            }
            guard link(path, finalPath) == 0 else {
                let error = FileSystemError.current("enqueue", finalPath)
                if sidecarStaging != nil { unlink(finalPath + ".json") }
                if error.code == EEXIST { continue }
                throw error
            }
            try FileSystem.syncDirectory(incoming)
            discard()
            return candidate
        }
    }

    /// Closes and removes the temporary file (a published photo keeps its name in view).
    public func discard() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
        if staged {
            staged = false
            unlink(path)
        }
    }
}
