import Foundation
import Storage
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Reads with a bound, names that fit beside their reason files, and library files with one name.
@Suite("Bounded reads and fitting names")
struct BoundedReadTests {
    let root = NSTemporaryDirectory() + "darkroom-bounded-" + UUID().uuidString

    init() throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    @Test func aFileAboveTheLimitIsRefusedFromItsSizeBeforeAnyRead() throws {
        let path = root + "/sparse"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        #expect(truncate(path, off_t(40) << 30) == 0)
        #expect(throws: FileTooLargeError(path: path, size: 40 << 30, limit: 1 << 20)) { try FileSystem.read(path, atMost: 1 << 20) }
        let small = root + "/small"
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: small))
        #expect(try FileSystem.read(small, atMost: 3) == [1, 2, 3])
        #expect(throws: FileTooLargeError.self) { try FileSystem.read(small, atMost: 2) }
        try FileManager.default.removeItem(atPath: root)
    }

    @Test func aLinkIsNeverFollowed() throws {
        let target = root + "/target"
        try Data([1]).write(to: URL(fileURLWithPath: target))
        try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: target)
        #expect(throws: FollowedLinkError(path: root + "/link")) { try FileSystem.read(root + "/link", atMost: 10) }
        #expect(throws: FileSystemError.self) { try FileSystem.read(root + "/missing", atMost: 10) }
        try FileManager.default.removeItem(atPath: root)
    }

    @Test func aLongNameIsShortenedToFitWithItsSuffixesAndStaysApartFromItsNeighbours() {
        let long = String(repeating: "é", count: 123) + ".jpg"
        let short = Spool.fittingName("trip/" + long)
        #expect(short.hasPrefix("trip/é") && short.hasSuffix(".jpg"))
        let name = String(short.dropFirst("trip/".count))
        #expect(name.utf8.count <= Spool.longestPlacedName)
        #expect((name + " (99).error.json").utf8.count <= 255)
        #expect(Spool.fittingName("trip/" + String(repeating: "é", count: 123) + "x.jpg") != short)
        #expect(Spool.fittingName("IMG_1.jpg") == "IMG_1.jpg")
        #expect(Spool.fittingName(long) == name, "the same name shortens the same way every time")
        try? FileManager.default.removeItem(atPath: root)
    }

    @Test func aLibraryFileWithASecondNameIsRefused() throws {
        let folder = root + "/variants"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data([7]).write(to: URL(fileURLWithPath: folder + "/a.jpg"))
        #expect(try LibraryFile.read(root: root, components: ["variants", "a.jpg"]) == Data([7]))
        #expect(link(folder + "/a.jpg", root + "/elsewhere") == 0)
        #expect(throws: SharedFileError(path: "variants/a.jpg", links: 2)) { try LibraryFile.read(root: root, components: ["variants", "a.jpg"]) }
        try FileManager.default.removeItem(atPath: root)
    }
}
