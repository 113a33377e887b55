import GRDB

/// One run of `darkroom import`: the folders it was given, how originals were placed, and its
/// report once it ended. A run that was killed keeps the outcome `running` and no end time.
public struct ImportRunRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "imports"
    public static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
    public static let databaseColumnEncodingStrategy = DatabaseColumnEncodingStrategy.convertToSnakeCase

    /// How a run ended.
    public enum Outcome: String, Codable, Sendable {
        /// Still running, or killed before it could say.
        case running
        /// Every file of the folders was walked.
        case finished
        /// Stopped by a signal after finishing the photos in hand; run it again to continue.
        case interrupted
    }

    public var id: Int64?
    /// The folders imported, as a JSON list of absolute paths.
    public var roots: String
    /// `copy`, `move` or `link`.
    public var mode: String
    /// The process that ran it (`host.pid`).
    public var worker: String
    /// When it started, in seconds since 1970.
    public var startedAt: Double
    /// When it ended; nil while it runs, or when it was killed.
    public var finishedAt: Double?
    /// How it ended.
    public var outcome: Outcome
    /// The run's report, as `--report` writes it.
    public var reportJson: String?

    /// A run that starts now.
    public init(roots: String, mode: String, worker: String, startedAt: Double) {
        self.roots = roots
        self.mode = mode
        self.worker = worker
        self.startedAt = startedAt
        self.outcome = .running
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}
