import Catalog
import Failures
import PostgresStore

/// Why `darkroom catalog copy` cannot start or finish: one line naming what and what to do.
/// Nothing is ever written to the source; what was copied before a failure stays in the
/// PostgreSQL catalog, and the same command continues from there.
public enum CatalogCopyError: Error, CategorizedError, CustomStringConvertible, Sendable, Equatable {
    /// No SQLite catalog at this path.
    case sourceMissing(String)
    /// The file cannot be opened or read as a Darkroom catalog.
    case sourceUnreadable(String, reason: String)
    /// The catalog's schema is not this version's (older, newer, or with a table the copy
    /// does not know).
    case sourceSchema(String, reason: String)
    /// The PostgreSQL catalog cannot be reached, opened or migrated.
    case target(CatalogError)
    /// The PostgreSQL catalog already holds rows that no copy of this source wrote.
    case targetNotEmpty(location: String, holds: String)
    /// The PostgreSQL catalog holds (part of) a copy of another SQLite catalog.
    case targetHoldsOtherCopy(location: String, copiedFrom: String)
    /// Rows were added to or removed from the PostgreSQL catalog since this copy wrote them.
    case targetChanged(location: String, table: String, there: Int, copied: Int)
    /// Another copy into the same database is running.
    case copyRunning(location: String)
    /// A table's columns cannot be moved as they are (a column PostgreSQL lacks, or a type
    /// the copy does not move).
    case schemaMismatch(table: String, reason: String)
    /// A value the source holds does not fit its column's type in PostgreSQL.
    case valueMismatch(table: String, column: String, rowid: Int64, reason: String)
    /// PostgreSQL refused or failed a statement while copying `table`.
    case statement(table: String, PostgresError)
    /// The source could not be read while copying `table`.
    case sourceRead(table: String, reason: String)
    /// The finished copy's counts differ from its source's.
    case countsDiffer([CountDifference])

    public var category: FailureCategory {
        switch self {
        case .sourceMissing, .targetNotEmpty, .targetHoldsOtherCopy, .targetChanged, .copyRunning: .configuration
        case .sourceUnreadable, .sourceSchema, .sourceRead: .catalog
        case .target(let error): error.category
        case .schemaMismatch, .valueMismatch, .countsDiffer: .internal
        case .statement(_, let error): error.category
        }
    }

    public var description: String {
        switch self {
        case .sourceMissing(let path):
            "no SQLite catalog at \(path): name the catalog to copy with --from, or set catalog.path"
        case .sourceUnreadable(let path, let reason):
            "cannot read the SQLite catalog \(path): \(reason); name a Darkroom catalog with --from"
        case .sourceSchema(let path, let reason):
            "the SQLite catalog \(path) \(reason)"
        case .target(let error):
            "the PostgreSQL catalog: \(error.description)"
        case .targetNotEmpty(let location, let holds):
            "the PostgreSQL catalog \(location) already holds \(holds) that are not a copy of this catalog: "
                + "copy into an empty database (createdb NAME, then --to postgres://.../NAME)"
        case .targetHoldsOtherCopy(let location, let source):
            "the PostgreSQL catalog \(location) holds a copy of another SQLite catalog (\(source)): "
                + "copy this one into an empty database (createdb NAME, then --to postgres://.../NAME)"
        case .targetChanged(let location, let table, let there, let copied):
            "the PostgreSQL catalog \(location) has \(there) rows in \(table) where this copy wrote \(copied): something else writes to it "
                + "(a worker started on it?); stop that, or copy into an empty database"
        case .copyRunning(let location):
            "another `darkroom catalog copy` into \(location) is running: wait for it to end (or stop it, then run this again)"
        case .schemaMismatch(let table, let reason):
            "cannot copy table \(table): \(reason); this version of darkroom cannot copy this catalog"
        case .valueMismatch(let table, let column, let rowid, let reason):
            "cannot copy row \(rowid) of \(table): its \(column) \(reason); the SQLite catalog may be damaged (sqlite3 FILE 'PRAGMA integrity_check')"
        case .statement(let table, let error):
            "copying \(table) failed: \(error.description); run the same command again to continue from there"
        case .sourceRead(let table, let reason):
            "reading \(table) from the SQLite catalog failed: \(reason); run the same command again to continue from there"
        case .countsDiffer(let differences):
            "the copy does not match its source: " + differences.map(\.description).joined(separator: "; ")
                + "; was either catalog written during the copy? Stop what writes to them and run the same command again"
        }
    }
}

/// One table (or derived index) whose row count differs between the source and the copy.
public struct CountDifference: Sendable, Equatable, CustomStringConvertible {
    /// The table, as both stores name it (or what is counted: `pictures.position`).
    public var table: String
    /// Rows in the SQLite catalog.
    public var source: Int
    /// Rows in the PostgreSQL catalog.
    public var target: Int

    public init(table: String, source: Int, target: Int) {
        self.table = table
        self.source = source
        self.target = target
    }

    public var description: String { "\(table) has \(source) in SQLite and \(target) in PostgreSQL" }
}
