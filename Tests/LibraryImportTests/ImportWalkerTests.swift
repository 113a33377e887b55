import Foundation
import Testing
@testable import LibraryImport

/// The walk: hidden and system entries, symlinks, loops, Darkroom's own folders.
@Suite("Import: walking folders")
struct ImportWalkerTests {
    final class Tree {
        let root = NSTemporaryDirectory() + "darkroom-walk-" + UUID().uuidString
        let outside = NSTemporaryDirectory() + "darkroom-walk-outside-" + UUID().uuidString
        init() throws {
            let fm = FileManager.default
            for folder in ["lib/b", "lib/a/deep", "lib/@eaDir", "lib/.thumbnails", "lib/library/originals"] {
                try fm.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
            }
            try fm.createDirectory(atPath: outside, withIntermediateDirectories: true)
            for file in ["lib/1.jpg", "lib/.DS_Store", "lib/Thumbs.db", "lib/a/2.jpg", "lib/a/deep/3.jpg", "lib/b/4.jpg",
                         "lib/@eaDir/x.jpg", "lib/.thumbnails/y.jpg", "lib/library/originals/z.jpg", "lib/._1.jpg"] {
                _ = fm.createFile(atPath: root + "/" + file, contents: Data("x".utf8))
            }
            _ = fm.createFile(atPath: outside + "/secret.jpg", contents: Data("x".utf8))
            try fm.createSymbolicLink(atPath: root + "/lib/a/up", withDestinationPath: "..")
            try fm.createSymbolicLink(atPath: root + "/lib/a/self", withDestinationPath: "self")
            try fm.createSymbolicLink(atPath: root + "/lib/a/gone", withDestinationPath: "nowhere.jpg")
            try fm.createSymbolicLink(atPath: root + "/lib/b/out", withDestinationPath: outside)
            try fm.createSymbolicLink(atPath: root + "/lib/b/same.jpg", withDestinationPath: "../1.jpg")
            try fm.createSymbolicLink(atPath: root + "/lib/b/sibling", withDestinationPath: "../a")
        }
        deinit {
            try? FileManager.default.removeItem(atPath: root)
            try? FileManager.default.removeItem(atPath: outside)
        }
    }

    @Test func walksFilesFirstInNameOrderAndSkipsHiddenSystemAndOwnFolders() throws {
        let tree = try Tree()
        let roots = try ImportWalker.roots([tree.root + "/lib"])
        let library = try #require(ImportWalker.realPath(tree.root + "/lib/library"))
        var folders: [ImportFolder] = []
        ImportWalker(roots: roots, excluded: [library]).walk { folders.append($0); return true }
        #expect(folders.map(\.displayPath) == ["lib", "lib/a", "lib/a/deep", "lib/b", "lib/library"])
        #expect(folders.flatMap { f in f.files.map { f.displayPath + "/" + $0 } } == ["lib/1.jpg", "lib/a/2.jpg", "lib/a/deep/3.jpg", "lib/b/4.jpg"])
        #expect(folders[0].hidden == 5, ".DS_Store, ._1.jpg, Thumbs.db, @eaDir, .thumbnails")
        let reasons = Dictionary(uniqueKeysWithValues: folders.flatMap(\.skipped).map { ($0.path, $0.reason) })
        #expect(reasons["lib/a/up"]?.hasPrefix("symlink loop") == true)
        #expect(reasons["lib/a/self"]?.hasPrefix("symlink loop") == true)
        #expect(reasons["lib/a/gone"]?.hasPrefix("broken symlink") == true)
        #expect(reasons["lib/b/out"]?.contains("outside the folders imported") == true)
        #expect(reasons["lib/b/same.jpg"]?.contains("file inside the import") == true)
        #expect(reasons["lib/b/sibling"]?.contains("folder inside the import") == true)
        #expect(reasons["lib/library"]?.contains("Darkroom's own") == true)
    }

    @Test func rootsAreResolvedAndNestedOnesDropped() throws {
        let tree = try Tree()
        let roots = try ImportWalker.roots([tree.root + "/lib/a", tree.root + "/lib", tree.root + "/lib/b/../b", tree.root + "/lib"])
        #expect(roots.count == 1)
        #expect(roots.first?.hasSuffix("/lib") == true)
        #expect(throws: ImportError.self) { try ImportWalker.roots([tree.root + "/lib/1.jpg"]) }
        #expect(throws: ImportError.self) { try ImportWalker.roots([tree.root + "/missing"]) }
    }

    @Test func stoppingEndsTheWalk() throws {
        let tree = try Tree()
        var seen = 0
        ImportWalker(roots: try ImportWalker.roots([tree.root + "/lib"]), excluded: []).walk { _ in
            seen += 1
            return seen < 2
        }
        #expect(seen == 2)
    }

    @Test func systemNamesAreMatchedWithoutCase() {
        for name in [".DS_Store", "Thumbs.db", "THUMBS.DB", "desktop.ini", "@eaDir", "$RECYCLE.BIN", "__MACOSX", ".picasa.ini", "._IMG_1.jpg"] {
            #expect(ImportWalker.isHiddenOrSystem(name), "\(name)")
        }
        for name in ["IMG_1.jpg", "eaDir", "Thumbs", "Photos from 2019"] {
            #expect(!ImportWalker.isHiddenOrSystem(name), "\(name)")
        }
    }
}
