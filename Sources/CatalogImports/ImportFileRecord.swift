import Catalog
import GRDB

/// One file of an imported library in the import journal: the version of the file that was
/// processed (path, size, modification time) and what became of it. A file whose path, size and
/// time match a row is done and is skipped by the next import of the same library.
public struct ImportFileRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "import_files"
    public static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
    public static var databaseColumnEncodingStrategy: DatabaseColumnEncodingStrategy { ColumnName.encoding }

    /// The file's absolute path, as the import walked it.
    public var sourcePath: String
    /// The folder it lies in (absolute): the journal is read one folder at a time.
    public var directory: String
    /// Its size in bytes when it was processed.
    public var size: Int64
    /// Its modification time when it was processed, in nanoseconds since 1970.
    public var modifiedNs: Int64
    /// Added, duplicate or failed.
    public var outcome: JobRecord.Outcome
    /// The content hash, once read.
    public var sha256: String?
    /// The picture it made, or the picture it duplicates.
    public var pictureId: Int64?
    /// The job row written with the picture's commit.
    public var jobId: Int64?
    /// Why it failed (one line), for a failed file.
    public var error: String?
    /// The sidecars read with it, as a JSON list of `kind:name` (`takeout:IMG_1.jpg.json`).
    public var sidecars: String?
    /// The import run that processed it.
    public var importId: Int64?
    /// When it was recorded, in seconds since 1970.
    public var finishedAt: Double

    /// A journal row with every field given.
    public init(sourcePath: String, directory: String, size: Int64, modifiedNs: Int64, outcome: JobRecord.Outcome,
                sha256: String?, pictureId: Int64?, jobId: Int64?, error: String?, sidecars: String?,
                importId: Int64?, finishedAt: Double) {
        self.sourcePath = sourcePath
        self.directory = directory
        self.size = size
        self.modifiedNs = modifiedNs
        self.outcome = outcome
        self.sha256 = sha256
        self.pictureId = pictureId
        self.jobId = jobId
        self.error = error
        self.sidecars = sidecars
        self.importId = importId
        self.finishedAt = finishedAt
    }

    /// Whether this row records the file version with this size and modification time.
    public func matches(size: Int64, modifiedNs: Int64) -> Bool {
        self.size == size && self.modifiedNs == modifiedNs
    }
}

extension ImportFileRecord {
    /// The journal rows of the files of one folder, by absolute path.
    public static func inDirectory(_ directory: String, in db: Database) throws -> [String: ImportFileRecord] {
        let rows = try ImportFileRecord.filter(Column("directory") == directory).fetchAll(db)
        return Dictionary(rows.map { ($0.sourcePath, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// How many distinct moments hold the pictures an import added.
    public static func momentCount(ofImport importId: Int64, in db: Database) throws -> Int {
        try Int.fetchOne(db, sql: """
            SELECT COUNT(DISTINCT p.moment_id) FROM import_files f JOIN pictures p ON p.id = f.picture_id
            WHERE f.import_id = ? AND f.outcome = 'added' AND p.moment_id IS NOT NULL
            """, arguments: [importId]) ?? 0
    }
}
