import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a photo sits in the spool.
public enum SpoolPlace: Sendable, Equatable {
    /// Waiting in `incoming/`.
    case incoming
    /// Claimed by a worker, in `processing/<worker>/`.
    case processing
    /// In `failed/`, with its reason file when it could be read.
    case failed(FailureReport?)
}

extension Spool {
    /// Where the photo that arrived as `sourceName` (relative to `incoming/`) is now; nil when it
    /// is not in the spool: done, or never there. Areas are looked at in the order a photo moves
    /// through them, so a photo moving on meanwhile is still found.
    public func place(of sourceName: String) -> SpoolPlace? {
        if FileSystem.status(incoming + "/" + sourceName) != nil { return .incoming }
        let workers = (try? FileManager.default.contentsOfDirectory(atPath: processing)) ?? []
        if workers.contains(where: { FileSystem.status(processing + "/" + $0 + "/" + sourceName) != nil }) {
            return .processing
        }
        if FileSystem.status(failed + "/" + sourceName) != nil {
            return .failed(failureReport(sourceName))
        }
        return nil
    }

    /// Throws when a photo could not be queued now: creates and removes a hidden file in
    /// `incoming/` (named like the temporary files that sweeps remove, should it be left).
    public func checkWritable() throws(FileSystemError) {
        let probe = incoming + "/" + FileSystem.temporaryPrefix + "probe-" + UUID().uuidString
        let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .current("create", probe) }
        close(fd)
        unlink(probe)
    }

    /// The reason file of a photo in `failed/` (relative to it), read back.
    public func failureReport(_ relative: String) -> FailureReport? {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        guard let data = FileManager.default.contents(atPath: failed + "/" + relative + ".error.json"),
              var report = try? decoder.decode(FailureReport.self, from: data) else { return nil }
        report.failedPath = relative
        return report
    }
}
