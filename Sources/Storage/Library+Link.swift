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
    /// temporary link, fsync of the source, rename, fsync of the folder). Falls back to writing
    /// `bytes` when the file system refuses the link (another device, no hard links, too many
    /// links). The backup copy, when configured, is always a real copy. Returns the relative path.
    public func linkOriginal(from source: String, bytes: [UInt8], sha256: String, extension ext: String) throws(FileSystemError) -> String {
        let relative = Self.originalPath(sha256: sha256, extension: ext)
        let path = absolute(relative)
        if FileSystem.status(path)?.size != Int64(bytes.count) {
            if !(try FileSystem.linkDurably(source, to: path)) {
                try FileSystem.writeDurably(bytes, to: path)
            }
        }
        if let backupRoot {
            let backup = backupRoot + "/" + relative
            if FileSystem.status(backup)?.size != Int64(bytes.count) {
                try FileSystem.writeDurably(bytes, to: backup)
            }
        }
        return relative
    }
}
