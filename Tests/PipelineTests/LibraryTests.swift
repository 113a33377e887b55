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

    @Test func temporariesLeftByAKilledWriteAreSwept() throws {
        let library = try Library(root: space.path + "/library", backupRoot: nil)
        let stray = space.path + "/library/originals/aa/bb/" + FileSystem.temporaryPrefix + "123"
        try FileManager.default.createDirectory(atPath: (stray as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: stray, contents: Data([1, 2, 3]))
        #expect(library.sweepTemporaries() == 1)
        #expect(!FileManager.default.fileExists(atPath: stray))
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
