import Foundation
import Testing
@testable import Storage

@Suite("Spool protocol")
struct SpoolTests {
    let space = TemporaryDirectory()

    func makeSpool(settle: Double = 0) throws -> Spool {
        try Spool(root: space.path + "/spool", settleSeconds: settle)
    }

    func put(_ relative: String, in spool: Spool, bytes: [UInt8] = Array("photo".utf8)) throws {
        let path = spool.incoming + "/" + relative
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
    }

    @Test func scanSkipsHiddenPartialAndSidecarFilesAndFindsNestedOnes() throws {
        let spool = try makeSpool()
        try put("a.jpg", in: spool)
        try put("a.jpg.json", in: spool)
        try put(".b.jpg", in: spool)
        try put("c.jpg.partial", in: spool)
        try put("trip/day1/d.jpg", in: spool)
        try put(".hidden/e.jpg", in: spool)
        #expect(spool.scan().ready == ["a.jpg", "trip/day1/d.jpg"])
    }

    @Test func aFileOpenForWritingIsNotReadyAndAClosedOneIsReadyAtOnce() throws {
        let spool = try makeSpool(settle: 30)
        try put("closed.jpg", in: spool)
        let fd = open(spool.incoming + "/growing.jpg", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        #expect(fd >= 0)
        #expect(FileSystem.isOpenForWriting(spool.incoming + "/growing.jpg") == true)
        #expect(FileSystem.isOpenForWriting(spool.incoming + "/closed.jpg") == false)
        // Written and closed: no settle time to wait out, whoever wrote it.
        let now = spool.scan()
        #expect(now.ready == ["closed.jpg"])
        #expect(now.settling == 1)
        #expect(now.recheckIn == 30, "looked at again at the settle deadline, if its writer's close is not seen first")
        close(fd)
        #expect(spool.scan().ready == ["closed.jpg", "growing.jpg"])
    }

    @Test func whereTheKernelCannotTellAFileIsReadyOnceItHasSettled() throws {
        let spool = try makeSpool(settle: 30)
        try put("elsewhere.jpg", in: spool)
        // A file quiet for the settle time is offered without asking (the worker asks before it
        // claims); a fresh one another machine writes (no lease to ask) waits out the settle time.
        #expect(spool.scan(now: Date().addingTimeInterval(31)).ready == ["elsewhere.jpg"])
        #expect(FileSystem.isOpenForWriting(spool.incoming + "/missing.jpg") == nil, "nothing to ask about")
    }

    @Test func onlyOneOfTwoWorkersClaimsAPhotoAndItsSidecarTravelsWithIt() throws {
        let spool = try makeSpool()
        try put("x.jpg", in: spool)
        try put("x.jpg.json", in: spool, bytes: Array("{}".utf8))
        let first = try spool.claim("x.jpg", worker: "host.1")
        let second = try spool.claim("x.jpg", worker: "host.2")
        let claim = try #require(first)
        #expect(second == nil)
        #expect(claim.path == spool.processing + "/host.1/x.jpg")
        #expect(claim.sidecarPath == claim.path + ".json")
        #expect(FileManager.default.fileExists(atPath: claim.sidecarPath ?? ""))
        #expect(!FileManager.default.fileExists(atPath: spool.incoming + "/x.jpg"))
    }

    @Test func failureKeepsThePhotoItsSidecarAndAReasonAndNeverOverwrites() throws {
        let spool = try makeSpool()
        for round in 1...2 {
            try put("trip/x.jpg", in: spool, bytes: Array("round \(round)".utf8))
            try put("trip/x.jpg.json", in: spool, bytes: Array("{\"round\": \(round)}".utf8))
            let claim = try #require(try spool.claim("trip/x.jpg", worker: "host.1"))
            try spool.fail(claim, reason: "not a JPEG or PNG", category: "unsupported_format", attempts: 1)
        }
        let failures = spool.failures()
        #expect(failures.map(\.failedPath) == ["trip/x (2).jpg", "trip/x.jpg"])
        #expect(failures.allSatisfy { $0.reason == "not a JPEG or PNG" && $0.attempts == 1 })
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: spool.failed + "/trip/x.jpg")), as: UTF8.self) == "round 1")
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: spool.failed + "/trip/x (2).jpg")), as: UTF8.self) == "round 2")
        #expect(FileManager.default.fileExists(atPath: spool.failed + "/trip/x (2).jpg.json"))
        #expect(spool.depth().processing == 0)

        #expect(try spool.retryFailed() == 2)
        #expect(spool.failures().isEmpty)
        #expect(Set(spool.scan().ready) == ["trip/x.jpg", "trip/x (2).jpg"])
    }

    @Test func aWorkersFolderStaysBetweenPhotosAndGoesWhenItsRunEnds() throws {
        let spool = try makeSpool()
        try put("trip/day1/a.jpg", in: spool)
        try put("b.jpg", in: spool)
        let folder = spool.processing + "/host.1"
        let nested = try #require(try spool.claim("trip/day1/a.jpg", worker: "host.1"))
        spool.complete(nested)
        // The photo's own folders go; the worker's stays for its next photo.
        #expect(EntryKind(at: folder + "/trip") == .missing)
        #expect(EntryKind(at: folder) == .directory)
        let claim = try #require(try spool.claim("b.jpg", worker: "host.1"))
        spool.releaseWorkerFolder("host.1")
        #expect(EntryKind(at: folder) == .directory, "a folder holding a claim is kept")
        try spool.fail(claim, reason: "not a JPEG or PNG", category: "unsupported_format", attempts: 1)
        #expect(EntryKind(at: folder) == .directory)
        spool.releaseWorkerFolder("host.1")
        #expect(EntryKind(at: folder) == .missing)
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool.processing).isEmpty)
    }

    @Test func claimsOfADeadWorkerAreTakenBackAndCommittedOnesRemoved() throws {
        let spool = try makeSpool()
        try put("done.jpg", in: spool)
        try put("todo.jpg", in: spool)
        // A process id that cannot be running: pid_max is far below Int32.max.
        let dead = WorkerIdentity(host: WorkerIdentity.current.host, pid: Int32.max - 1)
        let done = try #require(try spool.claim("done.jpg", worker: dead.name))
        _ = try #require(try spool.claim("todo.jpg", worker: dead.name))
        let recovered = spool.recover(leaseSeconds: 3600, except: .current) { $0 == done.path }
        #expect(Set(recovered) == [.alreadyDone("done.jpg"), .requeued("todo.jpg")])
        #expect(spool.scan().ready == ["todo.jpg"])
        #expect(spool.recoveries(of: "todo.jpg") == 1)
        #expect(spool.depth().processing == 0)
    }

    @Test func aLiveWorkersClaimIsTakenBackOnlyAfterItsLeaseExpires() throws {
        let spool = try makeSpool()
        try put("slow.jpg", in: spool)
        let other = WorkerIdentity(host: "another-host", pid: 42)
        _ = try #require(try spool.claim("slow.jpg", worker: other.name))
        #expect(spool.recover(leaseSeconds: 60, except: .current) { _ in false }.isEmpty)
        let later = Date().addingTimeInterval(61)
        #expect(spool.recover(leaseSeconds: 60, except: .current, now: later) { _ in false } == [.requeued("slow.jpg")])
    }

    @Test func aLeaseIsMeasuredFromTheClaimNotFromThePhotosOwnTime() throws {
        let spool = try makeSpool()
        try put("old.jpg", in: spool)
        // A producer that keeps file times (cp -p, rsync -t): the photo says it is a day old.
        let dayAgo = Date().addingTimeInterval(-86_400)
        try FileManager.default.setAttributes([.modificationDate: dayAgo], ofItemAtPath: spool.incoming + "/old.jpg")
        let other = WorkerIdentity(host: "another-host", pid: 42)
        let claim = try #require(try spool.claim("old.jpg", worker: other.name))
        #expect(spool.recover(leaseSeconds: 60, except: .current) { _ in false }.isEmpty, "a fresh claim is live")
        spool.renew(claim)
        #expect(spool.recover(leaseSeconds: 60, except: .current) { _ in false }.isEmpty, "a renewed claim is live")
        // The photo's own time is kept for its metadata: only the lease moved.
        let modified = try #require(FileSystem.status(claim.path)?.modified)
        #expect(abs(modified - dayAgo.timeIntervalSince1970) < 1)
        let later = Date().addingTimeInterval(61)
        #expect(spool.recover(leaseSeconds: 60, except: .current, now: later) { _ in false } == [.requeued("old.jpg")])
    }

    @Test func aPhotoThatVanishesBetweenScanAndClaimIsLostQuietly() throws {
        let spool = try makeSpool()
        try put("gone.jpg", in: spool)
        #expect(spool.scan().ready == ["gone.jpg"])
        unlink(spool.incoming + "/gone.jpg")
        #expect(try spool.claim("gone.jpg", worker: "w.1") == nil)
        #expect(spool.depth().incoming == 0)
    }

    @Test func aNestedPhotoGoneBeforeItsClaimLeavesNoFolderBehind() throws {
        let spool = try makeSpool()
        try put("trip/day1/gone.jpg", in: spool)
        try put("kept.jpg", in: spool)
        let folder = spool.processing + "/w.1"
        let kept = try #require(try spool.claim("kept.jpg", worker: "w.1"))
        unlink(spool.incoming + "/trip/day1/gone.jpg")
        let claim = try spool.claim("trip/day1/gone.jpg", worker: "w.1")
        #expect(claim == nil)
        // The folders made for it go; the worker's own, holding another claim, stays.
        #expect(EntryKind(at: folder + "/trip") == .missing)
        #expect(EntryKind(at: folder + "/kept.jpg") == .regular)
        spool.complete(kept)
        spool.releaseWorkerFolder("w.1")
        #expect(EntryKind(at: folder) == .missing, "nothing is left to keep the worker's folder")
    }

    @Test func namesThatAreNotUTF8OrHoldNewlinesAreCountedThenRenamedToEscapedNames() throws {
        let spool = try makeSpool()
        // "café.jpg" with a Latin-1 é: not valid UTF-8.
        let raw = (Array((spool.incoming + "/caf").utf8) + [0xE9] + Array(".jpg".utf8) + [0]).map { CChar(bitPattern: $0) }
        let fd = open(raw, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        #expect(fd >= 0)
        close(fd)
        try put("a\nb.jpg", in: spool)
        try put("100%.jpg", in: spool)
        #expect(spool.depth().incoming == 3, "status counts them before any worker touched them")
        #expect(spool.scan().ready == ["100%.jpg", "a%0Ab.jpg", "caf%E9.jpg"])
        #expect(spool.depth().incoming == 3)
    }

    @Test func entriesThatAreNotFilesAreReadyAtOnceAndCounted() throws {
        let spool = try makeSpool(settle: 3600)
        let writing = open(spool.incoming + "/fresh.jpg", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        defer { close(writing) }
        #expect(mkfifo(spool.incoming + "/pipe.jpg", 0o644) == 0)
        #expect(symlink("/dev/zero", spool.incoming + "/device.jpg") == 0)
        try FileManager.default.createDirectory(atPath: spool.incoming + "/folder.jpg", withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: spool.incoming + "/album", withIntermediateDirectories: false)
        let scan = spool.scan()
        // A file still being written waits for its writer; the others can never become photos by waiting.
        #expect(scan.ready == ["device.jpg", "folder.jpg", "pipe.jpg"])
        #expect(scan.settling == 1)
        #expect(spool.depth().incoming == 4, "an empty folder without a photo's name is not counted")
        #expect(EntryKind(at: spool.incoming + "/pipe.jpg") == .fifo)
        #expect(EntryKind(at: spool.incoming + "/device.jpg") == .symbolicLink)
        #expect(EntryKind(following: spool.incoming + "/device.jpg") == .device)
    }

    @Test func enqueueWritesTheSidecarFirstAndNeverOverwrites() throws {
        let spool = try makeSpool()
        let first = try spool.enqueue(bytes: Array("one".utf8), name: "/some/where/IMG_1.jpg", sidecar: Array("{\"author_id\":\"u1\"}".utf8))
        let second = try spool.enqueue(bytes: Array("two".utf8), name: "IMG_1.jpg", sidecar: nil)
        #expect(first == "IMG_1.jpg")
        #expect(second == "IMG_1 (2).jpg")
        #expect(FileManager.default.contents(atPath: spool.incoming + "/IMG_1.jpg.json") == Data("{\"author_id\":\"u1\"}".utf8))
        #expect(spool.scan().ready == ["IMG_1 (2).jpg", "IMG_1.jpg"])
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: spool.incoming).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty)
    }

    @Test func enqueueSkipsANameWhoseSidecarAloneIsTaken() throws {
        let spool = try makeSpool()
        // A sidecar left by a producer whose photo has not arrived yet: its name is taken.
        try Data("{\"title\":\"theirs\"}".utf8).write(to: URL(fileURLWithPath: spool.incoming + "/IMG_2.jpg.json"))
        let name = try spool.enqueue(bytes: Array("mine".utf8), name: "IMG_2.jpg", sidecar: Array("{\"title\":\"mine\"}".utf8))
        #expect(name == "IMG_2 (2).jpg")
        #expect(FileManager.default.contents(atPath: spool.incoming + "/IMG_2.jpg.json") == Data("{\"title\":\"theirs\"}".utf8))
        #expect(FileManager.default.contents(atPath: spool.incoming + "/IMG_2 (2).jpg.json") == Data("{\"title\":\"mine\"}".utf8))
        #expect(FileManager.default.contents(atPath: spool.incoming + "/IMG_2 (2).jpg") == Data("mine".utf8))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: spool.incoming).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty)
    }

    @Test func aStagedPhotoIsInvisibleUntilPublishedAndDiscardingLeavesNothing() throws {
        let spool = try makeSpool()
        let staged = try spool.stage()
        try staged.append(Array("first half, ".utf8))
        try staged.append(Array("second half".utf8))
        #expect(staged.byteCount == 23)
        #expect(spool.scan().ready.isEmpty)
        let name = try staged.publish(name: "upload.jpg", sidecar: nil)
        #expect(name == "upload.jpg")
        #expect(FileManager.default.contents(atPath: spool.incoming + "/upload.jpg") == Data("first half, second half".utf8))
        #expect(spool.scan().ready == ["upload.jpg"])

        let dropped = try spool.stage()
        try dropped.append(Array("never published".utf8))
        dropped.discard()
        #expect(throws: FileSystemError.self) { try dropped.publish(name: "dropped.jpg", sidecar: nil) }
        let names = try FileManager.default.contentsOfDirectory(atPath: spool.incoming)
        #expect(names == ["upload.jpg"])
    }

    @Test func hiddenAndPartialUploadNamesAreMadeSafe() {
        #expect(Spool.safeFileName("../../etc/.passwd.partial") == "passwd")
        #expect(Spool.safeFileName(".") == "upload")
    }
}
