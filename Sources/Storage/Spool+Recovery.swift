import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Identifies one worker process: `<host>.<pid>.<instance>`, the name of its folder under
/// `processing/`, the owner of its leases in a shared queue, and the writer named in its
/// temporary files. The host name and pid are for people to read; the instance (random at the
/// process's start, after a key of its machine: boot and PID namespace) is what tells two
/// processes apart, also on machines that share a host name (containers, cloned VMs, pods).
public struct WorkerIdentity: Sendable, Equatable {
    public var host: String
    public var pid: Int32
    /// `MMMMMMMMRRRRRRRR`: the machine's key (`machineKey`) and eight random hex digits; nil in
    /// names written before instances existed (`host.pid`).
    public var instance: String?

    /// This process, the same value for its whole life.
    public static let current: WorkerIdentity = {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count - 1)
        let host = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).replacingOccurrences(of: "/", with: "_")
        let random = String(format: "%08x", UInt32.random(in: 0...UInt32.max))
        return WorkerIdentity(host: host.isEmpty ? "localhost" : host, pid: getpid(), instance: machineKey + random)
    }()

    /// Eight hex digits that differ between machines and between PID namespaces of one machine
    /// (a hash of the kernel's boot id and this process's PID namespace): two processes whose
    /// keys agree see the same process table, so one may ask it whether the other is alive.
    public static let machineKey: String = {
        let boot = (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)) ?? ""
        let namespace = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/pid")) ?? ""
        guard !boot.isEmpty || !namespace.isEmpty else {
            // Nothing to tell this machine by: a key no other process shares, so none is ever judged from here.
            return String(format: "%08x", UInt32.random(in: 0...UInt32.max))
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a
        for byte in (boot.trimmingCharacters(in: .whitespacesAndNewlines) + "|" + namespace).utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return String(format: "%08x", UInt32(truncatingIfNeeded: hash ^ (hash >> 32)))
    }()

    /// The name: folder, lease owner and temporary-file writer.
    public var name: String { instance.map { "\(host).\(pid).\($0)" } ?? "\(host).\(pid)" }

    /// The machine key this identity was made on, when it carries one.
    public var machine: String? { instance.map { String($0.prefix(8)) } }

    /// Parses a name; nil when it is not one.
    public init?(name: String) {
        var parts = name.split(separator: ".", omittingEmptySubsequences: false)
        var instance: String?
        if parts.count >= 3, let last = parts.last, last.count == 16, last.allSatisfy(\.isHexDigit), Int32(parts[parts.count - 2]) != nil {
            instance = String(last)
            parts.removeLast()
        }
        guard parts.count >= 2, let pid = Int32(parts[parts.count - 1]) else { return nil }
        self.host = parts.dropLast().joined(separator: ".")
        self.pid = pid
        self.instance = instance
    }

    public init(host: String, pid: Int32, instance: String? = nil) {
        self.host = host
        self.pid = pid
        self.instance = instance
    }

    /// Whether this worker is known to be gone: a process of this machine and PID namespace
    /// (same host name and machine key) that no longer exists. A worker elsewhere (another
    /// machine, or a container with the same host name) is never known dead from here; its
    /// lease or heartbeat decides.
    public var isKnownDead: Bool {
        let me = WorkerIdentity.current
        guard host == me.host, name != me.name else { return false }
        if let machine, machine != WorkerIdentity.machineKey { return false }
        return kill(pid, 0) != 0 && errno == ESRCH
    }

    /// Whether the worker named `name` is known to be gone.
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
                // Counted before it is in view again: a process that dies between the two (or
                // on the photo itself, once it is taken again) never leaves it uncounted.
                let countedFirst = FileSystem.entryStatus(incoming + "/" + relative) == nil
                if countedFirst { countRecovery(of: relative) }
                guard let placed = try? FileSystem.moveNoReplace(path, to: incoming + "/" + relative) else { continue }
                let placedName = String(placed.dropFirst(incoming.count + 1))
                if !countedFirst || placedName != relative { countRecovery(of: placedName) }
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
