/// What a copy did, for its one-line summary: the rows of every table (the source's, which the
/// copy was checked to hold too), what this run wrote, and how long it took.
public struct CatalogCopySummary: Sendable, Equatable {
    /// How this run found the PostgreSQL catalog.
    public enum Start: Sendable, Equatable {
        /// Empty: the copy began here.
        case fresh
        /// Holding part of this copy: it continued after the last batch committed.
        case resumed
        /// Holding a copy of this catalog as it was before it changed: copied again from the start.
        case restarted
        /// Holding this copy, finished, of the catalog as it still is: only the counts were checked.
        case alreadyDone
    }

    /// One table's rows, in both catalogs.
    public struct TableCount: Sendable, Equatable {
        public var table: String
        public var rows: Int
    }

    /// The SQLite file and the PostgreSQL address (without its password).
    public var source: String
    public var target: String
    public var start: Start
    /// Every table copied, in copy order.
    public var tables: [TableCount]
    /// Tables the PostgreSQL catalog has no counterpart for, left behind (running totals it
    /// keeps some other way, or tables the source holds no row of).
    public var leftBehind: [String]
    /// Rows this run wrote.
    public var rowsWritten: Int
    /// Wall-clock seconds from opening the source to the counts checked.
    public var seconds: Double
    /// Whether another process committed to the source while it was copied: the copy holds
    /// the catalog as it was when the copy began, not what came after.
    public var sourceChanged: Bool

    /// The rows of one table.
    public func rows(_ table: String) -> Int? {
        tables.first { $0.table == table }?.rows
    }

    /// One line, e.g. `copied /srv/catalog.sqlite into postgres://u@h:5432/db in 3.2 s: places 10, ..., pictures 2000, ...; every count matches`.
    public var line: String {
        let counts = tables.filter { !$0.table.hasSuffix("_totals") }.map { "\($0.table) \($0.rows)" }.joined(separator: ", ")
        let time = String(format: "%.1f s", seconds)
        let how: String
        switch start {
        case .fresh: how = "copied \(source) into \(target) in \(time)"
        case .resumed: how = "finished copying \(source) into \(target) in \(time) (continued an interrupted copy: \(rowsWritten) rows this run)"
        case .restarted: how = "copied \(source) into \(target) again in \(time) (it had changed since the last copy)"
        case .alreadyDone: how = "\(target) already holds a finished copy of \(source), which has not changed since; checked in \(time)"
        }
        let behind = leftBehind.isEmpty ? "" : "; not in PostgreSQL's schema, left behind: \(leftBehind.joined(separator: ", "))"
        return "\(how): \(counts)\(behind); every count matches"
    }
}
