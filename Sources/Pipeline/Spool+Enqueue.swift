import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Spool {
    /// Copies a photo into `incoming/` the safe way (for scripts and backends): the photo and its
    /// sidecar are written and fsynced under hidden temporary names, the sidecar is linked into
    /// view first, then the photo, never over an existing file (a taken name gets a number), and
    /// the directory is synced once. When this returns, both survive a crash; a crash before
    /// leaves only temporary files, which the workers sweep. Returns the photo's name in `incoming/`.
    public func enqueue(bytes: [UInt8], name: String, sidecar: [UInt8]?) throws(FileSystemError) -> String {
        let photoStaging = FileSystem.temporaryPath(in: incoming)
        try FileSystem.writeSynced(bytes, toNew: photoStaging)
        defer { unlink(photoStaging) }
        var sidecarStaging: String?
        if let sidecar {
            let path = FileSystem.temporaryPath(in: incoming)
            try FileSystem.writeSynced(sidecar, toNew: path)
            sidecarStaging = path
        }
        defer { if let sidecarStaging { unlink(sidecarStaging) } }
        let safeName = Self.safeFileName(name)
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
            guard link(photoStaging, finalPath) == 0 else {
                let error = FileSystemError.current("enqueue", finalPath)
                if sidecarStaging != nil { unlink(finalPath + ".json") }
                if error.code == EEXIST { continue }
                throw error
            }
            try FileSystem.syncDirectory(incoming)
            return candidate
        }
    }

    /// A name safe to place in `incoming/`: its last path component, never hidden or empty.
    static func safeFileName(_ name: String) -> String {
        var base = (name as NSString).lastPathComponent
        while base.hasPrefix(".") { base.removeFirst() }
        if base.hasSuffix(".partial") { base = String(base.dropLast(".partial".count)) }
        return base.isEmpty ? "upload" : base
    }
}
