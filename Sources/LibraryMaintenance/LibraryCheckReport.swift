import Foundation

/// One thing `library check` found: a stored file no picture names, or a picture's file that is
/// missing or not the size the catalog records; with what `--repair` did about it.
public struct LibraryFinding: Sendable, Encodable, Equatable {
    public enum Problem: String, Sendable, Encodable {
        /// A file under `originals/` or `variants/` that no picture or variant names.
        case orphan
        /// A file the catalog names that the store does not hold.
        case missing
        /// A file the catalog names that the store holds at another size (truncated, or other bytes).
        case damaged
        /// An upload in parts begun and neither completed nor aborted (a process killed while it
        /// sent a large original): its parts take space, unseen by a listing, until it is aborted.
        case unfinished
    }

    /// What `--repair` did.
    public enum Action: String, Sendable, Encodable {
        /// The orphan was removed.
        case removed
        /// The unfinished upload was aborted, its parts freed.
        case aborted
        /// The orphan was left: younger than `--orphan-age`, or its time is unknown.
        case kept
        /// The variant was rendered again from its original and stored.
        case rerendered
        /// The original was put back from `library.backup_dir`.
        case restored
        /// Nothing could be done here: `note` says what can.
        case unrepaired
    }

    public var problem: Problem
    public var path: String
    /// The picture the file belongs to (missing and damaged files).
    public var pictureId: Int64?
    /// `original`, or the variant's name, for missing and damaged files.
    public var file: String?
    /// The size stored, and the size the catalog records.
    public var storedSize: Int64?
    public var recordedSize: Int64?
    /// When an orphan was written, and how long ago.
    public var modified: Date?
    public var ageSeconds: Double?
    public var action: Action?
    /// Why it was kept, why it could not be repaired, or how it was.
    public var note: String?
    /// The upload's id, for an unfinished upload.
    public var uploadId: String?

    /// Whether the problem is gone (after `--repair`).
    public var isResolved: Bool {
        action == .removed || action == .aborted || action == .rerendered || action == .restored
    }

    /// The finding on one line, e.g. `missing  picture 17  variant thumb  variants/thumb/ab/cd/...jpg`.
    public var line: String {
        var text: String
        switch problem {
        case .orphan:
            text = "orphan   \(path)  \(storedSize ?? 0) bytes"
            if let modified, let ageSeconds {
                text += ", written \(LibraryCheckReport.timestamp(modified)) (\(LibraryCopyProgress.duration(ageSeconds)) ago)"
            }
        case .missing:
            text = "missing  picture \(pictureId ?? 0)  \(describedFile)  \(path)"
        case .damaged:
            text = "damaged  picture \(pictureId ?? 0)  \(describedFile)  \(path)  (\(storedSize ?? 0) bytes stored, the catalog records \(recordedSize ?? 0))"
        case .unfinished:
            text = "unfinished upload  \(path)"
            if let modified, let ageSeconds {
                text += ", begun \(LibraryCheckReport.timestamp(modified)) (\(LibraryCopyProgress.duration(ageSeconds)) ago)"
            }
        }
        if let action {
            text += ": \(action.rawValue)"
            if let note { text += " (\(note))" }
        }
        return text
    }

    private var describedFile: String {
        guard let file else { return "file" }
        return file == "original" ? "original" : "variant \(file)"
    }
}

/// What `library check` found in one store, and what `--repair` did.
public struct LibraryCheckReport: Sendable, Encodable, Equatable {
    /// The store checked: a directory or `s3://bucket/prefix/`.
    public var store: String
    /// Files listed under `originals/` and `variants/`.
    public var objects: Int
    /// Pictures and variants in the catalog.
    public var pictures: Int
    public var variants: Int
    public var repair: Bool
    public var orphanAgeSeconds: Double
    public var findings: [LibraryFinding]
    /// Orphans, missing and damaged files found.
    public var orphans: Int
    public var missing: Int
    public var damaged: Int
    /// Uploads in parts begun and never completed or aborted.
    public var unfinished: Int
    /// Findings still there after the run (all of them without `--repair`).
    public var unresolved: Int
    /// Nothing found.
    public var clean: Bool

    public init(store: String, objects: Int, pictures: Int, variants: Int, repair: Bool, orphanAgeSeconds: Double, findings: [LibraryFinding]) {
        self.store = store
        self.objects = objects
        self.pictures = pictures
        self.variants = variants
        self.repair = repair
        self.orphanAgeSeconds = orphanAgeSeconds
        self.findings = findings
        orphans = findings.filter { $0.problem == .orphan }.count
        missing = findings.filter { $0.problem == .missing }.count
        damaged = findings.filter { $0.problem == .damaged }.count
        unfinished = findings.filter { $0.problem == .unfinished }.count
        unresolved = findings.filter { !$0.isResolved }.count
        clean = findings.isEmpty
    }

    /// The exit status: 0 when nothing was found, or `--repair` resolved everything found; 1 else.
    public var exitStatus: Int32 { unresolved == 0 ? 0 : 1 }

    /// The closing lines: the counts, then what can be done about what is left.
    public var summaryLines: [String] {
        var lines = ["\(store): \(objects) files, \(pictures) pictures with \(variants) variants in the catalog: "
            + "\(orphans) orphan\(orphans == 1 ? "" : "s"), \(missing) missing, \(damaged) damaged"
            + (unfinished > 0 ? ", \(unfinished) unfinished upload\(unfinished == 1 ? "" : "s")" : "")
            + (repair ? "; \(findings.count - unresolved) repaired, \(unresolved) left" : "")]
        guard !repair else {
            if findings.contains(where: { $0.action == .kept && $0.problem == .orphan }) {
                lines.append("orphans younger than \(LibraryCopyProgress.duration(orphanAgeSeconds)) are kept: a worker writes a "
                    + "photo's files before it commits its picture, so a young orphan may be a picture on its way; run again later")
            }
            return lines
        }
        if orphans > 0 {
            lines.append("--repair removes the orphans written more than \(LibraryCopyProgress.duration(orphanAgeSeconds)) ago (--orphan-age)")
        }
        if unfinished > 0 {
            lines.append("--repair aborts the unfinished uploads begun more than \(LibraryCopyProgress.duration(orphanAgeSeconds)) ago "
                + "(--orphan-age), freeing their parts")
        }
        let lost = findings.filter { $0.problem == .missing || $0.problem == .damaged }
        let variantsLost = lost.filter { $0.file != "original" }.count
        let originalsLost = lost.filter { $0.file == "original" }.count
        if variantsLost > 0 {
            lines.append(variantsLost == 1 ? "--repair renders the lost variant again from its original, if that is there"
                : "--repair renders the \(variantsLost) lost variants again from their originals, where those are there")
        }
        if originalsLost > 0 {
            lines.append("--repair puts lost originals back from library.backup_dir when it holds them; otherwise copy the photo "
                + "(the same bytes: its SHA-256 is the file name) to the path named")
        }
        return lines
    }

    /// `2024-05-01T10:00:00Z`.
    static func timestamp(_ date: Date) -> String {
        ISO8601DateFormatter.string(from: date, timeZone: TimeZone(identifier: "UTC") ?? .current, formatOptions: [.withInternetDateTime])
    }
}
