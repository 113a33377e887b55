import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A photo claimed from the spool by one worker.
public struct Claim: Sendable, Equatable {
    /// The path it arrived under, relative to `incoming/` (nested folders allowed).
    public var sourceName: String
    /// Where it sits while claimed: `processing/<worker>/<sourceName>`.
    public var path: String
    /// The sidecar that travelled with it (`NAME.json`), if any.
    public var sidecarPath: String?
    /// The worker that holds it.
    public var worker: String
    /// Times the photo was taken back from a worker that died while holding it.
    public var recoveries: Int
}

/// The spool protocol on disk: `incoming/`, `processing/`, `failed/`.
///
/// Producers write into `incoming/` under a dot-name or a `.partial` name and rename when done;
/// a file written in place counts once it has not changed for `settleSeconds`. A worker claims a
/// photo by renaming it into its own folder under `processing/`: rename is atomic, so of several
/// workers, threads or processes, exactly one wins. Success removes the claim; failure moves the
/// photo, its sidecar and a reason file into `failed/`. Nothing is ever deleted unprocessed.
public struct Spool: Sendable {
    /// The spool's root directory.
    public let root: String
    /// How long a file written in place must stay unchanged before it is taken.
    public let settleSeconds: Double
    /// Where queued photos wait for any machine when machines share no directory (a bucket's
    /// staging area); nil when `queued/` itself is shared (one machine, or a shared mount).
    public var staging: (any QueuedStaging)?

    public var incoming: String { root + "/incoming" }
    public var processing: String { root + "/processing" }
    public var failed: String { root + "/failed" }
    public var attempts: String { root + "/attempts" }
    /// One empty marker per urgent photo in `incoming/` (see `markUrgent`).
    public var priority: String { root + "/priority" }

    /// Opens the spool at `root`, creating its folders when missing.
    public init(root: String, settleSeconds: Double) throws(FileSystemError) {
        self.root = root
        self.settleSeconds = settleSeconds
        for directory in [incoming, processing, failed, attempts, priority] {
            try FileSystem.makeDirectories(directory)
        }
    }

    /// Whether a name in `incoming/` is a photo to take (not hidden, not partial, not a sidecar).
    public static func isCandidate(_ relative: String) -> Bool {
        let components = relative.split(separator: "/")
        if components.contains(where: { $0.hasPrefix(".") }) { return false }
        let name = (relative as NSString).lastPathComponent
        if name.hasSuffix(".partial") || name.hasSuffix(".json") { return false }
        if name.hasSuffix(".error.json") { return false }
        return true
    }

    /// What is waiting in `incoming/`: the photos ready to take (sorted by name), the count of
    /// those still being written, which of the ready ones are urgent (`markUrgent`), and when to
    /// look again for the ones still being written.
    ///
    /// A regular file is ready when no process on this machine holds it open for writing (asked
    /// of the kernel, see `FileSystem.isOpenForWriting`): a photo renamed or linked in, or one
    /// whose writer closed it, is taken at once. Where the kernel cannot tell (another user's
    /// file without the right to take leases, a network file system), a file is ready once it
    /// has not changed for `settleSeconds`. A file quiet for that long is ready either way here;
    /// the worker checks again for a writer just before it claims it. An entry that is not a regular file (a link, a FIFO,
    /// a device, an empty directory named like a photo) is ready at once: the worker moves it
    /// to `failed/` with its reason without opening it. A name that is not valid UTF-8 or holds a
    /// control character is first renamed to an escaped one (see `incomingEntries`).
    public func scan(now: Date = Date()) -> SpoolScan {
        var result = SpoolScan()
        let instant = now.timeIntervalSince1970
        for entry in incomingEntries(sanitizing: true) where entry.kind != .missing {
            guard entry.kind == .regular else {
                result.ready.append(entry.relative)
                continue
            }
            // ctime cannot be set by a copier that preserves times (cp -p, rsync -t): a file
            // still being written always looks recent.
            // A file quiet for the settle time is offered without asking the kernel (a backlog
            // of thousands is not opened at every scan); the worker asks before it claims it.
            let quiet = instant - entry.changed
            switch quiet >= settleSeconds ? false : FileSystem.isOpenForWriting(incoming + "/" + entry.relative) {
            case false?:
                result.ready.append(entry.relative)
            case true?:
                result.settling += 1
                // Its writer's close wakes a watching daemon; look again anyway in a while.
                result.recheck(in: settleSeconds)
            case nil:
                result.settling += 1
                result.recheck(in: settleSeconds - quiet)
            }
        }
        result.ready.sort()
        result.marked = urgentNames()
        result.urgent = result.marked.intersection(result.ready)
        return result
    }

    /// Tries to claim `sourceName` for `worker`; nil when another worker took it first.
    public func claim(_ sourceName: String, worker: String) throws(FileSystemError) -> Claim? {
        let source = incoming + "/" + sourceName
        let destination = processing + "/" + worker + "/" + sourceName
        try FileSystem.makeDirectories((destination as NSString).deletingLastPathComponent)
        guard rename(source, destination) == 0 else {
            if errno == ENOENT {
                // Gone from incoming/: another worker took it, or it was done after a listing
                // that began before. The folder made for it goes too, or it would outlive the
                // run and keep the worker's claim folder from being released.
                removeEmptyParents(of: destination, upTo: processing + "/" + worker)
                return nil
            }
            throw .current("claim", source)
        }
        // The lease starts now: the claimed file's change time, which the rename sets and
        // `renew` moves on; never the photo's own modification time, which a producer may
        // have kept from long ago (cp -p, rsync -t, a camera card).
        Self.markLeased(destination)
        var sidecarPath: String?
        if rename(source + ".json", destination + ".json") == 0 {
            sidecarPath = destination + ".json"
        }
        return Claim(sourceName: sourceName, path: destination, sidecarPath: sidecarPath,
                     worker: worker, recoveries: recoveries(of: sourceName))
    }

    /// Renews a claim's lease, so that other workers see it is alive.
    public func renew(_ claim: Claim) {
        Self.markLeased(claim.path)
    }

    /// Sets a claimed file's change time (ctime) to now without touching its modification
    /// time, which stays the photo's own (the capture time's last resort): a chmod to the mode
    /// it already has. The change time is what leases are measured by.
    static func markLeased(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        chmod(path, info.st_mode & 0o7777)
    }

    /// Removes a photo whose result the catalog has committed.
    public func complete(_ claim: Claim) {
        unlink(claim.path)
        if let sidecar = claim.sidecarPath { unlink(sidecar) }
        clearRecoveries(of: claim.sourceName)
        clearUrgent(claim.sourceName)
        removeEmptyParents(of: claim.path, upTo: processing + "/" + claim.worker)
    }

    /// Moves a photo that cannot be processed into `failed/`, with its sidecar and
    /// `NAME.error.json` (the reason, the attempt count and the time). Returns the failed path.
    /// A name too long to take the reason file's suffix is shortened (`fittingName`); the
    /// report's `file` keeps the name it arrived under.
    @discardableResult
    public func fail(_ claim: Claim, reason: String, category: String, attempts: Int, now: Date = Date()) throws(FileSystemError) -> String {
        let before = FileSystem.entryStatus(claim.path)
        // A name too long to take `.error.json` beside it is shortened; the report keeps the whole.
        let placed = try FileSystem.moveNoReplace(claim.path, to: failed + "/" + Self.fittingName(claim.sourceName))
        if let sidecar = claim.sidecarPath {
            _ = try? FileSystem.moveNoReplace(sidecar, to: placed + ".json")
        }
        let report = FailureReport(file: claim.sourceName, reason: reason, category: category, attempts: attempts,
                                   failedAt: ISO8601DateFormatter().string(from: now), worker: claim.worker,
                                   bytes: before?.kind == .regular ? before?.size : nil,
                                   modified: before?.kind == .regular ? before?.modified : nil)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let data = (try? encoder.encode(report)) ?? Data()
        try FileSystem.writeDurably([UInt8](data), to: placed + ".error.json")
        clearRecoveries(of: claim.sourceName)
        clearUrgent(claim.sourceName)
        removeEmptyParents(of: claim.path, upTo: processing + "/" + claim.worker)
        return placed
    }

    /// Every photo in `failed/` with its recorded reason.
    public func failures() -> [FailureReport] {
        guard let walker = FileManager.default.enumerator(atPath: failed) else { return [] }
        var reports: [FailureReport] = []
        while let relative = walker.nextObject() as? String {
            guard relative.hasSuffix(".error.json"),
                  let report = failureReport(String(relative.dropLast(".error.json".count))) else { continue }
            reports.append(report)
        }
        return reports.sorted { $0.failedPath ?? "" < $1.failedPath ?? "" }
    }

    /// Moves failed photos (and their sidecars) back into `incoming/` for another try, removing
    /// their reason files. Returns how many were moved.
    public func retryFailed(matching filter: (FailureReport) -> Bool = { _ in true }) throws(FileSystemError) -> Int {
        var moved = 0
        for report in failures() where filter(report) {
            guard let relative = report.failedPath else { continue }
            let source = failed + "/" + relative
            guard FileManager.default.fileExists(atPath: source) else { continue }
            let placed = try FileSystem.moveNoReplace(source, to: incoming + "/" + relative)
            if FileManager.default.fileExists(atPath: source + ".json") {
                _ = try FileSystem.moveNoReplace(source + ".json", to: placed + ".json")
            }
            unlink(source + ".error.json")
            moved += 1
        }
        return moved
    }

    /// Counts of what sits in each area, for `darkroom status`.
    public func depth() -> (incoming: Int, processing: Int, failed: Int) {
        func count(_ directory: String, _ include: (String) -> Bool) -> Int {
            guard let walker = FileManager.default.enumerator(atPath: directory) else { return 0 }
            var n = 0
            while let relative = walker.nextObject() as? String {
                let kind = EntryKind(at: directory + "/" + relative)
                if include(relative), kind != .missing, kind != .directory { n += 1 }
            }
            return n
        }
        // Every entry counts, whatever its kind or name: a link, a FIFO, a name that is not UTF-8.
        return (incomingEntries(sanitizing: false).count,
                count(processing) { !$0.hasSuffix(".json") },
                // One reason file per failed entry, whether a file, a link or a directory.
                count(failed) { $0.hasSuffix(".error.json") })
    }

    /// Removes `worker`'s folder under `processing/` when it is empty: at the end of its run. It
    /// stays between one photo and the next, so a worker does not create and remove a directory
    /// for every photo (on ext4 a freed inode slows the next creations that scan past it, and
    /// the process's threads share the folder). A killed process's folder is removed by the
    /// recovery that takes back its claims.
    public func releaseWorkerFolder(_ worker: String) {
        rmdir(processing + "/" + worker)
    }

    /// Removes the empty folders between `path` and `top`, `top` kept.
    private func removeEmptyParents(of path: String, upTo top: String) {
        var directory = (path as NSString).deletingLastPathComponent
        while directory.count > top.count, directory.hasPrefix(top) {
            guard rmdir(directory) == 0 else { return }
            directory = (directory as NSString).deletingLastPathComponent
        }
    }
}

/// What a scan of `incoming/` found.
public struct SpoolScan: Sendable, Equatable {
    /// The photos ready to take, sorted by name.
    public var ready: [String] = []
    /// Photos still being written.
    public var settling = 0
    /// Those of `ready` that are urgent (uploads, `enqueue --priority high`).
    public var urgent: Set<String> = []
    /// Every name marked urgent when `priority/` was read, ready or not (claimed, still settling).
    public var marked: Set<String> = []
    /// Seconds after which a photo still being written should be looked at again; nil when none is.
    public var recheckIn: Double?

    public init() {}

    mutating func recheck(in seconds: Double) {
        recheckIn = min(recheckIn ?? seconds, max(seconds, 0.01))
    }
}

/// The reason file written beside a failed photo (`NAME.error.json`).
public struct FailureReport: Codable, Sendable, Equatable {
    /// The name the photo arrived under.
    public var file: String
    /// One line: what failed and what to do.
    public var reason: String
    /// What kind of failure it was (a failure category such as `bad_input`); absent in reports
    /// written before categories were kept.
    public var category: String?
    /// How many times it was tried.
    public var attempts: Int
    /// When it failed (ISO 8601).
    public var failedAt: String
    /// The worker that gave up on it.
    public var worker: String
    /// The photo's size and modification time (seconds since 1970) when it failed: a photo that
    /// changes afterwards (its writer was not done) is tried again. Absent in older reports.
    public var bytes: Int64?
    public var modified: Double?
    /// Where it sits, relative to `failed/` (filled when read back).
    public var failedPath: String?
}
