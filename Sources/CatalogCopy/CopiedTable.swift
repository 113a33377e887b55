/// One table of the catalog as the copy moves it: the same name and columns in both stores.
struct CopiedTable: Sendable, Equatable {
    /// What PostgreSQL derives from a table's rows where SQLite keeps an R*Tree table: filled
    /// for each batch in the batch's own transaction.
    enum Derived: Sendable, Equatable {
        /// `place_boxes`, SQLite's `place_index`.
        case placeBoxes
        /// `moment_boxes`, SQLite's `moment_index`.
        case momentBoxes
        /// `pictures.position`, SQLite's `picture_index`.
        case positions

        /// The SQLite table whose rows match the derived rows one for one (the final check
        /// counts both), and how the PostgreSQL ones are counted.
        var counted: (sqlite: String, postgres: String, name: String) {
            switch self {
            case .placeBoxes: ("place_index", "SELECT COUNT(*) FROM place_boxes", "place_boxes")
            case .momentBoxes: ("moment_index", "SELECT COUNT(*) FROM moment_boxes", "moment_boxes")
            case .positions: ("picture_index", "SELECT COUNT(position) FROM pictures", "pictures.position")
            }
        }
    }

    let name: String
    let derived: Derived?
    /// A table of running totals (one row that triggers keep): its row is set to the source's,
    /// replacing the one a migration may have made, rather than added.
    let totals: Bool

    init(_ name: String, derived: Derived? = nil, totals: Bool = false) {
        self.name = name
        self.derived = derived
        self.totals = totals
    }

    /// Every table copied, in an order where each row's references are copied before it.
    /// Ids are kept: places and moments (negative for the worker's own), pictures, jobs, the
    /// outbox (its ids are the positions webhook deliveries and consumers refer to), imports.
    static let all: [CopiedTable] = [
        CopiedTable("places", derived: .placeBoxes),
        CopiedTable("moments", derived: .momentBoxes),
        CopiedTable("moment_invitees"),
        CopiedTable("pictures", derived: .positions),
        CopiedTable("moment_candidates"),
        CopiedTable("variants"),
        CopiedTable("jobs"),
        CopiedTable("outbox"),
        CopiedTable("webhook_deliveries"),
        CopiedTable("webhook_delivery_totals", totals: true),
        CopiedTable("imports"),
        CopiedTable("import_files"),
    ]

    /// SQLite tables that are not copied: the R*Tree indexes (PostgreSQL derives its own
    /// `cube` values from the rows) and SQLite's and GRDB's bookkeeping.
    static let sqliteOnly: Set<String> = ["picture_index", "moment_index", "place_index", "grdb_migrations"]

    /// Whether an SQLite table is left behind on purpose: an R*Tree index, one of its shadow
    /// tables (`_node`, `_rowid`, `_parent`), or SQLite's own (`sqlite_sequence`, ...).
    static func isLeftBehind(_ table: String) -> Bool {
        if table.hasPrefix("sqlite_") || sqliteOnly.contains(table) { return true }
        return ["_node", "_rowid", "_parent"].contains { suffix in
            table.hasSuffix(suffix) && sqliteOnly.contains(String(table.dropLast(suffix.count)))
        }
    }
}
