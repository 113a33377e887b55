import Foundation

/// What `darkroom import` is asked to do.
public struct ImportOptions: Sendable {
    /// The folders to import.
    public var folders: [String]
    /// The author of every photo whose Darkroom sidecar does not name one.
    public var author: String?
    /// Walk and report what would happen, writing nothing.
    public var dryRun: Bool
    /// How originals are placed in the library, and whether sources are deleted.
    public var placement: ImportPlacement
    /// Process again the photos that failed in an earlier run (unchanged files are skipped otherwise).
    public var retryFailed: Bool
    /// How progress is shown; `auto` is resolved by the importer.
    public var progress: ImportProgressStyle
    /// Seconds between progress log lines (the `log` style).
    public var progressInterval: Double
    /// Log one line per photo.
    public var verbose: Bool
    /// `nice` steps by which the import's threads lower their CPU priority: below the spool's
    /// workers (a `darkroom run` at 0, `serve`'s at `server.worker_niceness`, 10), so that uploads
    /// processed on the same machine go first. 0 for none.
    public var niceness: Int

    /// The import's niceness unless told otherwise.
    public static let defaultNiceness = 15

    /// Seconds between progress log lines unless told otherwise.
    public static let defaultProgressInterval = 5.0

    /// Options for importing `folders`; every other setting has the default written here.
    public init(folders: [String], author: String? = nil, dryRun: Bool = false, placement: ImportPlacement = .copy,
                retryFailed: Bool = false, progress: ImportProgressStyle = .auto,
                progressInterval: Double = ImportOptions.defaultProgressInterval, verbose: Bool = false,
                niceness: Int = ImportOptions.defaultNiceness) {
        self.niceness = niceness
        self.folders = folders
        self.author = author
        self.dryRun = dryRun
        self.placement = placement
        self.retryFailed = retryFailed
        self.progress = progress
        self.progressInterval = progressInterval
        self.verbose = verbose
    }
}
