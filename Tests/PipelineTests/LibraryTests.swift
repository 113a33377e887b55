import Foundation
import Testing
@testable import Pipeline

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
