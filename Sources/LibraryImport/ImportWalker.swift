import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An entry an import walk passed over, and why (a symlink, a loop, a folder it cannot read).
public struct ImportSkip: Sendable, Codable, Equatable {
    /// The entry, as shown (the root folder's name, then the path below it).
    public var path: String
    /// Why it was passed over, one line.
    public var reason: String

    /// An entry passed over for `reason`.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
}

/// One folder of an imported library, as the walk found it.
struct ImportFolder: Sendable {
    /// Its absolute path.
    var path: String
    /// How it is shown: the root folder's name, then the path below it.
    var displayPath: String
    /// The names of its regular files that are neither hidden nor system files, sorted.
    var files: [String]
    /// Entries passed over: symlinks (never followed), loops, unreadable folders.
    var skipped: [ImportSkip]
    /// Hidden and system entries passed over (`.DS_Store`, `Thumbs.db`, `@eaDir`, ...).
    var hidden: Int
}

/// Walks the folders of an import, depth first in name order, one folder at a time.
///
/// Symlinks are never followed: a link to a file or folder inside the walked trees names
/// something the walk reaches where it lies; a link out of the trees is refused. Each is reported,
/// loops by name. A folder reached twice (a bind mount onto its own parent) is walked once.
/// Hidden entries (a leading dot: `.DS_Store`, `.thumbnails`, `._IMG_1.jpg`) and the system files
/// of NAS boxes, Windows and macOS (`@eaDir`, `Thumbs.db`, `$RECYCLE.BIN`, `__MACOSX`, ...) are
/// counted and skipped, folders with all they hold.
struct ImportWalker: Sendable {
    /// The absolute, symlink-free roots, none inside another.
    let roots: [String]
    /// Folders never walked: Darkroom's own library and spool (absolute, symlink-free).
    let excluded: [String]

    /// System files and folders that are not photos of the library (compared without case).
    static let systemNames: Set<String> = [
        "thumbs.db", "ehthumbs.db", "ehthumbs_vista.db", "desktop.ini", "picasa.ini", "icon\r",
        "@eadir", "@recycle", "@recently-snapshot", "#recycle", "#snapshot", "$recycle.bin",
        "system volume information", "__macosx", "lost+found", "recycler",
    ]

    /// Whether a file or folder name is hidden or a system entry, skipped with all it holds.
    static func isHiddenOrSystem(_ name: String) -> Bool {
        name.hasPrefix(".") || systemNames.contains(name.lowercased())
    }

    /// The real paths of `folders`, duplicates and folders inside another removed, in the order
    /// given. Throws for a path that is not a readable folder.
    static func roots(_ folders: [String]) throws(ImportError) -> [String] {
        var resolved: [String] = []
        for folder in folders {
            guard let real = realPath(folder) else { throw .notAFolder(folder, reason: String(cString: strerror(errno))) }
            var info = stat()
            guard stat(real, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { throw .notAFolder(folder, reason: "not a folder") }
            guard access(real, R_OK | X_OK) == 0 else { throw .notAFolder(folder, reason: String(cString: strerror(errno))) }
            resolved.append(real)
        }
        return resolved.enumerated().filter { index, root in
            !resolved.enumerated().contains { other, candidate in
                (candidate != root && contains(candidate, root)) || (candidate == root && other < index)
            }
        }.map(\.element)
    }

    /// Walks every root, calling `visit` for each folder (files first, then subfolders); stops
    /// when `visit` returns false.
    func walk(_ visit: (ImportFolder) -> Bool) {
        var seen: Set<FileIdentity> = []
        for root in roots {
            let name = (root as NSString).lastPathComponent
            guard walk(root, display: name.isEmpty ? root : name, seen: &seen, visit) else { return }
        }
    }

    private struct FileIdentity: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    private func walk(_ path: String, display: String, seen: inout Set<FileIdentity>, _ visit: (ImportFolder) -> Bool) -> Bool {
        var folder = ImportFolder(path: path, displayPath: display, files: [], skipped: [], hidden: 0)
        if excluded.contains(where: { Self.contains($0, path) }) {
            folder.skipped.append(ImportSkip(path: display, reason: "Darkroom's own library or spool; not imported"))
            return visit(folder)
        }
        var info = stat()
        guard lstat(path, &info) == 0 else { return visit(folder) }
        guard seen.insert(FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))).inserted else {
            folder.skipped.append(ImportSkip(path: display, reason: "folder loop: this folder was already walked (a bind mount?); not walked again"))
            return visit(folder)
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
        } catch {
            folder.skipped.append(ImportSkip(path: display, reason: "cannot read this folder; check its permissions"))
            return visit(folder)
        }
        var subfolders: [String] = []
        for name in names {
            if Self.isHiddenOrSystem(name) {
                folder.hidden += 1
                continue
            }
            let child = path + "/" + name
            var entry = stat()
            guard lstat(child, &entry) == 0 else { continue }
            switch entry.st_mode & S_IFMT {
            case S_IFDIR: subfolders.append(name)
            case S_IFREG: folder.files.append(name)
            case S_IFLNK: folder.skipped.append(ImportSkip(path: display + "/" + name, reason: symlinkReason(child, in: path)))
            default: folder.skipped.append(ImportSkip(path: display + "/" + name, reason: "not a regular file (a device, socket or pipe)"))
            }
        }
        guard visit(folder) else { return false }
        for name in subfolders {
            guard walk(path + "/" + name, display: display + "/" + name, seen: &seen, visit) else { return false }
        }
        return true
    }

    /// Why a symlink is not followed: a loop, a dangling link, a link out of the trees, or a link
    /// to something the walk reaches where it lies.
    private func symlinkReason(_ link: String, in folder: String) -> String {
        guard let target = Self.realPath(link) else {
            return errno == ELOOP ? "symlink loop (it resolves to itself); not followed"
                : "broken symlink (its target does not exist); not followed"
        }
        guard roots.contains(where: { Self.contains($0, target) }) else {
            return "symlink to \(target), outside the folders imported; not followed"
        }
        var info = stat()
        let isFolder = stat(target, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
        if isFolder && Self.contains(target, folder) {
            return "symlink loop (it points to a folder that contains it); not followed"
        }
        return isFolder ? "symlink to a folder inside the import; not followed (its photos are imported where they lie)"
            : "symlink to a file inside the import; not followed (the file is imported where it lies)"
    }

    /// Whether `path` is `folder` or lies below it.
    static func contains(_ folder: String, _ path: String) -> Bool {
        path == folder || path.hasPrefix(folder.hasSuffix("/") ? folder : folder + "/")
    }

    /// The absolute path with every symlink resolved; nil (with errno set) when it cannot be.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
