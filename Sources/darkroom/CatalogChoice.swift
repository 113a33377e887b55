import Catalog
import CatalogImports
import Foundation
import Moments
import PostgresCatalog
import PostgresStore
import Settings

/// The catalog a command works on: the SQLite file at `catalog.path`, or PostgreSQL when
/// `catalog.url` (or `$DARKROOM_CATALOG_URL`) names one.
enum CatalogChoice {
    case sqlite(Catalog)
    case postgres(PostgresCatalog)

    /// Opens (creating and migrating when needed) the configured catalog.
    /// `extraConnections`: PostgreSQL connections beyond one per worker thread, for the
    /// process's other threads (the renewer, the scan, an HTTP server's handlers).
    static func open(_ configuration: Configuration, extraConnections: Int = 2) throws -> CatalogChoice {
        if let catalog = try openPostgres(configuration, extraConnections: extraConnections) { return .postgres(catalog) }
        return .sqlite(try Catalog(path: configuration.catalogPath, momentRules: configuration.moments))
    }

    /// The PostgreSQL catalog (migrated when needed) when `catalog.url` names one; nil for
    /// SQLite, which is left unopened. `extraConnections` as for `open`. A catalog that cannot
    /// be opened ends the process (`exitUnopened`).
    static func openPostgres(_ configuration: Configuration, extraConnections: Int = 2) throws -> PostgresCatalog? {
        guard let url = configuration.effectiveCatalogURL() else { return nil }
        do {
            let deadlines = PostgresDeadlines(connect: configuration.catalogConnectTimeoutSeconds,
                                              statement: configuration.catalogStatementTimeoutSeconds,
                                              transaction: configuration.catalogTransactionTimeoutSeconds)
            return try PostgresCatalog(url: url, momentRules: configuration.moments,
                                       maximumConnections: configuration.effectiveConcurrency + extraConnections
                                           + (configuration.webhooks.urls.isEmpty ? 0 : 1),
                                       deadlines: deadlines)
        } catch {
            exitUnopened(error, setting: configuration.catalogURL != nil ? "catalog.url" : "DARKROOM_CATALOG_URL")
        }
    }

    /// Ends the process on a PostgreSQL catalog that cannot be opened: one line on standard
    /// error (`darkroom: ...`, never the usage text, never the password) and the exit status of
    /// sysexits.h: 78 (EX_CONFIG) for an address that cannot be used, named by its `setting`;
    /// 69 (EX_UNAVAILABLE) for a server that cannot be reached or is busy; 70 (EX_SOFTWARE) else.
    static func exitUnopened(_ error: CatalogError, setting: String) -> Never {
        let status: Int32
        let line: String
        switch error {
        case .refused(let message):
            (status, line) = (78, "\(setting): \(message)")
        case .unavailable, .busy:
            (status, line) = (69, error.description)
        case .diskFull, .ioError, .corrupt, .rule, .other, .leaseLost:
            (status, line) = (70, error.description)
        }
        FileHandle.standardError.write(Data("darkroom: \(line)\n".utf8))
        exit(status)
    }

    /// The configured catalog's import journal, read-only, for `darkroom import --dry-run`:
    /// nothing is created or migrated, in either store.
    static func importJournalReader(_ configuration: Configuration) throws(CatalogError) -> any ImportedFilesReader {
        if let url = configuration.effectiveCatalogURL() { return try PostgresImportJournalReader(url: url) }
        return try ImportJournalReader(path: configuration.catalogPath)
    }

    /// Where the catalog is, for logs and `status` (a PostgreSQL address without its password).
    var location: String {
        switch self {
        case .sqlite(let catalog): catalog.path
        case .postgres(let catalog): catalog.location.description
        }
    }

    /// The shared job queue that a catalog used by several machines holds (PostgreSQL); nil for
    /// SQLite, whose workers claim from the spool itself.
    var jobs: (any PhotoJobQueue)? {
        switch self {
        case .sqlite: nil
        case .postgres(let catalog): catalog
        }
    }

    /// The catalog's import runs, whichever store it is in.
    var importRuns: any ImportRunsReader {
        switch self {
        case .sqlite(let catalog): catalog
        case .postgres(let catalog): catalog
        }
    }

    /// The catalog, whichever store it is in.
    var store: any CatalogStore {
        switch self {
        case .sqlite(let catalog): catalog
        case .postgres(let catalog): catalog
        }
    }
}
