import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Identifies one worker process: `<host>.<pid>`, the name of its folder under `processing/`.
public struct WorkerIdentity: Sendable, Equatable {
    public var host: String
    public var pid: Int32

    /// This process.
    public static var current: WorkerIdentity {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count - 1)
        let host = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).replacingOccurrences(of: "/", with: "_")
        return WorkerIdentity(host: host.isEmpty ? "localhost" : host, pid: getpid())
    }

    /// The folder name.
    public var name: String { "\(host).\(pid)" }

    /// Parses a folder name; nil when it is not one.
    public init?(name: String) {
        guard let dot = name.lastIndex(of: "."), let pid = Int32(name[name.index(after: dot)...]) else { return nil }
        self.host = String(name[..<dot])
        self.pid = pid
    }

    public init(host: String, pid: Int32) {
        self.host = host
        self.pid = pid
    }

    /// Whether this worker is known to be gone: a process of this host that no longer exists.
    /// A worker of another host is never known dead; its lease decides.
    public var isKnownDead: Bool {
        guard host == WorkerIdentity.current.host else { return false }
        return kill(pid, 0) != 0 && errno == ESRCH
    }

    /// Whether the worker named `name` (`host.pid`) is known to be gone.
    @Sendable public static func isGone(_ name: String) -> Bool {
        WorkerIdentity(name: name)?.isKnownDead ?? false
    }
}

extension Spool {
    /// What `recover` did with one abandoned claim.
    public enum Recovery: Sendable, Hashable {
        /// The catalog had committed it: the leftover spool file was removed.
        case alreadyDone(String)
        /// It went back into `incoming/` to be processed again.
        case requeued(String)
    }

    /// Takes back the claims of workers that died: a claim whose worker process is gone, or
    /// whose lease (the claimed file's change time, set by the claim and renewed while it is
    /// processed; never the photo's own modification time) is older than `leaseSeconds`. A claim the catalog already committed (`isCommitted`) is only removed;
    /// any other goes back into `incoming/` and its recovery is counted, so that a photo that
    /// kills its worker every time ends in `failed/` instead of looping.
    public func recover(leaseSeconds: Double, except me: WorkerIdentity, now: Date = Date(),
                        isCommitted: (String) -> Bool) -> [Recovery] {
        guard let workers = try? FileManager.default.contentsOfDirectory(atPath: processing) else { return [] }
        var recovered: [Recovery] = []
        for folder in workers.sorted() where folder != me.name {
            let owner = WorkerIdentity(name: folder)
            let ownerDead = owner?.isKnownDead ?? true
            let base = processing + "/" + folder
            guard let walker = FileManager.default.enumerator(atPath: base) else { continue }
            var photos: [String] = []
            while let relative = walker.nextObject() as? String {
                // Any entry but a folder: a claimed link or FIFO is taken back like a photo.
                if !relative.hasSuffix(".json"), let entry = FileSystem.entryStatus(base + "/" + relative),
                   entry.kind != .directory || Self.isRefusedDirectory(base + "/" + relative) {
                    photos.append(relative)
                }
            }
            for relative in photos.sorted() {
                let path = base + "/" + relative
                guard let status = FileSystem.entryStatus(path) else { continue }
                let expired = now.timeIntervalSince1970 - status.changed > leaseSeconds
                guard ownerDead || expired else { continue }
                if isCommitted(path) {
                    unlink(path)
                    unlink(path + ".json")
                    clearRecoveries(of: relative)
                    recovered.append(.alreadyDone(relative))
                    continue
                }
                // Sidecar first: the photo's arrival in incoming/ is what makes it visible.
                if FileManager.default.fileExists(atPath: path + ".json") {
                    _ = try? FileSystem.moveNoReplace(path + ".json", to: incoming + "/" + relative + ".json")
                }
                guard let placed = try? FileSystem.moveNoReplace(path, to: incoming + "/" + relative) else { continue }
                let placedName = String(placed.dropFirst(incoming.count + 1))
                countRecovery(of: placedName)
                recovered.append(.requeued(placedName))
            }
            if ownerDead { try? FileManager.default.removeItem(atPath: base) }
        }
        return recovered
    }

    /// Moves back into `incoming/` the failed photos that changed after they failed (their size
    /// or modification time is not what the reason file recorded) and are now complete: no
    /// process holds them open for writing, and, where that cannot be told, they have not
    /// changed for `settleSeconds`. A producer that wrote in place and stalled past the settle
    /// time had its half photo failed as truncated; once it finishes, the photo is tried again
    /// on its own. Returns the names moved back.
    public func retryChanged(now: Date = Date()) -> [String] {
        var moved: [String] = []
        for report in failures() {
            guard let relative = report.failedPath, let bytes = report.bytes, let modified = report.modified,
                  let current = FileSystem.entryStatus(failed + "/" + relative), current.kind == .regular,
                  current.size != bytes || abs(current.modified - modified) > 0.000_001 else { continue }
            switch FileSystem.isOpenForWriting(failed + "/" + relative) {
            case true?: continue
            case nil where now.timeIntervalSince1970 - max(current.modified, current.changed) < settleSeconds: continue
            default: break
            }
            if let count = try? retryFailed(matching: { $0.failedPath == relative }), count > 0 { moved.append(relative) }
        }
        return moved
    }

    private func recoveryFile(_ sourceName: String) -> String {
        attempts + "/" + Self.flatName(sourceName)
    }

    /// How many times this photo was taken back from a dead worker.
    public func recoveries(of sourceName: String) -> Int {
        Int(FileSystem.status(recoveryFile(sourceName))?.size ?? 0)
    }

    /// Counts one recovery: one byte appended, which is atomic between processes.
    public func countRecovery(of sourceName: String) {
        let fd = open(recoveryFile(sourceName), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        var byte: UInt8 = 0x2E
        _ = write(fd, &byte, 1)
        close(fd)
    }

    public func clearRecoveries(of sourceName: String) {
        unlink(recoveryFile(sourceName))
    }
}
