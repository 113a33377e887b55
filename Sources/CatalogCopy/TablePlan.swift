import GRDB
import PostgresNIO

/// How one table's rows go from SQLite to PostgreSQL: the columns both have (generated ones
/// left to PostgreSQL), each value bound as its PostgreSQL column's type, in multi-row INSERTs
/// that skip a row already there, so that a batch run twice adds nothing the second time.
struct TablePlan {
    /// A PostgreSQL column's type as the copy binds it.
    enum Kind: Sendable, Equatable {
        case integer, real, text, boolean

        init?(postgresType: String) {
            switch postgresType {
            case "bigint", "integer", "smallint": self = .integer
            case "double precision", "real": self = .real
            case "text", "character varying": self = .text
            case "boolean": self = .boolean
            default: return nil
            }
        }
    }

    /// One PostgreSQL column as `information_schema` describes it.
    struct TargetColumn: Sendable {
        var name: String
        var type: String
        var generated: Bool
        var identity: Bool
        var alwaysIdentity: Bool
        var required: Bool
    }

    let table: CopiedTable
    /// The SQLite columns copied, in order, and the type each is bound as.
    let columns: [(name: String, kind: Kind)]
    /// The columns PostgreSQL numbers itself (identity): moved past the copied ids at the end.
    let identityColumns: [String]
    /// The primary key, which a totals row is replaced on.
    let keyColumns: [String]
    /// Whether an identity column is GENERATED ALWAYS, which only `OVERRIDING SYSTEM VALUE` may set.
    let overriding: Bool
    /// Where `id` is among `columns` (the rows' key for the derived values).
    let idIndex: Int?
    /// Rows per INSERT: the batch size, within PostgreSQL's 65,535 parameters a statement.
    let batchRows: Int

    /// The PostgreSQL parameters one statement may carry.
    static let maximumParameters = 65_535

    /// Pairs the source's columns with PostgreSQL's; refuses a column PostgreSQL lacks, one of
    /// a type the copy does not move, and a PostgreSQL column the copy cannot leave unfilled.
    init(_ table: CopiedTable, sourceColumns: [String], targetColumns: [TargetColumn], keyColumns: [String],
         batchSize: Int) throws(CatalogCopyError) {
        let target = Dictionary(targetColumns.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var columns: [(name: String, kind: Kind)] = []
        for name in sourceColumns {
            guard let column = target[name] else {
                throw .schemaMismatch(table: table.name, reason: "its column \(name) has no counterpart in the PostgreSQL catalog")
            }
            // A column PostgreSQL computes (a generated duration) takes no value.
            if column.generated { continue }
            guard let kind = Kind(postgresType: column.type) else {
                throw .schemaMismatch(table: table.name, reason: "its column \(name) is of type \(column.type) in PostgreSQL, which catalog copy does not move")
            }
            columns.append((name, kind))
        }
        let copied = Set(sourceColumns)
        if let unfilled = targetColumns.first(where: { $0.required && !copied.contains($0.name) }) {
            throw .schemaMismatch(table: table.name, reason: "PostgreSQL's column \(unfilled.name) must have a value and SQLite has none to give")
        }
        self.table = table
        self.columns = columns
        self.identityColumns = targetColumns.filter(\.identity).map(\.name).filter(copied.contains)
        self.keyColumns = keyColumns
        self.overriding = targetColumns.contains { $0.alwaysIdentity && copied.contains($0.name) }
        self.idIndex = columns.firstIndex { $0.name == "id" }
        self.batchRows = max(1, min(batchSize, Self.maximumParameters / max(1, columns.count)))
    }

    /// One INSERT of `rows` (each the rowid, then the values of `columns`). A row whose key is
    /// already there is skipped; a totals row replaces the one there.
    func insert(_ rows: [Row]) throws(CatalogCopyError) -> PostgresQuery {
        var binds = PostgresBindings(capacity: rows.count * columns.count)
        var groups: [String] = []
        groups.reserveCapacity(rows.count)
        for row in rows {
            let rowid: Int64 = row[0]
            let first = binds.count + 1
            for (index, column) in columns.enumerated() {
                try Self.bind(row[index + 1] as DatabaseValue, as: column.kind, into: &binds,
                              table: table.name, column: column.name, rowid: rowid)
            }
            groups.append("(" + (first..<first + columns.count).map { "$\($0)" }.joined(separator: ", ") + ")")
        }
        let names = columns.map { "\"\($0.name)\"" }.joined(separator: ", ")
        let conflict: String
        if table.totals && !keyColumns.isEmpty {
            let updates = columns.filter { !keyColumns.contains($0.name) }.map { "\"\($0.name)\" = excluded.\"\($0.name)\"" }
            conflict = "ON CONFLICT (\(keyColumns.map { "\"\($0)\"" }.joined(separator: ", "))) DO UPDATE SET " + updates.joined(separator: ", ")
        } else {
            conflict = "ON CONFLICT DO NOTHING"
        }
        return PostgresQuery(unsafeSQL: "INSERT INTO \"\(table.name)\" (\(names)) \(overriding ? "OVERRIDING SYSTEM VALUE " : "")VALUES "
                             + groups.joined(separator: ", ") + " " + conflict, binds: binds)
    }

    /// The `id` of each row (the rows' own key), for the derived values.
    func ids(of rows: [Row]) -> [Int64] {
        guard let idIndex else { return [] }
        return rows.compactMap { $0[idIndex + 1] as Int64? }
    }

    /// One SQLite value as a parameter of its PostgreSQL column's type. SQLite stores what it
    /// is given; a value of another kind than its column's is refused, never reinterpreted.
    static func bind(_ value: DatabaseValue, as kind: Kind, into binds: inout PostgresBindings,
                     table: String, column: String, rowid: Int64) throws(CatalogCopyError) {
        func refuse(_ what: String) -> CatalogCopyError {
            .valueMismatch(table: table, column: column, rowid: rowid, reason: "is \(what), where PostgreSQL's column holds \(kind)")
        }
        switch (value.storage, kind) {
        case (.null, _): binds.appendNull()
        case (.int64(let number), .integer): binds.append(number)
        case (.int64(let number), .real): binds.append(Double(number))
        case (.int64(let number), .boolean) where number == 0 || number == 1: binds.append(number == 1)
        case (.double(let number), .real): binds.append(number)
        case (.double(let number), .integer) where number.rounded() == number && abs(number) < 9.0e18: binds.append(Int64(number))
        case (.string(let text), .text): binds.append(text)
        case (.int64(let number), _): throw refuse("the integer \(number)")
        case (.double(let number), _): throw refuse("the real \(number)")
        case (.string, _): throw refuse("text")
        case (.blob, _): throw refuse("a blob")
        }
    }
}
