import ArgumentParser
import CatalogCopy
import Foundation
import PostgresStore

struct CatalogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog",
        abstract: "Move the catalog from one store to another.",
        discussion: """
        The catalog is an SQLite file (catalog.path) by default, or a PostgreSQL database \
        (catalog.url) shared by workers on several machines. `catalog copy` moves an existing \
        SQLite catalog into PostgreSQL.
        """,
        subcommands: [Copy.self])

    struct Copy: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy the SQLite catalog into an empty PostgreSQL catalog, ids kept, and check the counts.",
            discussion: """
            Copies every table of the SQLite catalog (catalog.path, or --from) into the PostgreSQL \
            catalog at --to (else catalog.url, else $DARKROOM_CATALOG_URL; the password from the \
            address or $PGPASSWORD): places, moments with their covers and who chose them, \
            invitees, pictures, candidates, variants, jobs, the outbox with its ids (the positions \
            webhook consumers refer to), webhook deliveries and their progress, import runs and \
            their journal. Every id is kept, and pictures, jobs and events added afterwards get ids \
            above the copied ones. The PostgreSQL catalog must hold nothing yet: a new database \
            (createdb NAME); its tables are made on the way.

            The SQLite file is opened read-only and never changed, and it is read from one \
            snapshot: a worker or server still writing to it cannot make the copy inconsistent, \
            but what it writes after the copy began is not copied. The copy says so at the end \
            (exit status 1): stop them and run the same command again.

            Interrupted (Ctrl-C, a kill, a lost connection)? Run the same command again: it \
            continues after the last batch of rows it committed. On a finished copy it only \
            checks the counts again. If the SQLite catalog has changed since, it copies it again \
            from the start, as long as nothing else has written to the PostgreSQL catalog.

            At the end every table's rows are counted in both catalogs; a difference is an error \
            naming the table and both counts. Then point every machine at the new catalog: set \
            catalog.url in pipeline.json (or DARKROOM_CATALOG_URL) to the PostgreSQL address, keep \
            the SQLite file as a backup, and start the workers (`darkroom moments rebuild --check` \
            confirms the moments). A progress bar is drawn on a terminal, log lines otherwise.
            """)

        @OptionGroup var options: ConfigOption

        @Option(help: ArgumentHelp("The PostgreSQL catalog to copy into (default: catalog.url, else $DARKROOM_CATALOG_URL).",
                                   valueName: "postgres://user@host/database"))
        var to: String?

        @Option(help: ArgumentHelp("The SQLite catalog to copy (default: catalog.path).", valueName: "file"))
        var from: String?

        @Option(help: ArgumentHelp("Rows per INSERT, each batch in one transaction.", valueName: "n"))
        var batchSize: Int = CatalogCopy.defaultBatchSize

        @Option(help: ArgumentHelp("Log lines as human-readable text or as JSON objects.", valueName: "text|json"))
        var logFormat: LogFormatArgument = .text

        func validate() throws {
            if batchSize < 1 { throw ValidationError("--batch-size must be at least 1 (got \(batchSize))") }
            if let to, !PostgresLocation.isAddress(to) {
                throw ValidationError("--to must be a PostgreSQL address, postgres://user[:password]@host[:port]/database")
            }
        }

        func run() throws {
            let configuration = try options.load()
            guard let url = to ?? configuration.effectiveCatalogURL() else {
                throw ValidationError("name the PostgreSQL catalog to copy into: --to postgres://user@host/database "
                    + "(or set catalog.url, or DARKROOM_CATALOG_URL)")
            }
            let location: PostgresLocation
            do {
                location = try PostgresLocation(url)
            } catch {
                throw ValidationError(error.description)
            }
            let logger = logFormat.bootstrap()
            let copy = CatalogCopy(sourcePath: from ?? configuration.catalogPath, target: location, batchSize: batchSize, logger: logger)
            let summary: CatalogCopySummary
            do {
                summary = try copy.run(progress: CopyProgress(style: .automatic, logger: logger))
            } catch {
                FileHandle.standardError.write(Data("darkroom: \(error)\n".utf8))
                throw ExitCode(1)
            }
            print(summary.line)
            if summary.sourceChanged {
                FileHandle.standardError.write(Data(("darkroom: \(summary.source) was written while it was copied (a worker or server still "
                    + "runs on it): the copy holds it as it was when the copy began. Stop what writes to it, then run the same command "
                    + "again to copy it as it ends up\n").utf8))
                throw ExitCode(1)
            }
        }
    }
}
