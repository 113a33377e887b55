import Foundation
import Testing

/// The habits people expect of a Unix command: negative numbers as option values, an unknown
/// command named with a suggestion, exit statuses by meaning, one error style with no usage
/// text for a failure at run time, the start checks of `config check`, and read-only commands
/// that create nothing.
@Suite("Command-line habits")
struct CommandLineHabitsTests {
    /// Runs the binary in `directory` without `--config`, with none of Darkroom's variables set.
    static func darkroom(_ arguments: [String], in directory: String, environment extra: [String: String] = [:])
        throws -> (status: Int32, stdout: String, stderr: String) {
        var environment = ProcessInfo.processInfo.environment
        for variable in ["DARKROOM_CONFIG", "DARKROOM_CATALOG_URL", "DARKROOM_API_TOKEN", "DARKROOM_WEBHOOK_SECRET"] {
            environment[variable] = nil
        }
        environment.merge(extra) { $1 }
        return try OperatorTests.run(Workspace.binary, arguments, in: directory,
                                     environment: environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 })
    }

    static func emptyFolder() throws -> String {
        let folder = NSTemporaryDirectory() + "darkroom-habits-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func negativeCoordinatesAreValues() throws {
        let space = try Workspace()
        let added = try space.run(["places", "add", "--lat", "-33.8568", "--long", "151.2153", "--rad", "300", "--json"])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.contains("-33.8568"), "\(added.stdout)")
        let around = try space.run(["places", "around", "--lat", "-33.857", "--long", "151.215", "--rad", "1000"])
        #expect(around.status == 0 && around.stdout.contains("-33.8568"), "\(around.stdout)\(around.stderr)")
        let west = try space.run(["places", "add", "--lat", "51.5", "--long", "-0.12", "--rad", "50"])
        #expect(west.status == 0, "\(west.stderr)")
    }

    @Test(arguments: [["frobnicate"], ["frobnicate", "--help"], ["help", "frobnicate"], ["statsu"], ["moments", "lst"]])
    func anUnknownCommandIsNamed(arguments: [String]) throws {
        let folder = try Self.emptyFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try Self.darkroom(arguments, in: folder)
        #expect(result.status == 64)
        let word = arguments.first { $0 != "help" && $0 != "moments" && !$0.hasPrefix("-") } ?? ""
        #expect(result.stderr.hasPrefix("darkroom: unknown command '\(word)'"), "\(result.stderr)")
        #expect(result.stdout.isEmpty, "no help printed: \(result.stdout.prefix(200))")
        if word == "statsu" { #expect(result.stderr.contains("did you mean 'status'?")) }
        if word == "lst" { #expect(result.stderr.contains("did you mean 'list'?")) }
    }

    @Test func helpOfAKnownCommandStillWorks() throws {
        let folder = try Self.emptyFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let help = try Self.darkroom(["help", "status"], in: folder)
        #expect(help.status == 0 && help.stdout.contains("USAGE"), "\(help.stdout)\(help.stderr)")
        let root = try Self.darkroom(["--help"], in: folder)
        #expect(root.status == 0 && root.stdout.contains("Exit status") && root.stdout.contains("69"), "the exit statuses are listed")
    }

    @Test func aFailureAtRunTimeIsOneLineWithItsStatus() throws {
        let space = try Workspace()
        let retry = try space.run(["retry", "no-such-photo.jpg"])
        #expect(retry.status == 65)
        #expect(retry.stderr.hasPrefix("darkroom: no-such-photo.jpg is not in "), "\(retry.stderr)")
        #expect(!retry.stderr.contains("Usage") && !retry.stderr.contains("USAGE"))
        // A command line that cannot be used is a usage error, with the usage.
        let usage = try space.run(["places", "add", "--lat", "1"])
        #expect(usage.status == 64)
        #expect(usage.stderr.contains("Usage"), "\(usage.stderr)")
    }

    @Test func serveRefusesToStartWithTheLineConfigCheckPrints() throws {
        let space = try Workspace()
        let check = try space.run(["config", "check", "--for", "serve"])
        #expect(check.status == 1)
        let serve = try space.run(["serve", "--port", "0"])
        #expect(serve.status == 78)
        let line = "\(space.configPath): server.token: no API token: set server.token in pipeline.json or DARKROOM_API_TOKEN in the environment"
        #expect(check.stderr == line + "\n", "\(check.stderr)")
        #expect(serve.stderr == "darkroom: " + line + "\n", "\(serve.stderr)")
        // Without --for, check passes and notes it.
        let plain = try space.run(["config", "check"])
        #expect(plain.status == 0 && plain.stdout.contains("note: `darkroom serve` would refuse to start"), "\(plain.stdout)")

        // Webhook URLs without a secret stop both commands, and the check.
        let text = try String(contentsOfFile: space.configPath, encoding: .utf8)
        try text.replacingOccurrences(of: "\"catalog\": {", with: "\"webhooks\": {\"urls\": [\"http://127.0.0.1:9/h\"]}, \"catalog\": {")
            .write(toFile: space.configPath, atomically: true, encoding: .utf8)
        let webhooks = try space.run(["config", "check", "--for", "run"])
        #expect(webhooks.status == 1)
        #expect(webhooks.stderr.contains("webhooks.secret: webhooks.urls lists 1 endpoint(s)"), "\(webhooks.stderr)")
        let run = try space.run(["run", "--once"])
        #expect(run.status == 78)
        #expect(run.stderr == "darkroom: " + webhooks.stderr, "\(run.stderr)")
    }

    @Test func aConfigurationMistakeNamesItsLineAndColumn() throws {
        let folder = try Self.emptyFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data("{\n  \"worker\": {\"concurrency\": 2,}\n}\n".utf8).write(to: URL(fileURLWithPath: folder + "/pipeline.json"))
        let check = try Self.darkroom(["config", "check"], in: folder)
        #expect(check.status == 1)
        #expect(check.stderr == "pipeline.json: not valid JSON at line 2, column 31: a comma before '}': remove the trailing comma\n", "\(check.stderr)")
        let status = try Self.darkroom(["status"], in: folder)
        #expect(status.status == 78)
        #expect(status.stderr == "darkroom: " + check.stderr, "\(status.stderr)")
        let missing = try Self.darkroom(["config", "check", "--config", "absent.json"], in: folder)
        #expect(missing.status == 1 && missing.stderr.hasPrefix("absent.json: no such file"), "\(missing.stderr)")
    }

    @Test(arguments: [["status"], ["status", "--json"], ["config", "show"], ["config", "check"], ["moments", "list"], ["places", "list"]])
    func aReadOnlyCommandCreatesNothing(arguments: [String]) throws {
        let folder = try Self.emptyFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try Self.darkroom(arguments, in: folder)
        #expect(result.status == 0, "\(result.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(left.isEmpty, "\(arguments.joined(separator: " ")) created \(left)")
    }

    @Test func inspectCreatesNothing() throws {
        let folder = try Self.emptyFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try Self.darkroom(["inspect", Workspace.packageRoot + "/samples/hopper.jpg"], in: folder)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }
}
