import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Urgent photos: uploads, and those a backend enqueues with `--priority high`, go before the
/// drop folder's and the imports' backlog. Each has an empty marker in `priority/`, named after
/// its name in `incoming/` (`/` written `%2F`), removed when the photo is done or failed. A
/// marker is a hint: one lost in a crash only makes its photo wait its turn.
extension Spool {
    /// A name relative to `incoming/` as one file name (`%` written `%25`, `/` written `%2F`),
    /// for the files kept per photo beside the spool's areas.
    static func flatName(_ sourceName: String) -> String {
        sourceName.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "/", with: "%2F")
    }

    private func priorityMarker(_ sourceName: String) -> String {
        priority + "/" + Self.flatName(sourceName)
    }

    /// Marks `sourceName` (relative to `incoming/`) urgent. The marker's modification time is
    /// the time of its latest mark, also when it was there already.
    public func markUrgent(_ sourceName: String) {
        let fd = open(priorityMarker(sourceName), O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        futimens(fd, nil)
        close(fd)
    }

    /// Whether `sourceName` is marked urgent.
    public func isUrgent(_ sourceName: String) -> Bool {
        access(priorityMarker(sourceName), F_OK) == 0
    }

    /// Removes the mark of a photo that is done or failed.
    public func clearUrgent(_ sourceName: String) {
        unlink(priorityMarker(sourceName))
    }

    /// The name relative to `incoming/` that a flat name (`flatName`) stands for.
    static func sourceName(ofFlat flat: String) -> String {
        flat.replacingOccurrences(of: "%2F", with: "/").replacingOccurrences(of: "%25", with: "%")
    }

    /// The names marked urgent: the photos in flight whose mark is in `priority/`, never the
    /// backlog. Read on every wake of a watching run, to list `incoming/` at once for an urgent
    /// arrival.
    public func urgentNames() -> Set<String> {
        guard let markers = try? FileManager.default.contentsOfDirectory(atPath: priority) else { return [] }
        return Set(markers.map(Self.sourceName(ofFlat:)))
    }

    /// Removes the markers left without their photo (a process killed between marking an
    /// upload and publishing it, or a photo finished before its mark was made) and returns the
    /// names they stood for. A marker is kept while its photo is in `incoming/` or claimed
    /// under `processing/`, and while it is younger than `seconds`: an upload is marked just
    /// before it comes into view.
    public func removeOrphanPriorityMarkers(olderThan seconds: Double, now: Date = Date()) -> [String] {
        guard let markers = try? FileManager.default.contentsOfDirectory(atPath: priority) else { return [] }
        let instant = now.timeIntervalSince1970
        let workers = (try? FileManager.default.contentsOfDirectory(atPath: processing)) ?? []
        var removed: [String] = []
        for marker in markers.sorted() {
            let path = priority + "/" + marker
            guard let status = FileSystem.entryStatus(path), instant - status.modified >= seconds else { continue }
            let name = Self.sourceName(ofFlat: marker)
            if FileSystem.entryStatus(incoming + "/" + name) != nil { continue }
            if workers.contains(where: { FileSystem.entryStatus(processing + "/" + $0 + "/" + name) != nil }) { continue }
            if unlink(path) == 0 { removed.append(name) }
        }
        return removed
    }
}
