import ArgumentParser
import BuildInfo
import Failures
import Foundation
import PhotoMetadata
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

        Exit status: 0 success; 1 the command ran but not everything succeeded (a photo failed, \
        a check found a difference: its own help says which); 2 interrupted (run it again to \
        continue); 64 a command line that cannot be used (the usage is printed); 65 bad input \
        (a photo, a sidecar or a name that is not what it should be); 69 a service that cannot \
        be reached (the catalog's database, the bucket); 70 an internal error; 73 a file or \
        folder that cannot be created; 74 an input or output error; 75 a temporary failure, try \
        again; 78 a configuration that cannot be used. Every failure is one line on standard \
        error, starting "darkroom: ".
        """,
        version: BuildInfo.line,
        subcommands: [Run.self, Serve.self, Import.self, Enqueue.self, Status.self, Retry.self, Inspect.self, Render.self, Places.self,
                      MomentsCommand.self, CatalogCommand.self, LibraryCommand.self, ConfigCommand.self, Version.self])

    /// Parses and runs a command as swift-argument-parser does, with the habits of a Unix tool:
    /// an unknown command is named with a suggestion (exit 64), a command line that cannot be
    /// parsed prints its usage (exit 64), and a failure at run time is one line,
    /// "darkroom: MESSAGE", never the usage, with the exit status of its meaning (`ExitStatus`).
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let unknown = CommandNames.unknownCommand(in: arguments, root: Darkroom.self) {
            FileHandle.standardError.write(Data("darkroom: \(unknown)\n".utf8))
            Foundation.exit(ExitStatus.usage)
        }
        var command: any ParsableCommand
        do {
            command = try await asyncParseAsRoot(arguments)
        } catch {
            // Help, the version, completions, and usage errors: as swift-argument-parser prints them.
            exit(withError: error)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch let error as ValidationError {
            let (status, message) = ExitStatus.of(error)
            FileHandle.standardError.write(Data("darkroom: \(message)\n".utf8))
            Foundation.exit(status)
        } catch where String(reflecting: type(of: error)).hasPrefix("ArgumentParser.") {
            // The built-in `help` command's answer, a clean exit: as swift-argument-parser prints them.
            exit(withError: error)
        } catch {
            let (status, message) = ExitStatus.of(error)
            FileHandle.standardError.write(Data("darkroom: \(message)\n".utf8))
            Foundation.exit(status)
        }
    }
}

/// A failure at run time with its exit status: printed as "darkroom: MESSAGE", never with the
/// usage text.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    var status: Int32

    init(_ description: String, status: Int32) {
        self.description = description
        self.status = status
    }
}

/// The exit statuses of sysexits.h, chosen by what went wrong.
enum ExitStatus {
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    static let unavailable: Int32 = 69
    static let software: Int32 = 70
    static let cannotCreate: Int32 = 73
    static let ioError: Int32 = 74
    static let temporaryFailure: Int32 = 75
    static let configuration: Int32 = 78

    /// The status and the one line of an error thrown while a command ran: its own status, or the
    /// one of its category where it was made; a check of the command line (`ValidationError`
    /// thrown by `run`) is a usage error.
    static func of(_ error: any Error) -> (Int32, String) {
        switch error {
        case let failure as CommandFailure: return (failure.status, failure.description)
        case let validation as ValidationError: return (usage, validation.message)
        case let configuration as ConfigurationError: return (Self.configuration, configuration.description)
        default: return (status(of: FailureCategory(of: error)), "\(error)")
        }
    }

    static func status(of category: FailureCategory) -> Int32 {
        switch category {
        case .badInput, .unsupportedFormat, .tooLarge: dataError
        case .storage: ioError
        case .catalog: unavailable
        case .timeout: temporaryFailure
        case .configuration: configuration
        case .crashed, .internal: software
        }
    }
}

/// The subcommand names of a command line, checked before it is parsed, so that a misspelt
/// command is named as one ("unknown command 'statsu'; did you mean 'status'?") rather than
/// reported as an unexpected argument, and `help NAME` and `NAME --help` fail for a NAME that
/// is no command.
enum CommandNames {
    static func unknownCommand(in arguments: [String], root: any ParsableCommand.Type) -> String? {
        var words = arguments
        if words.first == "help" { words.removeFirst() }
        var command = root
        var path = [root.configuration.commandName ?? "darkroom"]
        for word in words {
            if word.hasPrefix("-") { return nil }
            let subcommands = command.configuration.subcommands
            if subcommands.isEmpty { return nil }
            guard let next = subcommands.first(where: { name(of: $0) == word || $0.configuration.aliases.contains(word) }) else {
                if command.configuration.defaultSubcommand != nil { return nil }
                let names = subcommands.map(name(of:))
                let near = names.map { ($0, distance($0, word)) }.filter { $0.1 <= max(2, word.count / 3) }.min { $0.1 < $1.1 }
                let suggestion = near.map { "did you mean '\($0.0)'?" } ?? "the commands are: \(names.joined(separator: ", "))"
                let full = path.joined(separator: " ")
                return "unknown command '\(word)'\(path.count > 1 ? " of '\(full)'" : ""); \(suggestion) (`\(full) help` lists them)"
            }
            command = next
            path.append(name(of: next))
        }
        return nil
    }

    static func name(of command: any ParsableCommand.Type) -> String {
        command.configuration.commandName ?? command._commandName
    }

    /// The edit distance between two words (insertions, deletions, substitutions).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let current = row[j]
                row[j] = a[i - 1] == b[j - 1] ? previous : min(previous, row[j], row[j - 1]) + 1
                previous = current
            }
        }
        return a.isEmpty ? b.count : row[b.count]
    }
}

/// The option every command shares: which configuration to use.
struct ConfigOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The pipeline configuration (JSON).", valueName: "file"))
    var config: String?

    func load() throws -> Configuration {
        guard let path = config ?? Configuration.defaultPath() else { return .defaults }
        return try Configuration.load(path: path)
    }

    /// The configuration for a command that starts a service (`serve`, `run`), refused with
    /// the lines `config check --for COMMAND` prints when something would stop it.
    func load(starting command: StartingCommand) throws -> Configuration {
        let configuration = try load()
        let problems = configuration.startProblems(for: command)
        guard problems.isEmpty else {
            let file = config ?? Configuration.defaultPath() ?? "pipeline.json"
            throw CommandFailure(problems.map { "\(file): \($0)" }.joined(separator: "\ndarkroom: "), status: ExitStatus.configuration)
        }
        if let problem = gazetteerProblem {
            // Not a reason to refuse work: the zones of places and the names of automatic places
            // and moments are then left out, and said so once.
            FileHandle.standardError.write(Data("darkroom: warning: no place zones or names: \(problem)\n".utf8))
        }
        return configuration
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
