import Foundation
import Testing
@testable import Storage

/// The photos an import hands to the shared queue: placed under `queued/` with their ticket,
/// linked or copied, found again by a run after a kill, and removed whole.
@Suite("Spool: imported photos under queued/")
struct QueuedImportTests {
    let space = TemporaryDirectory()

    func source(_ name: String, _ text: String) throws -> String {
        let path = space.path + "/library/" + name
        try FileManager.default.createDirectory(atPath: space.path + "/library", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return path
    }

    func inode(_ path: String) throws -> Int? {
        try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
    }

    @Test func aLinkedPhotoSharesTheSourcesFileACopiedOneDoesNotAndBothCarryTheirTicket() throws {
        let spool = try Spool(root: space.path + "/spool", settleSeconds: 0)
        let a = try source("a.jpg", "photo a")
        let b = try source("b.jpg", "photo b")
        let linked = try spool.placeImported(from: a, token: "import-1", name: "a.jpg", ticket: Array("ticket a".utf8), link: true)
        let copied = try spool.placeImported(from: b, token: "import-2", name: "b.jpg", ticket: Array("ticket b".utf8), link: false)
        #expect(linked == "import-1/a.jpg" && copied == "import-2/b.jpg")
        #expect(try inode(spool.queued + "/" + linked) == inode(a), "one file, two names")
        #expect(try inode(spool.queued + "/" + copied) != inode(b))
        #expect(try FileSystem.read(spool.queued + "/" + copied) == Array("photo b".utf8))
        #expect(try spool.importTicket(of: linked) == Array("ticket a".utf8))
        #expect(try spool.importTicket(of: "import-3/none.jpg") == nil)
        // A reconciliation sees the photos, never their tickets nor a temporary file.
        let temporary = FileSystem.temporaryPath(in: spool.queued + "/import-1")
        _ = FileManager.default.createFile(atPath: temporary, contents: Data("half".utf8))
        #expect(spool.queuedFiles(quietFor: 0) == [linked, copied])
        unlink(temporary)
        // Consumed: the photo, its ticket and its folder go; the source stays.
        spool.consumeQueued(linked)
        #expect(!FileManager.default.fileExists(atPath: spool.queued + "/import-1"))
        #expect(FileManager.default.fileExists(atPath: a))
        #expect(nil == incomingLeftovers(spool).first, "no staging file is left in incoming/: \(incomingLeftovers(spool))")
    }

    @Test func aTicketOrSidecarLeftWithoutItsPhotoIsRemovedOnceQuietAndOneBesideItsPhotoIsKept() throws {
        // An import killed after writing a ticket and before placing its photo, or a worker killed
        // while it removed a done photo, leaves a companion alone: a reconciliation removes it.
        let spool = try Spool(root: space.path + "/spool", settleSeconds: 0)
        let kept = try spool.placeImported(from: try source("a.jpg", "photo a"), token: "import-1", name: "a.jpg",
                                           ticket: Array("ticket a".utf8), link: false)
        try FileManager.default.createDirectory(atPath: spool.queued + "/import-2/day1", withIntermediateDirectories: true)
        for companion in ["import-2/day1/b.jpg.import.json", "import-2/day1/b.jpg.json"] {
            _ = FileManager.default.createFile(atPath: spool.queued + "/" + companion, contents: Data("{}".utf8))
        }
        #expect(spool.removeOrphanCompanions(quietFor: 60).isEmpty, "not quiet yet")
        let removed = spool.removeOrphanCompanions(quietFor: 60, now: Date().addingTimeInterval(120))
        #expect(Set(removed) == ["import-2/day1/b.jpg.import.json", "import-2/day1/b.jpg.json"])
        #expect(!FileManager.default.fileExists(atPath: spool.queued + "/import-2"), "its emptied folders go too")
        #expect(try spool.importTicket(of: kept) == Array("ticket a".utf8))
        #expect(spool.queuedFiles(quietFor: 0) == [kept])
    }

    @Test func placingAgainInTheSamePlaceKeepsThePhotoThereAndRewritesItsTicket() throws {
        let spool = try Spool(root: space.path + "/spool", settleSeconds: 0)
        let a = try source("a.jpg", "first bytes")
        let file = try spool.placeImported(from: a, token: "import-9", name: "a.jpg", ticket: Array("one".utf8), link: false)
        _ = FileManager.default.createFile(atPath: a, contents: Data("edited since".utf8))
        let again = try spool.placeImported(from: a, token: "import-9", name: "a.jpg", ticket: Array("two".utf8), link: false)
        #expect(again == file)
        #expect(try FileSystem.read(spool.queued + "/" + file) == Array("first bytes".utf8), "the photo a worker may hold is not replaced")
        #expect(try spool.importTicket(of: file) == Array("two".utf8))
        #expect(spool.queuedFiles(quietFor: 0) == [file])
    }

    @Test func aSourceThatCannotBeReadIsRefusedAndLeavesNoPhotoBehind() throws {
        let spool = try Spool(root: space.path + "/spool", settleSeconds: 0)
        #expect(throws: FileSystemError.self) {
            _ = try spool.placeImported(from: space.path + "/library/missing.jpg", token: "import-4", name: "missing.jpg",
                                        ticket: Array("t".utf8), link: false)
        }
        #expect(spool.queuedFiles(quietFor: 0).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: spool.queued + "/import-4"), "no ticket without its photo")
        #expect(incomingLeftovers(spool).isEmpty)
    }

    private func incomingLeftovers(_ spool: Spool) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: spool.incoming)) ?? []
    }
}
