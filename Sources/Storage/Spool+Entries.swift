import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Spool {
    /// One entry found under `incoming/`.
    struct IncomingEntry {
        /// Its path relative to `incoming/`.
        var relative: String
        var kind: EntryKind
        /// Seconds since 1970 of its last change (the later of mtime and ctime, which a copier
        /// that keeps times cannot set), read without following a link.
        var changed: Double
    }

    /// Photo file extensions (see `isRefusedDirectory`).
    private static let photoExtensions: Set<String> = ["jpg", "jpeg", "png", "heic", "heif", "avif"]

    /// Every candidate entry under `incoming/`, read with `readdir` so that no name is lost. With
    /// `sanitizing`, a name that is not valid UTF-8 or holds control characters (newlines) is
    /// first renamed to an escaped one (each such byte as `%XX`), so that it can be processed,
    /// logged and failed like any other; without it such an entry is still counted.
    func incomingEntries(sanitizing: Bool) -> [IncomingEntry] {
        var found: [IncomingEntry] = []
        walk(directory: incoming, relative: "", sanitizing: sanitizing, into: &found)
        return found
    }

    private func walk(directory: String, relative: String, sanitizing: Bool, into found: inout [IncomingEntry]) {
        guard let stream = opendir(directory) else { return }
        defer { closedir(stream) }
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                Array(raw.prefix { $0 != 0 })
            }
            if name == Array(".".utf8) || name == Array("..".utf8) { continue }
            names.append(name)
        }
        for bytes in names {
            var name = String(validating: bytes, as: UTF8.self)
            // A rename sets the change time: a renamed entry keeps the one it had before.
            var changedBefore: Double?
            if name == nil || bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
                // Each byte escaped takes three: shortened when it no longer fits in a name.
                let escaped = Self.fittingName(Self.escapedName(bytes))
                if sanitizing, let placed = renameRaw(in: directory, from: bytes, to: escaped) {
                    name = placed.name
                    changedBefore = placed.changed
                } else {
                    // Counted (status sees it) but not offered until a worker renames it.
                    found.append(IncomingEntry(relative: relative + escaped, kind: .missing, changed: 0))
                    continue
                }
            }
            guard let name else { continue }
            let child = relative + name
            guard Self.isCandidate(child) else { continue }
            let path = directory + "/" + name
            guard let entry = FileSystem.entryStatus(path) else { continue }
            let kind = entry.kind
            let changed = changedBefore ?? max(entry.modified, entry.changed)
            if kind == .directory {
                let before = found.count
                walk(directory: path, relative: child + "/", sanitizing: sanitizing, into: &found)
                if found.count == before, Self.isRefusedDirectory(path) {
                    found.append(IncomingEntry(relative: child, kind: kind, changed: changed))
                }
                continue
            }
            found.append(IncomingEntry(relative: child, kind: kind, changed: changed))
        }
    }

    /// Whether `path` is an empty directory with a photo's extension: a producer surely meant a
    /// photo, so it is refused into `failed/` like any other entry that is not one. Other
    /// directories are folders to walk.
    static func isRefusedDirectory(_ path: String) -> Bool {
        guard photoExtensions.contains((path as NSString).pathExtension.lowercased()),
              let contents = try? FileManager.default.contentsOfDirectory(atPath: path) else { return false }
        return contents.isEmpty
    }

    /// `bytes` as a valid, printable name: control bytes and `%` written as `%XX`, and in a name
    /// that is not valid UTF-8 every byte from 0x80 up as well.
    static func escapedName(_ bytes: [UInt8]) -> String {
        let valid = String(validating: bytes, as: UTF8.self) != nil
        var out: [UInt8] = []
        for byte in bytes {
            if byte < 0x20 || byte == 0x7F || byte == 0x25 || (!valid && byte >= 0x80) {
                out += Array(String(format: "%%%02X", byte).utf8)
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Renames the raw name `from` in `directory` to `to` (numbered when taken): the final name,
    /// and the later of the entry's modification and change times before the rename.
    private func renameRaw(in directory: String, from: [UInt8], to: String) -> (name: String, changed: Double)? {
        let source = (Array(directory.utf8) + [0x2F] + from + [0]).map { CChar(bitPattern: $0) }
        guard let before = FileSystem.entryStatus(rawPath: source) else { return nil }
        let changed = max(before.modified, before.changed)
        var candidate = to
        var number = 2
        while EntryKind(at: directory + "/" + candidate) != .missing {
            candidate = (FileSystem.numbered(directory + "/" + to, number) as NSString).lastPathComponent
            number += 1
        }
        let target = directory + "/" + candidate
        return rename(source, target) == 0 ? (candidate, changed) : nil
    }
}
