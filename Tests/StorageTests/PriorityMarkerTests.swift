import Foundation
import Testing
@testable import Storage

/// `priority/` markers left without their photo.
@Suite("Orphan priority markers")
struct PriorityMarkerTests {
    let space = TemporaryDirectory()

    func makeSpool() throws -> Spool {
        try Spool(root: space.path + "/spool", settleSeconds: 0)
    }

    func put(_ relative: String, in spool: Spool) {
        let path = spool.incoming + "/" + relative
        try? FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: path, contents: Data("photo".utf8))
    }

    /// Marks `name` urgent `age` seconds ago.
    func mark(_ name: String, in spool: Spool, age: Double) throws {
        spool.markUrgent(name)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-age)],
                                              ofItemAtPath: spool.priority + "/" + Spool.flatName(name))
    }

    @Test("an old marker without its photo is removed; a fresh one, or one whose photo waits, is kept")
    func removesOnlyOldOrphans() throws {
        let spool = try makeSpool()
        try mark("fresh-orphan.jpg", in: spool, age: 5)
        try mark("old-orphan.jpg", in: spool, age: 600)
        try mark("trip/old-nested-orphan.jpg", in: spool, age: 600)
        put("waiting.jpg", in: spool)
        try mark("waiting.jpg", in: spool, age: 600)
        put("trip/day1/nested.jpg", in: spool)
        try mark("trip/day1/nested.jpg", in: spool, age: 600)

        let removed = spool.removeOrphanPriorityMarkers(olderThan: 60)

        #expect(Set(removed) == ["old-orphan.jpg", "trip/old-nested-orphan.jpg"])
        #expect(spool.isUrgent("fresh-orphan.jpg"))
        #expect(!spool.isUrgent("old-orphan.jpg"))
        #expect(!spool.isUrgent("trip/old-nested-orphan.jpg"))
        #expect(spool.isUrgent("waiting.jpg"))
        #expect(spool.isUrgent("trip/day1/nested.jpg"))
        #expect(spool.scan().urgent == ["waiting.jpg", "trip/day1/nested.jpg"])
    }

    @Test("a marker whose photo a worker has claimed is kept")
    func keepsAClaimedPhotosMarker() throws {
        let spool = try makeSpool()
        put("claimed.jpg", in: spool)
        try mark("claimed.jpg", in: spool, age: 600)
        #expect(try spool.claim("claimed.jpg", worker: "host.1") != nil)
        #expect(spool.removeOrphanPriorityMarkers(olderThan: 60).isEmpty)
        #expect(spool.isUrgent("claimed.jpg"))
    }

    @Test("the age counts from the latest mark, and `now` decides what is old")
    func ageCountsFromTheLatestMark() throws {
        let spool = try makeSpool()
        try mark("again.jpg", in: spool, age: 600)
        spool.markUrgent("again.jpg")
        #expect(spool.removeOrphanPriorityMarkers(olderThan: 60).isEmpty)
        #expect(spool.removeOrphanPriorityMarkers(olderThan: 60, now: Date().addingTimeInterval(120)) == ["again.jpg"])
        #expect(!spool.isUrgent("again.jpg"))
    }
}
