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

    /// Marks `sourceName` (relative to `incoming/`) urgent.
    public func markUrgent(_ sourceName: String) {
        let fd = open(priorityMarker(sourceName), O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        if fd >= 0 { close(fd) }
    }

    /// Whether `sourceName` is marked urgent.
    public func isUrgent(_ sourceName: String) -> Bool {
        access(priorityMarker(sourceName), F_OK) == 0
    }

    /// Removes the mark of a photo that is done or failed.
    public func clearUrgent(_ sourceName: String) {
        unlink(priorityMarker(sourceName))
    }

    /// The names marked urgent.
    func urgentNames() -> Set<String> {
        guard let markers = try? FileManager.default.contentsOfDirectory(atPath: priority) else { return [] }
        return Set(markers.map { $0.replacingOccurrences(of: "%2F", with: "/").replacingOccurrences(of: "%25", with: "%") })
    }
}
