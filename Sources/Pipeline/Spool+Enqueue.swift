import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Spool {
    /// Copies a photo into `incoming/` the safe way (for scripts and backends): its sidecar first,
    /// then the photo under a hidden `.partial` name, fsynced, then renamed into view, never over
    /// an existing file. Returns the name it was given in `incoming/`.
    public func enqueue(bytes: [UInt8], name: String, sidecar: [UInt8]?) throws(FileSystemError) -> String {
        let safeName = Self.safeFileName(name)
        var number = 1
        while true {
            let candidate = number == 1 ? safeName : (FileSystem.numbered(safeName, number) as String)
            number += 1
            let finalPath = incoming + "/" + candidate
            if FileManager.default.fileExists(atPath: finalPath) || FileManager.default.fileExists(atPath: finalPath + ".json") {
                continue
            }
            let staging = incoming + "/." + candidate + "." + UUID().uuidString + ".partial"
            try FileSystem.writeDurably(bytes, to: staging)
            if let sidecar {
                let sidecarStaging = staging + ".json.partial"
                try FileSystem.writeDurably(sidecar, to: sidecarStaging)
                guard link(sidecarStaging, finalPath + ".json") == 0 else {
                    unlink(sidecarStaging)
                    unlink(staging)
                    if errno == EEXIST { continue }
                    throw .current("enqueue", finalPath + ".json")
                }
                unlink(sidecarStaging)
            }
            guard link(staging, finalPath) == 0 else {
                let error = FileSystemError.current("enqueue", finalPath)
                unlink(staging)
                if sidecar != nil { unlink(finalPath + ".json") }
                if error.code == EEXIST { continue }
                throw error
            }
            unlink(staging)
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
