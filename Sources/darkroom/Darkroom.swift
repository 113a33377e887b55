import ArgumentParser
import BuildInfo
import Operations
import Settings

@main
struct Darkroom: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "darkroom",
        abstract: "Turns uploaded photos into variants, moments and a catalog.",
        discussion: """
        Photos arrive in a spool directory (spool/incoming/), from a backend, a drop folder or \
        `darkroom enqueue`, or over HTTP through `darkroom serve`; a whole photo library comes \
        in through `darkroom import`. The worker \
        reads when and where each was taken, renders the variants \
        of pipeline.json (thumb, preview, mobile, feed), keeps the original in a content-addressed \
        library and records everything in an SQLite catalog. A photo that cannot be processed ends \
        in spool/failed/ with a one-line reason; nothing is deleted unprocessed.

        Settings come from --config, else $DARKROOM_CONFIG, else ./pipeline.json, else built-in \
        defaults (the same as the bundled pipeline.json).
        """,
        version: BuildInfo.line,
        subcommands: [Run.self, Serve.self, Import.self, Enqueue.self, Status.self, Retry.self, Inspect.self, Render.self, Places.self,
                      MomentsCommand.self, CatalogCommand.self, LibraryCommand.self, ConfigCommand.self, Version.self])
}

/// The option every command shares: which configuration to use.
struct ConfigOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The pipeline configuration (JSON).", valueName: "file"))
    var config: String?

    func load() throws -> Configuration {
        guard let path = config ?? Configuration.defaultPath() else { return .defaults }
        do {
            return try Configuration.load(path: path)
        } catch {
            throw ValidationError(error.description)
        }
    }
}

/// Runs a check written in Operations, turning its `FieldError` into the usage error of the option
/// it names (`--lat must be between -90 and 90 (got 200.0)`).
func checkOption(_ check: () throws -> Void) throws {
    do {
        try check()
    } catch let error as FieldError {
        throw ValidationError(error.asOption)
    }
}
