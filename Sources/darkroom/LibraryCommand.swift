import ArgumentParser
import Foundation
import LibraryMaintenance
import Settings
import Terminal

struct LibraryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "library",
        abstract: "Move the library of originals and variants into a bucket, and check it against the catalog.",
        discussion: """
        The library holds each picture's original and variants at content-addressed paths \
        (originals/ab/cd/<sha256>.<ext>, variants/<name>/ab/cd/<sha256>.<ext>): in a directory \
        (library.root) by default, or in an S3 bucket (library.url, s3://BUCKET/PREFIX) that \
        machines sharing a PostgreSQL catalog share too. `library copy` moves a directory's \
        library into a bucket; `library check` compares either store with the catalog, and \
        repairs what it can.
        """,
        subcommands: [Copy.self, Check.self])

    struct Copy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy the local library into a bucket, resumably, verifying every object.",
            discussion: """
            Copies the local library (library.root) into the bucket at --to, so that the \
            deployment can move to library.url. Every file under originals/ and variants/ is \
            copied, whether the catalog names it or not (the summary counts those it does not, \
            which `library check` calls orphans); a path the catalog names that the directory \
            lacks is a failure, unless the bucket already holds it at the size the catalog \
            records. The local library is only read.

            Resumable: the bucket is listed first, and a file whose object is already there with \
            the same size and checksum (its ETag) is not sent again. Interrupted (Ctrl-C, a kill, \
            a lost connection)? Run the same command again: it sends only what is not there yet \
            (a file killed half-way through its parts leaves an incomplete upload, which a bucket \
            lifecycle rule, AbortIncompleteMultipartUpload, clears). \
            Files go --concurrency at a time, each streamed from disk (in parts above 64 MiB), \
            and each is verified after its write: a HEAD must give the local file's size and MD5 \
            (for one sent in parts, the multipart ETag of the same parts); an ETag that cannot \
            tell is settled by reading the object back.

            The bucket is reached at library.s3.endpoint (else $AWS_ENDPOINT_URL, else AWS in \
            library.s3.region or $AWS_REGION) with the credentials in AWS_ACCESS_KEY_ID and \
            AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), never from the file.

            A progress bar on a terminal (objects and bytes done of all, the rate, the time left, \
            failures), log lines otherwise; then a summary: copied, already there, verified, \
            failed with each reason, and the files no picture names. Then set library.url to the \
            same address on every machine; `darkroom library check` confirms the bucket against \
            the catalog.

            Exit status: 0 when every object is in the bucket and verified; 1 when any is not; 2 \
            when interrupted (run it again to continue); 69 when the bucket or the catalog cannot \
            be reached; 74 when the bucket cannot be listed for another reason (no such bucket, \
            refused credentials); 78 when settings or credentials are missing.
            """)

        @OptionGroup var options: ConfigOption

        @Option(help: ArgumentHelp("The bucket and key prefix to copy into.", valueName: "s3://bucket/prefix"))
        var to: String

        @Option(help: ArgumentHelp("Files sent at once.", valueName: "n"))
        var concurrency = LibraryCopy.defaultConcurrency

        @Flag(help: "Print the summary as one JSON object (with every failure) instead of text.")
        var json = false

        @Option(help: ArgumentHelp("Log lines as human-readable text or as JSON objects.", valueName: "text|json"))
        var logFormat: LogFormatArgument = .text

        func validate() throws {
            if BucketAddress(to) == nil {
                throw ValidationError("--to must be s3://BUCKET/PREFIX, the bucket named by 3 to 63 lowercase letters, digits, dots "
                    + "and hyphens (got \(to))")
            }
            if !(1...64).contains(concurrency) { throw ValidationError("--concurrency must be 1 to 64 (got \(concurrency))") }
        }

        func run() async throws {
            let configuration = try options.load()
            guard let address = BucketAddress(to) else { throw ValidationError("--to must be s3://BUCKET/PREFIX (got \(to))") }
            let logger = logFormat.bootstrap()
            let catalog = try CatalogChoice.open(configuration)
            defer { if case .postgres(let postgres) = catalog { postgres.close() } }
            let stop = StopRequest()
            let signals = StopSignals {
                logger.notice("stopping: finishing the files in flight; run the same command again to continue")
                stop.request()
            }
            defer { signals.cancel() }
            let summary: LibraryCopySummary
            do {
                let references = try catalog.libraryReferences.libraryReferences()
                summary = try await LibraryCopy.copy(from: configuration.libraryRoot, to: address, configuration: configuration,
                                                     references: references, concurrency: concurrency, logger: logger,
                                                     progress: LibraryCopyProgress(style: .automatic, logger: logger), stop: stop)
            } catch {
                throw exitOnFailure(error)
            }
            if json {
                print(try encodedJSON(summary))
            } else {
                for line in summary.lines { print(line) }
            }
            if summary.interrupted { throw ExitCode(2) }
            if !summary.complete { throw ExitCode(1) }
        }
    }

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List files no picture names and pictures whose files are missing; --repair what can be.",
            discussion: """
            Compares the configured library store (the bucket of library.url, else the directory \
            library.root) with the catalog, and prints one line per finding, then a summary line:

              orphan   PATH  SIZE bytes, written TIME (AGE ago)
              missing  picture ID  original|variant NAME  PATH
              damaged  picture ID  original|variant NAME  PATH  (sizes)
              unfinished upload  PATH, begun TIME (AGE ago)

            An orphan is a file under originals/ or variants/ that no picture or variant names \
            (a worker that died between writing a photo's files and committing it leaves one); a \
            missing file is one the catalog names that the store lacks; a damaged one is stored \
            at another size than the catalog records. In a bucket, an unfinished upload is a \
            large original sent in parts by a process killed before it completed or aborted it: \
            its parts take space, unseen by a listing of the bucket's objects.

            --json prints one JSON object instead: the counts and every finding (problem, path, \
            picture_id, file, stored_size, recorded_size, modified, age_seconds, upload_id, action, note). \
            Without --repair nothing is changed.

            --repair removes the orphans written more than --orphan-age seconds ago (an hour by \
            default: a worker writes a photo's files before it commits its picture, so a younger \
            orphan may be a picture on its way, and is kept), and aborts the unfinished uploads \
            begun as long ago; renders lost and damaged variants \
            again from their originals as the worker rendered them (the picture's orientation, \
            focal point and feed crop, the recipes of pipeline.json), when a recipe still gives \
            the same file; and puts lost originals back from library.backup_dir when it holds \
            the picture's bytes. Each line then ends with what was done: removed, aborted, kept, \
            rerendered, restored, or unrepaired with what to do (a lost original that no backup \
            holds must be copied back, the same bytes, its SHA-256 being its file name; another \
            --repair then renders its variants).

            The catalog is read before the store is listed and again after, so a picture \
            committed while the check runs is reported neither missing nor orphaned. A bucket \
            needs the credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.

            Exit status: 0 when nothing was found (or --repair resolved all of it); 1 when \
            anything was found (and, with --repair, is left); 69 when the bucket or the catalog \
            cannot be reached; 74 when the store cannot be listed for another reason; 78 when \
            settings or credentials are missing.
            """)

        @OptionGroup var options: ConfigOption

        @Flag(help: "Remove old orphans, render lost variants again, restore lost originals from library.backup_dir.")
        var repair = false

        @Option(help: ArgumentHelp("With --repair, remove only orphans written at least this many seconds ago.", valueName: "seconds"))
        var orphanAge: Double = LibraryCheck.defaultOrphanAge

        @Flag(help: "Print one JSON object instead of text.")
        var json = false

        @Option(help: ArgumentHelp("Log lines as human-readable text or as JSON objects.", valueName: "text|json"))
        var logFormat: LogFormatArgument = .text

        func validate() throws {
            if !(orphanAge >= 0) || !orphanAge.isFinite {
                throw ValidationError("--orphan-age must be a number of seconds, 0 or more (got \(orphanAge))")
            }
        }

        func run() async throws {
            let configuration = try options.load()
            let logger = logFormat.bootstrap()
            let catalog = try CatalogChoice.open(configuration)
            defer { if case .postgres(let postgres) = catalog { postgres.close() } }
            let report: LibraryCheckReport
            do {
                let store = try MaintenanceStores.configured(configuration)
                let check = LibraryCheck(store: store, catalog: catalog.store, references: catalog.libraryReferences,
                                         configuration: configuration, repair: repair, orphanAge: orphanAge, logger: logger)
                let result: Result<LibraryCheckReport, LibraryMaintenanceError>
                do {
                    result = .success(try await check.run())
                } catch {
                    result = .failure(error)
                }
                await MaintenanceStores.close(store)
                report = try result.get()
            } catch {
                throw exitOnFailure(error)
            }
            if json {
                print(try encodedJSON(report))
            } else {
                for finding in report.findings { print(finding.line) }
                for line in report.summaryLines { print(line) }
            }
            if report.exitStatus != 0 { throw ExitCode(report.exitStatus) }
        }
    }
}

extension CatalogChoice {
    /// The catalog as `library copy` and `library check` read it: every path it names.
    var libraryReferences: any LibraryReferenceReading {
        switch self {
        case .sqlite(let catalog): catalog
        case .postgres(let catalog): catalog
        }
    }
}

/// Writes why the work could not be done (`darkroom: ...`) and gives the exit status for it:
/// 78 for settings or credentials, 69 for a store or catalog that cannot be reached, 74 else.
private func exitOnFailure(_ error: any Error) -> ExitCode {
    FileHandle.standardError.write(Data("darkroom: \(error)\n".utf8))
    guard let error = error as? LibraryMaintenanceError else { return ExitCode(74) }
    if error.category == .configuration { return ExitCode(78) }
    return ExitCode(error.isTransient ? 69 : 74)
}

/// A report as JSON for scripts: snake_case keys, sorted, ISO 8601 times.
private func encodedJSON<T: Encodable>(_ value: T) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.keyEncodingStrategy = .convertToSnakeCase
    encoder.dateEncodingStrategy = .iso8601
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}
