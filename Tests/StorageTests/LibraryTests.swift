import Foundation
import Testing
@testable import Storage

@Suite("Content-addressed library")
struct LibraryTests {
    let space = TemporaryDirectory()

    @Test func originalsAreStoredByteForByteUnderTheirHashWithABackup() throws {
        let library = try Library(root: space.path + "/library", backupRoot: space.path + "/backup")
        let sha = String(repeating: "ab", count: 32)
        let bytes: [UInt8] = (0..<1000).map { UInt8($0 % 251) }
        let relative = try library.storeOriginal(bytes, sha256: sha, extension: "jpg")
        #expect(relative == "originals/ab/ab/\(sha).jpg")
        #expect(try FileSystem.read(library.absolute(relative)) == bytes)
        #expect(try FileSystem.read(space.path + "/backup/" + relative) == bytes)
        // Storing again is a no-op, not a second copy.
        #expect(try library.storeOriginal(bytes, sha256: sha, extension: "jpg") == relative)
    }

    @Test func severalFilesAreStoredTogetherByteForByteAndOneInPlaceIsKept() throws {
        let library = try Library(root: space.path + "/library", backupRoot: nil)
        let sha = String(repeating: "cd", count: 32)
        let files = ["thumb", "preview", "mobile", "feed"].enumerated().map { index, name in
            (bytes: (0..<(1000 * (index + 1))).map { UInt8(truncatingIfNeeded: $0 &* (index + 3)) },
             relative: Library.variantPath(sha256: sha, variant: name, extension: "jpg"))
        }
        // One of them is already there (a retry): it is kept, not written again.
        try library.store(files[1].bytes, at: files[1].relative)
        let before = try #require(FileSystem.status(library.absolute(files[1].relative)))
        try library.store(files)
        for file in files { #expect(try FileSystem.read(library.absolute(file.relative)) == file.bytes, "\(file.relative)") }
        #expect(FileSystem.status(library.absolute(files[1].relative))?.changed == before.changed)
        let temporaries = (FileManager.default.subpaths(atPath: library.root) ?? []).filter { ($0 as NSString).lastPathComponent.hasPrefix(".") }
        #expect(temporaries.isEmpty)
    }

    @Test func aFailedStoreOfSeveralFilesLeavesNoTemporaryFile() throws {
        let library = try Library(root: space.path + "/library", backupRoot: nil)
        // A file where the second one's directory must go: its directory cannot be made.
        try FileSystem.makeDirectories(library.root + "/variants")
        _ = FileManager.default.createFile(atPath: library.root + "/variants/preview", contents: Data("in the way".utf8))
        let sha = String(repeating: "ef", count: 32)
        let files = [(bytes: [UInt8](repeating: 1, count: 100), relative: Library.variantPath(sha256: sha, variant: "thumb", extension: "jpg")),
                     (bytes: [UInt8](repeating: 2, count: 100), relative: Library.variantPath(sha256: sha, variant: "preview", extension: "jpg"))]
        #expect(throws: FileSystemError.self) { try library.store(files) }
        let left = (FileManager.default.subpaths(atPath: library.root) ?? []).filter { ($0 as NSString).lastPathComponent.hasPrefix(".") || $0.hasSuffix(".jpg") }
        #expect(left.isEmpty, "\(left)")
    }

    @Test func variantPathsAreRelativeAndPerVariant() {
        #expect(Library.variantPath(sha256: "0123456789", variant: "thumb", extension: "jpg") == "variants/thumb/01/23/0123456789.jpg")
    }

    @Test func temporariesOfADeadWriterAreSweptAndALiveWritersAreSpared() throws {
        let library = try Library(root: space.path + "/library", backupRoot: nil)
        let folder = space.path + "/library/originals/aa/bb/"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // A process id that cannot be running: pid_max is far below Int32.max.
        let dead = WorkerIdentity(host: WorkerIdentity.current.host, pid: Int32.max - 1)
        let stray = folder + FileSystem.temporaryPrefix + dead.name + "-" + UUID().uuidString
        let live = folder + FileSystem.temporaryPrefix + WorkerIdentity(host: "other-host", pid: 7).name + "-" + UUID().uuidString
        _ = FileManager.default.createFile(atPath: stray, contents: Data([1, 2, 3]))
        _ = FileManager.default.createFile(atPath: live, contents: Data([1, 2, 3]))
        #expect(library.sweepTemporaries(olderThan: 120) == 1)
        #expect(!FileManager.default.fileExists(atPath: stray))
        #expect(FileManager.default.fileExists(atPath: live), "another host's worker may still be writing it")
        #expect(library.sweepTemporaries(olderThan: 120, now: Date().addingTimeInterval(121)) == 1)
    }

    @Test func aDurableWriteNamesItsWriterInTheTemporaryName() throws {
        // The name is what lets a sweep tell a dead writer's file from a live one's.
        let path = space.path + "/x/file"
        try FileSystem.writeDurably([1, 2, 3], to: path)
        #expect(try FileSystem.read(path) == [1, 2, 3])
        #expect(try FileManager.default.contentsOfDirectory(atPath: space.path + "/x") == ["file"])
    }
}

/// A fresh directory under the system's temporary folder, removed when the test's value goes.
final class TemporaryDirectory: Sendable {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "darkroom-test-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}
