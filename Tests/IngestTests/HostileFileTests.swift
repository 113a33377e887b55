import Catalog
import Foundation
import GRDB
import Ingest
@testable import Storage
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a hostile or careless producer can leave in the drop folder, and what the worker makes
/// of it: every such file fails once, with its reason, and the worker goes on.
@Suite("Hostile files in the spool")
struct HostileFileTests {
    /// 40 GiB: what a sparse file of 4 KB on disk claims.
    static let sparseBytes: Int64 = 40 << 30

    /// Drains the spool once with a worker over `stores`.
    static func drain(_ stores: Stores, catalog: (any PictureCatalog)? = nil) async throws -> RunTally {
        let worker = Worker(configuration: stores.configuration, spool: stores.spool, library: stores.library,
                            catalog: catalog ?? stores.catalog, logger: Stores.quiet)
        return try await onOwnThread { worker.run(RunOptions(once: true, progress: false)) }
    }

    /// Makes (or grows) the file at `path` to `size` bytes without writing them: a sparse file.
    static func sparse(_ path: String, size: Int64) throws {
        if !FileManager.default.fileExists(atPath: path) {
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
        }
        #expect(truncate(path, off_t(size)) == 0, "truncate \(path): \(String(cString: strerror(errno)))")
    }

    @Test func aSparseFortyGiBSidecarFailsOnceFromItsSizeWithoutBeingRead() async throws {
        let stores = try Stores()
        let name = try stores.spool.enqueue(bytes: try Samples.bytes("hopper.jpg"), name: "one.jpg", sidecar: Array(#"{"title": "t"}"#.utf8))
        try Self.sparse(stores.spool.incoming + "/" + name + ".json", size: Self.sparseBytes)

        let tally = try await Self.drain(stores)
        #expect(tally.failed == 1 && tally.added == 0)
        let report = try #require(stores.spool.failures().first)
        #expect(report.file == "one.jpg")
        #expect(report.category == "too_large")
        #expect(report.attempts == 1)
        #expect(report.reason.contains("sidecar one.jpg.json is \(Self.sparseBytes) bytes, more than the 262144"), "\(report.reason)")
        #expect(FileManager.default.fileExists(atPath: stores.spool.failed + "/one.jpg.json"))
        #expect(FileManager.default.fileExists(atPath: stores.spool.failed + "/one.jpg.error.json"))
    }

    @Test func aSparseFortyGiBPhotoFailsOnceFromItsSizeAndNamesTheSetting() async throws {
        let stores = try Stores()
        try Self.sparse(stores.spool.incoming + "/huge.jpg", size: Self.sparseBytes)

        let tally = try await Self.drain(stores)
        #expect(tally.failed == 1)
        let report = try #require(stores.spool.failures().first)
        #expect(report.category == "too_large")
        #expect(report.reason.contains("\(Self.sparseBytes) bytes, more than imaging.max_file_bytes (\(512 << 20))"), "\(report.reason)")
        #expect(stores.libraryFiles().isEmpty)
        let jobs = try stores.catalog.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM jobs WHERE outcome = 'failed'") }
        #expect(jobs == 1)
    }

    @Test func thePhotoLimitComesFromTheConfiguration() async throws {
        let stores = try Stores { $0.maxFileBytes = 1000 }
        try stores.spool.enqueue(bytes: try Samples.bytes("hopper.jpg"), name: "real.jpg", sidecar: nil)
        #expect(try await Self.drain(stores).failed == 1)
        #expect(stores.spool.failures().first?.reason.contains("more than imaging.max_file_bytes (1000)") == true)
    }

    @Test func aSidecarThatIsASymbolicLinkIsRefusedAndNeverApplied() async throws {
        let stores = try Stores()
        try stores.spool.enqueue(bytes: try Samples.bytes("hopper.jpg"), name: "one.jpg", sidecar: nil)
        let elsewhere = try stores.file("other.json", Array(#"{"author_id": "mallory"}"#.utf8))
        try FileManager.default.createSymbolicLink(atPath: stores.spool.incoming + "/one.jpg.json", withDestinationPath: elsewhere)

        #expect(try await Self.drain(stores).failed == 1)
        let report = try #require(stores.spool.failures().first)
        #expect(report.reason.contains("sidecar one.jpg.json is a symbolic link, which is never followed"), "\(report.reason)")
        #expect(report.category == "bad_input")
        #expect(try stores.catalog.counts().pictures == 0)
    }

    @Test func aLatin1SidecarFailsSayingItMustBeUTF8() async throws {
        let stores = try Stores()
        // "Café" in Latin-1: é is the single byte 0xE9.
        let latin1 = Array(#"{"title": "Caf"#.utf8) + [0xE9] + Array(#""}"#.utf8)
        try stores.spool.enqueue(bytes: try Samples.bytes("hopper.jpg"), name: "one.jpg", sidecar: latin1)
        #expect(try await Self.drain(stores).failed == 1)
        let reason = try #require(stores.spool.failures().first?.reason)
        #expect(reason.contains("it must be UTF-8 text, and byte 0xE9 at offset 14 is not"), "\(reason)")
        #expect(!reason.contains("typeMismatch"))
    }

    @Test func aSidecarFieldWithANulByteFailsNamingTheKey() async throws {
        let stores = try Stores()
        try stores.spool.enqueue(bytes: try Samples.bytes("hopper.jpg"), name: "one.jpg",
                                 sidecar: Array(#"{"author_id": "alice\u0000mallory"}"#.utf8))
        #expect(try await Self.drain(stores).failed == 1)
        let reason = try #require(stores.spool.failures().first?.reason)
        #expect(reason.contains(#"key "author_id" must not hold control characters (got a NUL byte, U+0000, at character 5)"#), "\(reason)")
    }

    @Test func aSidecarWithAKeyTwiceFails() async throws {
        let stores = try Stores()
        try stores.spool.enqueue(bytes: try Samples.bytes("hopper.jpg"), name: "one.jpg",
                                 sidecar: Array(#"{"author_id": "alice", "author_id": "mallory"}"#.utf8))
        #expect(try await Self.drain(stores).failed == 1)
        #expect(stores.spool.failures().first?.reason.contains(#"key "author_id" is given twice"#) == true)
    }

    @Test func aProducersHardLinkedPhotoIsCopiedSoItsLaterEditLeavesTheOriginalTrue() async throws {
        let stores = try Stores()
        let photo = try Samples.bytes("hopper.jpg")
        let producers = try stores.file("hopper.jpg", photo)
        #expect(chmod(producers, 0o600) == 0)
        #expect(link(producers, stores.spool.incoming + "/linked.jpg") == 0)

        #expect(try await Self.drain(stores).added == 1)
        let sha = try #require(try stores.catalog.read { db in try String.fetchOne(db, sql: "SELECT sha256 FROM pictures") })
        let original = stores.configuration.libraryRoot + "/" + Library.originalPath(sha256: sha, extension: "jpg")
        var info = stat()
        #expect(lstat(original, &info) == 0)
        #expect(info.st_nlink == 1, "the original shares no inode with the producer's file")
        #expect(info.st_mode & 0o777 == 0o644 & ~Self.umaskNow)
        var producerInfo = stat()
        #expect(stat(producers, &producerInfo) == 0 && producerInfo.st_ino != info.st_ino)

        // The producer edits its file in place, then empties it: the original stays what it was named for.
        let fd = open(producers, O_WRONLY)
        #expect(fd >= 0)
        var garbage = [UInt8](repeating: 0x41, count: 64)
        #expect(pwrite(fd, &garbage, garbage.count, 100) == 64)
        #expect(ftruncate(fd, 10) == 0)
        close(fd)
        let kept = try [UInt8](Data(contentsOf: URL(fileURLWithPath: original)))
        // The very bytes whose SHA-256 the catalog recorded and the original is named by.
        #expect(kept == photo)
    }

    @Test func onlyAFileTheSpoolAloneOwnsMayBeLinked() throws {
        let stores = try Stores()
        let path = try stores.file("mine.jpg", [1, 2, 3])
        #expect(chmod(path, 0o644) == 0)
        #expect(Library.isOwnedOutright(path, size: 3))
        #expect(!Library.isOwnedOutright(path, size: 4), "a size other than the bytes read")
        #expect(chmod(path, 0o664) == 0)
        #expect(!Library.isOwnedOutright(path, size: 3), "writable by its group")
        #expect(chmod(path, 0o646) == 0)
        #expect(!Library.isOwnedOutright(path, size: 3), "writable by others")
        #expect(chmod(path, 0o600) == 0)
        #expect(Library.isOwnedOutright(path, size: 3))
        #expect(link(path, path + ".second") == 0)
        #expect(!Library.isOwnedOutright(path, size: 3), "a second name")
        unlink(path + ".second")
        try FileManager.default.createSymbolicLink(atPath: path + ".link", withDestinationPath: path)
        #expect(!Library.isOwnedOutright(path + ".link", size: 3), "a symbolic link")
    }

    @Test func aNameNearTheLimitFailsWithItsReasonFileAndJobAndASecondFailureToo() async throws {
        let stores = try Stores()
        // 250 bytes: `.error.json` beside it would pass 255.
        let long = String(repeating: "é", count: 123) + ".jpg"
        #expect(long.utf8.count == 250)
        let notAPhoto = Array("%PDF-1.4 not a photo".utf8)
        try stores.spool.enqueue(bytes: notAPhoto, name: long, sidecar: nil)
        #expect(try await Self.drain(stores).failed == 1)
        try stores.spool.enqueue(bytes: notAPhoto + [1], name: long, sidecar: nil)
        #expect(try await Self.drain(stores).failed == 1)

        #expect(stores.spool.depth() == (incoming: 0, processing: 0, failed: 2))
        let reports = stores.spool.failures()
        #expect(reports.count == 2)
        #expect(reports.allSatisfy { $0.file == long && $0.category == "unsupported_format" })
        #expect(reports.allSatisfy { ($0.failedPath?.utf8.count ?? 999) <= Spool.longestPlacedName + 5 })
        let jobs = try stores.catalog.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM jobs WHERE outcome = 'failed' AND source_name = ?", arguments: [long]) }
        #expect(jobs == 2)
        // Both can be moved back and tried again.
        #expect(try stores.spool.retryFailed() == 2)
    }

    @Test func aNameWhoseEscapedFormIsTooLongIsShortenedAndTaken() async throws {
        let stores = try Stores()
        // 120 bytes that are not UTF-8: each is escaped as %XX, 360 bytes in all.
        let raw = [UInt8](repeating: 0xFF, count: 120) + Array(".jpg".utf8)
        let path = Array(stores.spool.incoming.utf8) + [0x2F] + raw
        let fd = open((path + [0]).map { CChar(bitPattern: $0) }, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        #expect(fd >= 0)
        let photo = try Samples.bytes("hopper.jpg")
        _ = photo.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)

        let tally = try await Self.drain(stores)
        #expect(tally.added == 1)
        #expect(stores.spool.depth() == (incoming: 0, processing: 0, failed: 0))
        let name = try stores.catalog.read { db in try String.fetchOne(db, sql: "SELECT source_name FROM pictures") }
        #expect(name?.hasPrefix("%FF%FF") == true && name?.hasSuffix(".jpg") == true)
        #expect((name?.utf8.count ?? 999) <= Spool.longestPlacedName)
    }

    @Test func aPhotoADeadWorkerHeldIsTriedOnceMoreThenFailedAsHavingCrashedTheWorker() async throws {
        let stores = try Stores()
        let photo = try Samples.bytes("hopper.jpg")
        let dead = Self.deadWorker()
        // In hand when its process died, with no crash before: taken back and tried once more.
        try Self.place(photo, as: "first.jpg", claimedBy: dead, in: stores.spool)
        // In hand at a death once before already (counted at that recovery): failed, not tried.
        try Self.place(photo, as: "again.jpg", claimedBy: dead, in: stores.spool)
        stores.spool.countRecovery(of: "again.jpg")

        let tally = try await Self.drain(stores)
        #expect(tally.added == 1 && tally.failed == 1)
        let report = try #require(stores.spool.failures().first)
        #expect(report.file == "again.jpg")
        #expect(report.category == "crashed")
        #expect(report.reason.hasPrefix("crashed the worker: a worker died while processing this photo 2 times"), "\(report.reason)")
        #expect(stores.spool.recoveries(of: "first.jpg") == 0 && stores.spool.recoveries(of: "again.jpg") == 0)
    }

    @Test func aCatalogWriteThatFailsWithAnIOErrorIsRetried() async throws {
        let stores = try Stores()
        try stores.spool.enqueue(bytes: try Samples.bytes("hopper.jpg"), name: "one.jpg", sidecar: nil)
        let failing = IOErrorFirstCatalog(stores.catalog)
        let tally = try await Self.drain(stores, catalog: failing)
        #expect(tally.added == 1 && tally.failed == 0)
        let attempts = try stores.catalog.read { db in try Int.fetchOne(db, sql: "SELECT attempts FROM jobs") }
        #expect(attempts == 2)

        let error = CatalogError(DatabaseError(resultCode: .SQLITE_IOERR, message: "disk I/O error"), path: "/c.sqlite")
        #expect(error.isTransient && error.category == .catalog)
        #expect(CatalogError(DatabaseError(resultCode: .SQLITE_READONLY, message: "attempt to write a readonly database"), path: "/c.sqlite").isTransient)
        #expect(!CatalogError(DatabaseError(resultCode: .SQLITE_CORRUPT, message: "malformed"), path: "/c.sqlite").isTransient)
    }

    @Test func aFailureReasonNamesNoHostAndNoProcess() {
        let me = WorkerIdentity.current
        let path = "/srv/library/originals/ab/cd/" + FileSystem.temporaryPrefix + me.name + "-" + UUID().uuidString
        let failure = ProcessingFailure(FileSystemError(operation: "link", path: path, code: EIO))
        #expect(failure.reason == "cannot link /srv/library/originals/ab/cd/(temporary file): Input/output error")
        let claimed = ProcessingFailure(FileSystemError(operation: "open", path: "/srv/spool/processing/\(me.name)/a.jpg", code: EACCES))
        #expect(claimed.reason == "cannot open /srv/spool/processing/(worker)/a.jpg: Permission denied")
        #expect(!failure.reason.contains(me.host) && !claimed.reason.contains("\(me.pid)"))
    }

    // MARK: Helpers

    /// A worker of this machine whose process is gone.
    static func deadWorker() -> WorkerIdentity {
        var pid: Int32 = 4_000_000
        while kill(pid, 0) == 0 || errno != ESRCH { pid -= 1 }
        return WorkerIdentity(host: WorkerIdentity.current.host, pid: pid, instance: WorkerIdentity.machineKey + "0badf00d")
    }

    /// Places `bytes` as claimed by `worker` under `processing/`, as a process that died left it.
    static func place(_ bytes: [UInt8], as name: String, claimedBy worker: WorkerIdentity, in spool: Spool) throws {
        let folder = spool.processing + "/" + worker.name
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: folder + "/" + name))
    }

    static var umaskNow: mode_t {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("Umask:") } ?? "Umask: 0022"
        return mode_t(line.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8) ?? 0o022
    }
}

/// The real catalog behind one whose first commit fails with SQLite's disk I/O error.
final class IOErrorFirstCatalog: PictureCatalog {
    let catalog: Catalog
    private let failed = Mutex(false)

    init(_ catalog: Catalog) { self.catalog = catalog }

    func picture(sha256: String) throws(CatalogError) -> PictureRecord? { try catalog.picture(sha256: sha256) }

    func commitPicture(_ picture: PictureRecord, variants: [VariantRecord], job: JobRecord) throws(CatalogError) -> CommitOutcome {
        if !failed.withLock({ done in defer { done = true }; return done }) {
            throw CatalogError(DatabaseError(resultCode: .SQLITE_IOERR, message: "disk I/O error"), path: catalog.path)
        }
        return try catalog.commitPicture(picture, variants: variants, job: job)
    }

    func recordDuplicate(_ job: JobRecord, of pictureId: Int64, facts: CaptureFacts?) throws(CatalogError) {
        try catalog.recordDuplicate(job, of: pictureId, facts: facts)
    }
    func recordFailure(_ job: JobRecord) throws(CatalogError) { try catalog.recordFailure(job) }
    func finishedJob(claimPath: String) throws(CatalogError) -> JobRecord? { try catalog.finishedJob(claimPath: claimPath) }
    func latestJob(claimPath: String) throws(CatalogError) -> JobRecord? { try catalog.latestJob(claimPath: claimPath) }
}
