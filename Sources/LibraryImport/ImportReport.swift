import Foundation
import Ingest
import Terminal

/// What one `darkroom import` did (or, with `--dry-run`, would do): printed as a summary at the
/// end, written as JSON by `--report FILE`, and kept with the run in the catalog.
public struct ImportReport: Sendable, Codable, Equatable {
    /// The folders imported (absolute, symlinks resolved).
    public var roots: [String]
    /// How originals were placed: copy, move or link.
    public var mode: ImportPlacement
    /// Whether this was a dry run (nothing written).
    public var dryRun: Bool
    /// Whether a signal stopped the run before every file was walked; run it again to continue.
    public var interrupted: Bool
    /// When the run started (ISO 8601, UTC).
    public var startedAt: String
    /// How long it took, in seconds.
    public var seconds: Double
    /// Photos processed per second (added, duplicates and failures of this run).
    public var photosPerSecond: Double
    /// Files found that may be photos: every regular file that is not hidden, a system file or a sidecar.
    public var found: Int
    /// Photos that became new pictures (dry run: photos that would be processed).
    public var imported: Int
    /// Photos whose bytes were already a picture (from this import, an earlier one, or the spool).
    public var duplicates: Int
    /// Photos the journal shows done by an earlier run, skipped.
    public var alreadyImported: Int
    /// Photos that failed in an earlier run and were not tried again (see `--retry-failed`).
    public var previouslyFailed: Int
    /// Photos that failed in this run.
    public var failed: Int
    /// The failures of this run: each reason with the files it applies to.
    public var failedByReason: [String: [String]]
    /// The failures of this run by category (`bad_input`, `unsupported_format`, `storage`, ...).
    public var failedByCategory: [String: Int]
    /// Files of no format Darkroom reads, by their bytes.
    public var skipped: Int
    /// The skipped files by what their bytes look like.
    public var skippedByType: [String: [String]]
    /// Hidden and system files and folders passed over.
    public var hiddenOrSystem: Int
    /// Symlinks, loops and unreadable folders, each with why it was not followed.
    public var notFollowed: [ImportSkip]
    /// Photos that came with each kind of sidecar: `darkroom`, `takeout`, `xmp`.
    public var sidecars: [String: Int]
    /// Originals copied into the library.
    public var copied: Int
    /// Originals hard-linked into the library.
    public var linked: Int
    /// Sources deleted after their commit (`--move`).
    public var sourcesDeleted: Int
    /// Notes on how originals were placed (a root on another file system than the library).
    public var placementNotes: [String]
    /// Moments created while the import ran.
    public var momentsCreated: Int
    /// Moments that hold the pictures this import added.
    public var momentsWithImportedPictures: Int
    /// The run's id in the catalog's `imports` table (none for a dry run).
    public var importId: Int64?

    enum CodingKeys: String, CodingKey {
        case roots, mode, interrupted, seconds, found, imported, duplicates, failed, skipped, sidecars, copied, linked
        case dryRun = "dry_run"
        case startedAt = "started_at"
        case photosPerSecond = "photos_per_second"
        case alreadyImported = "already_imported"
        case previouslyFailed = "previously_failed"
        case failedByReason = "failed_by_reason"
        case failedByCategory = "failed_by_category"
        case skippedByType = "skipped_by_type"
        case hiddenOrSystem = "hidden_or_system"
        case notFollowed = "not_followed"
        case sourcesDeleted = "sources_deleted"
        case placementNotes = "placement_notes"
        case momentsCreated = "moments_created"
        case momentsWithImportedPictures = "moments_with_imported_pictures"
        case importId = "import_id"
    }

    /// An empty report for a run that starts now.
    init(roots: [String], mode: ImportPlacement, dryRun: Bool, startedAt: Date) {
        self.roots = roots
        self.mode = mode
        self.dryRun = dryRun
        interrupted = false
        self.startedAt = ISO8601DateFormatter().string(from: startedAt)
        seconds = 0
        photosPerSecond = 0
        found = 0
        imported = 0
        duplicates = 0
        alreadyImported = 0
        previouslyFailed = 0
        failed = 0
        failedByReason = [:]
        failedByCategory = [:]
        skipped = 0
        skippedByType = [:]
        hiddenOrSystem = 0
        notFollowed = []
        sidecars = [:]
        copied = 0
        linked = 0
        sourcesDeleted = 0
        placementNotes = []
        momentsCreated = 0
        momentsWithImportedPictures = 0
    }

    /// The report as pretty, stable JSON (sorted keys).
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The files listed per group in the text summary; `--report` lists them all.
    public static let listedPerGroup = 5

    /// The human summary printed at the end of a run.
    public func summary() -> String {
        var lines: [String] = []
        let rate = String(format: "%.1f", photosPerSecond)
        let time = ProgressBar.duration(seconds)
        if dryRun {
            lines.append("import --dry-run: \(found) file\(found == 1 ? "" : "s") found in \(time); nothing was written")
            lines.append(row("would import", imported, imported > 0 ? "(duplicates show only when processed: a dry run reads no photo whole)" : ""))
        } else {
            let state = interrupted ? "interrupted (run the same command again to continue)" : "finished"
            lines.append("import \(state) in \(time), \(rate) photos/s")
            lines.append(row("imported", imported))
            lines.append(row("duplicates", duplicates))
        }
        if alreadyImported > 0 { lines.append(row("already imported", alreadyImported, "(by an earlier run: skipped)")) }
        if previouslyFailed > 0 { lines.append(row("failed before", previouslyFailed, "(not tried again; --retry-failed tries them)")) }
        let categories = failedByCategory.keys.sorted().map { "\($0) \(failedByCategory[$0] ?? 0)" }
        lines.append(row(dryRun ? "would fail" : "failed", failed, categories.isEmpty ? "" : "(\(categories.joined(separator: ", ")))"))
        lines += groups(failedByReason)
        lines.append(row("skipped", skipped, skipped > 0 ? "(not a photo format Darkroom reads)" : ""))
        lines += groups(skippedByType)
        if hiddenOrSystem > 0 { lines.append(row("hidden, system", hiddenOrSystem, "(.DS_Store, Thumbs.db, @eaDir, ...: passed over)")) }
        if !notFollowed.isEmpty {
            lines.append(row("not followed", notFollowed.count))
            for skip in notFollowed.prefix(Self.listedPerGroup) { lines.append("      \(skip.path): \(skip.reason)") }
            if notFollowed.count > Self.listedPerGroup { lines.append("      … and \(notFollowed.count - Self.listedPerGroup) more (--report FILE lists all)") }
        }
        if !sidecars.isEmpty {
            lines.append("  sidecars          " + sidecars.keys.sorted().map { "\($0) \(sidecars[$0] ?? 0)" }.joined(separator: ", "))
        }
        if !dryRun {
            var originals = "copied \(copied)"
            if mode != .copy { originals += ", linked \(linked)" }
            if mode == .move { originals += ", sources deleted \(sourcesDeleted)" }
            lines.append("  originals         " + originals)
            lines += placementNotes.map { "      " + $0 }
            lines.append(row("moments created", momentsCreated, "(the pictures added are in \(momentsWithImportedPictures) moment\(momentsWithImportedPictures == 1 ? "" : "s"))"))
        }
        return lines.joined(separator: "\n")
    }

    private func row(_ label: String, _ count: Int, _ note: String = "") -> String {
        let padded = label.padding(toLength: 16, withPad: " ", startingAt: 0)
        let number = String(count)
        let aligned = String(repeating: " ", count: max(0, 6 - number.count)) + number
        return "  \(padded)\(aligned)" + (note.isEmpty ? "" : "  " + note)
    }

    private func groups(_ byKey: [String: [String]]) -> [String] {
        var lines: [String] = []
        for key in byKey.keys.sorted(by: { (byKey[$0]?.count ?? 0, $1) > (byKey[$1]?.count ?? 0, $0) }) {
            let files = (byKey[key] ?? []).sorted()
            lines.append("      \(files.count) × \(key)")
            for file in files.prefix(Self.listedPerGroup) { lines.append("          \(file)") }
            if files.count > Self.listedPerGroup { lines.append("          … and \(files.count - Self.listedPerGroup) more (--report FILE lists all)") }
        }
        return lines
    }
}
