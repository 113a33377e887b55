import ArgumentParser
import Foundation
import PostgresStore
import Settings

/// `darkroom config`: the effective settings, checked and shown without starting anything.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Check the configuration, or show the effective settings.",
        discussion: """
        Darkroom reads --config, else $DARKROOM_CONFIG, else ./pipeline.json, else its built-in \
        defaults; DARKROOM_API_TOKEN, DARKROOM_WEBHOOK_SECRET and DARKROOM_CATALOG_URL stand in for \
        server.token, webhooks.secret and catalog.url when the file leaves them null. Run `config check` after every edit: a \
        typo is found here rather than when the daemon starts.
        """,
        subcommands: [Check.self, Show.self, Reference.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate the settings and print each effective value with its source.",
            discussion: """
            Prints every key with its value and where it came from (file, environment, default); \
            secrets are masked. Exit 1 with one line per problem, each naming its key, when the \
            file (or the PostgreSQL address of DARKROOM_CATALOG_URL) cannot be used, or when \
            webhooks.urls is set without a signing secret. With --for serve (or run), also what \
            would stop that command from starting (serve: no API token), in the very words the \
            command would refuse with: the systemd units run it before each start.
            """)
        @Option(name: .long, help: ArgumentHelp("The pipeline configuration (JSON).", valueName: "file")) var config: String?
        @Option(name: .customLong("for"), help: ArgumentHelp("Also check what would stop this command from starting.", valueName: "serve|run"))
        var command: StartingCommand?

        func run() throws {
            let check = ConfigurationCheck.run(path: config)
            var problems = check.problems.map(\.description) + (check.problems.isEmpty ? Self.catalogProblems(check) : [])
            let configuration = check.problems.isEmpty ? (check.file.flatMap { try? Configuration.load(path: $0) } ?? .defaults) : nil
            if let configuration { problems += configuration.startProblems(for: command).map { "\(check.file ?? "pipeline.json"): \($0)" } }
            guard problems.isEmpty else {
                for problem in problems { FileHandle.standardError.write(Data((problem + "\n").utf8)) }
                throw ExitCode(1)
            }
            print(check.file.map { "configuration \($0) (\(check.fileReason ?? "--config")): OK" } ?? "no configuration file: the built-in defaults")
            let width = check.settings.map(\.key.count).max() ?? 0
            for setting in check.settings {
                print(setting.key.padding(toLength: width + 2, withPad: " ", startingAt: 0)
                      + setting.value + "  (\(setting.source.rawValue))")
            }
            if command == nil, let problem = configuration?.startProblems(for: .serve).first {
                print("note: `darkroom serve` would refuse to start: \(problem) (`config check --for serve` fails on it)")
            }
        }

        /// The problem of a PostgreSQL catalog address that cannot be used (its password masked),
        /// naming where it came from (`FILE: catalog.url: ...`, `DARKROOM_CATALOG_URL: ...`); none
        /// when it can.
        static func catalogProblems(_ check: ConfigurationCheck,
                                    environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
            let configuration = check.file.flatMap { try? Configuration.load(path: $0) } ?? .defaults
            guard let url = configuration.effectiveCatalogURL(environment: environment) else { return [] }
            do {
                _ = try PostgresLocation(url, environment: environment)
                return []
            } catch {
                guard configuration.catalogURL != nil else { return ["DARKROOM_CATALOG_URL: \(error)"] }
                return ["\(check.file ?? "pipeline.json"): catalog.url: \(error)"]
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the effective settings (secrets masked).",
            discussion: "With --json, one object: {\"file\", \"settings\": {KEY: {\"value\", \"source\"}}}.")
        @Option(name: .long, help: ArgumentHelp("The pipeline configuration (JSON).", valueName: "file")) var config: String?
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let check = ConfigurationCheck.run(path: config)
            guard check.problems.isEmpty else {
                for problem in check.problems { FileHandle.standardError.write(Data((problem.description + "\n").utf8)) }
                throw ExitCode(1)
            }
            guard json else {
                for setting in check.settings { print("\(setting.key) = \(setting.value)") }
                return
            }
            var settings: [String: Any] = [:]
            for setting in check.settings {
                let value = (try? JSONSerialization.jsonObject(with: Data(setting.value.utf8), options: .fragmentsAllowed)) ?? NSNull()
                settings[setting.key] = ["value": value, "source": setting.source.rawValue]
            }
            let object: [String: Any] = ["file": check.file ?? NSNull(), "settings": settings]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        }
    }

    struct Reference: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print every setting with its default and meaning, as Markdown.",
            discussion: "The source of docs/configuration.md: `darkroom config reference > docs/configuration.md`.")

        func run() throws {
            print(ConfigurationReference.markdown(), terminator: "")
        }
    }
}

extension StartingCommand: ExpressibleByArgument {}
