import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The spool's `queued/`: where a photo waits once the shared queue (a PostgreSQL catalog) has
/// a job for it. Each photo has a folder of its own, `queued/TOKEN/NAME` (and its sidecar
/// `NAME.json`), whose random token makes the place unique for ever: the job is keyed by it, so
/// a later photo of the same name is never taken for an earlier one.
///
/// The file moves in by one `rename` from `incoming/`, which only one process on any machine
/// can win; the job row follows. Should the process die in between, `queuedFiles` lists the
/// file and the next reconciliation records its job.
extension Spool {
    public var queued: String { root + "/queued" }

    /// Moves a ready photo (then its sidecar) from `incoming/` into a new folder under
    /// `queued/`. Returns its place there (`TOKEN/NAME`), or nil when another process took it first.
    public func admit(_ sourceName: String) throws(FileSystemError) -> String? {
        let file = Self.randomToken(length: 16) + "/" + sourceName
        let destination = queued + "/" + file
        try FileSystem.makeDirectories((destination as NSString).deletingLastPathComponent)
        let source = incoming + "/" + sourceName
        guard rename(source, destination) == 0 else {
            let error = FileSystemError.current("queue", source)
            removeEmptyQueuedParents(of: destination)
            if error.code == ENOENT { return nil }
            throw error
        }
        _ = rename(source + ".json", destination + ".json")
        return file
    }

    /// Whether the photo that arrived as `sourceName` waits under `queued/`, in a folder of its
    /// own (`TOKEN/NAME`): admitted from `incoming/`, its job perhaps not recorded yet (the row
    /// follows the move, and a reconciliation records it should that fail). Lists `queued/`: for
    /// a lookup that found the photo nowhere else.
    public func isQueued(_ sourceName: String) -> Bool {
        let tokens = (try? FileManager.default.contentsOfDirectory(atPath: queued)) ?? []
        return tokens.contains { FileSystem.status(queued + "/" + $0 + "/" + sourceName) != nil }
    }

    /// The claim through which a queued photo is processed, like a spool claim: its file, its
    /// sidecar when there is one, and how often a worker died on it before.
    public func queuedClaim(_ file: String, sourceName: String, worker: String, recoveries: Int) -> Claim {
        let path = queued + "/" + file
        let sidecar = FileSystem.status(path + ".json") != nil ? path + ".json" : nil
        return Claim(sourceName: sourceName, path: path, sidecarPath: sidecar, worker: worker, recoveries: recoveries)
    }

    /// Marks a queued photo in hand as alive (its change time, as a spool claim's lease), so that
    /// no reconciliation on another machine takes it for one left behind.
    public func renewQueued(_ file: String) {
        Self.markLeased(queued + "/" + file)
    }

    /// Removes a queued photo whose result the catalog has committed, with its sidecar, its
    /// import ticket and its folder: the ticket and sidecar first, the photo last, so that a
    /// process killed in between leaves the photo, which the reconciliation finds and removes
    /// (a ticket left alone is found by `removeOrphanCompanions`).
    /// Its staged copy goes too; should that fail, the reconciliation removes it later.
    public func consumeQueued(_ file: String) {
        let path = queued + "/" + file
        unlink(path + Self.importTicketSuffix)
        unlink(path + ".json")
        unlink(path)
        removeEmptyQueuedParents(of: path)
        try? staging?.discard(file, failure: nil)
    }

    /// What follows a queued photo's name in the name of its import ticket (`NAME.import.json`):
    /// the file an import writes beside each photo it hands to the shared queue, saying where the
    /// photo comes from and what its library's sidecars said.
    public static let importTicketSuffix = ".import.json"

    /// Places a photo of an imported library under `queued/TOKEN/NAME`, its ticket beside it
    /// (written first, so that a photo in view always has its ticket), and returns `TOKEN/NAME`.
    /// The photo is hard-linked from `source` when `link` is true and the file systems allow
    /// (no second copy of the bytes; the spool only ever unlinks its own name), else copied and
    /// fsynced. A photo already in that place (an import killed after placing it) is kept.
    public func placeImported(from source: String, token: String, name: String, ticket: [UInt8],
                              link: Bool) throws(FileSystemError) -> String {
        let file = token + "/" + name
        let destination = queued + "/" + file
        let folder = (destination as NSString).deletingLastPathComponent
        try FileSystem.makeDirectories(folder)
        let ticketStaging = FileSystem.temporaryPath(in: incoming)
        try FileSystem.writeSynced(ticket, toNew: ticketStaging)
        guard rename(ticketStaging, destination + Self.importTicketSuffix) == 0 else {
            let error = FileSystemError.current("queue", destination + Self.importTicketSuffix)
            unlink(ticketStaging)
            throw error
        }
        if FileSystem.entryStatus(destination) == nil {
            do throws(FileSystemError) {
                try placePhoto(from: source, at: destination, link: link)
            } catch {
                // No photo, no ticket: nothing is left for a reconciliation to take.
                unlink(destination + Self.importTicketSuffix)
                removeEmptyQueuedParents(of: destination)
                throw error
            }
        }
        try FileSystem.syncDirectory(folder)
        return file
    }

    private func placePhoto(from source: String, at destination: String, link: Bool) throws(FileSystemError) {
        if link, try FileSystem.linkDurably(source, to: destination) { return }
        let copy = FileSystem.temporaryPath(in: incoming)
        try FileSystem.writeSynced(try FileSystem.read(source), toNew: copy)
        guard rename(copy, destination) == 0 else {
            let error = FileSystemError.current("queue", destination)
            unlink(copy)
            throw error
        }
    }

    /// The import ticket beside a queued photo, nil when it has none (a photo of `incoming/`).
    public func importTicket(of file: String) throws(FileSystemError) -> [UInt8]? {
        guard hasImportTicket(file) else { return nil }
        return try FileSystem.read(queued + "/" + file + Self.importTicketSuffix)
    }

    /// Whether a queued photo came from an import (its ticket is beside it).
    public func hasImportTicket(_ file: String) -> Bool {
        FileSystem.entryStatus(queued + "/" + file + Self.importTicketSuffix) != nil
    }

    /// A folder name under `queued/` that no other photo has had: `length` random hex digits.
    public static func randomToken(length: Int) -> String {
        String((0..<length).map { _ in Character(String(UInt8.random(in: 0...15), radix: 16)) })
    }

    /// Moves a queued photo that cannot be processed into `failed/` with its reason, as a
    /// spool claim is (see `fail`), and removes its folder.
    @discardableResult
    /// With a staging area, the staged copy moves to its failed area beside the same reason, so
    /// that the failure is kept where every machine sees it (should that fail, the
    /// reconciliation moves it later).
    public func failQueued(_ claim: Claim, reason: String, category: String, attempts: Int) throws(FileSystemError) -> String {
        let placed = try fail(claim, reason: reason, category: category, attempts: attempts)
        removeEmptyQueuedParents(of: claim.path)
        if let staging, claim.path.hasPrefix(queued + "/") {
            let file = String(claim.path.dropFirst(queued.count + 1))
            let report = try? FileSystem.read(placed + ".error.json")
            try? staging.discard(file, failure: report ?? Array(reason.utf8))
        }
        return placed
    }

    /// The photos under `queued/` (not their sidecars), each as `TOKEN/NAME`, whose folder has
    /// not changed for `quietSeconds`: those a reconciliation looks at.
    public func queuedFiles(quietFor quietSeconds: Double, now: Date = Date()) -> [String] {
        var files: [String] = []
        forEachQueuedEntry { file, path in
            guard !file.hasSuffix(".json"), !(file as NSString).lastPathComponent.hasPrefix(FileSystem.temporaryPrefix),
                  let status = FileSystem.entryStatus(path), status.kind != .directory,
                  now.timeIntervalSince1970 - status.changed >= quietSeconds else { return }
            files.append(file)
        }
        return files
    }

    /// Calls `body` with every entry under `queued/`'s token folders (hidden ones aside), in the
    /// tokens' order, as `TOKEN/RELATIVE` and its path.
    private func forEachQueuedEntry(_ body: (_ file: String, _ path: String) -> Void) {
        guard let tokens = try? FileManager.default.contentsOfDirectory(atPath: queued) else { return }
        for token in tokens.sorted() where !token.hasPrefix(".") {
            guard let walker = FileManager.default.enumerator(atPath: queued + "/" + token) else { continue }
            while let relative = walker.nextObject() as? String {
                body(token + "/" + relative, queued + "/" + token + "/" + relative)
            }
        }
    }

    /// Removes the sidecars and import tickets under `queued/` whose photo is not beside them and
    /// that have not changed for `quietSeconds` (a process killed while it placed or removed a
    /// photo: an import writes the ticket before the photo), with their emptied folders, and
    /// returns them as `TOKEN/NAME.json` or `TOKEN/NAME.import.json`.
    public func removeOrphanCompanions(quietFor quietSeconds: Double, now: Date = Date()) -> [String] {
        var removed: [String] = []
        forEachQueuedEntry { file, path in
            let suffix = file.hasSuffix(Self.importTicketSuffix) ? Self.importTicketSuffix : file.hasSuffix(".json") ? ".json" : nil
            guard let suffix else { return }
            guard FileSystem.entryStatus(String(path.dropLast(suffix.count))) == nil, let status = FileSystem.entryStatus(path),
                  now.timeIntervalSince1970 - status.changed >= quietSeconds, unlink(path) == 0 else { return }
            removeEmptyQueuedParents(of: path)
            removed.append(file)
        }
        return removed
    }

    private func removeEmptyQueuedParents(of path: String) {
        var directory = (path as NSString).deletingLastPathComponent
        while directory.count > queued.count, directory.hasPrefix(queued + "/") {
            guard rmdir(directory) == 0 else { return }
            directory = (directory as NSString).deletingLastPathComponent
        }
    }
}
