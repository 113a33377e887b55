import ArgumentParser
import Catalog
import Foundation
import Moments
import PostgresCatalog
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
        if let url = configuration.effectiveCatalogURL() {
            do {
                return .postgres(try PostgresCatalog(url: url, momentRules: configuration.moments,
                                                     maximumConnections: configuration.effectiveConcurrency + extraConnections))
            } catch {
                throw ValidationError("cannot open the PostgreSQL catalog: \(error)")
            }
        }
        return .sqlite(try Catalog(path: configuration.catalogPath, momentRules: configuration.moments))
    }

    /// The commands that read `catalog.url` so far; the others refuse it rather than write to
    /// an SQLite file nobody else reads.
    static let postgresCommands = "run, status, places and moments"

    /// Throws when `catalog.url` is set, for a command that does not yet work on PostgreSQL.
    static func refusePostgres(_ configuration: Configuration, command: String) throws {
        guard configuration.effectiveCatalogURL() != nil else { return }
        throw ValidationError("`darkroom \(command)` does not yet work with a PostgreSQL catalog (catalog.url or DARKROOM_CATALOG_URL is set); "
            + "only \(postgresCommands) do. Unset it to use the SQLite catalog at \(configuration.catalogPath)")
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

    /// The catalog, whichever store it is in.
    var store: any CatalogStore {
        switch self {
        case .sqlite(let catalog): catalog
        case .postgres(let catalog): catalog
        }
    }
}
