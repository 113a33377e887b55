import Foundation
import Testing
@testable import Settings

/// What `config check` says before a start: the problems that would stop `serve` or `run` (the
/// same function both commands call), JSON mistakes by line and column, and files that are not
/// there told apart from files that cannot be read.
@Suite struct StartCheckTests: ConfigurationParsing {
    @Test func serveNeedsAToken() throws {
        let configuration = try parse("{}")
        let problems = configuration.startProblems(for: .serve, environment: [:])
        #expect(problems == ["server.token: no API token: set server.token in pipeline.json or DARKROOM_API_TOKEN in the environment"])
        #expect(configuration.startProblems(for: .serve, environment: ["DARKROOM_API_TOKEN": "t"]).isEmpty)
        #expect(try parse(#"{"server": {"token": "t"}}"#).startProblems(for: .serve, environment: [:]).isEmpty)
        // run takes no requests: it needs no token.
        #expect(configuration.startProblems(for: .run, environment: [:]).isEmpty)
        #expect(configuration.startProblems(for: nil, environment: [:]).isEmpty)
    }

    @Test(arguments: [StartingCommand.serve, .run, nil])
    func webhookURLsNeedASecret(command: StartingCommand?) throws {
        let configuration = try parse(#"{"server": {"token": "t"}, "webhooks": {"urls": ["https://a.example/h", "https://b.example/h"]}}"#)
        let problems = configuration.startProblems(for: command, environment: [:])
        #expect(problems.count == 1)
        #expect(problems.first?.hasPrefix("webhooks.secret: webhooks.urls lists 2 endpoint(s) but no signing secret is set") == true, "\(problems)")
        #expect(configuration.startProblems(for: command, environment: ["DARKROOM_WEBHOOK_SECRET": "s"]).isEmpty)
    }

    @Test func jsonMistakesNameTheirLineAndColumn() {
        let text = "{\n  \"spool\": {\n    \"root\": \"x\"\n    \"settle_seconds\": 2\n  }\n}\n"
        #expect(problem(text) == "test.json: not valid JSON at line 4, column 5: expected ',' or '}', found '\"'")
        #expect(problem("{\"spool\": {\"root\": \"x\",}}")?.contains("line 1, column 24: a comma before '}': remove the trailing comma") == true,
                "\(problem("{\"spool\": {\"root\": \"x\",}}") ?? "accepted")")
        #expect(problem("{\"variants\": [1, 2,]}")?.contains("a comma before ']'") == true)
        #expect(problem("{\"catalog\": {\"path\": 'x'}}")?.contains("line 1, column 22: expected a value, found ''' (strings need double quotes)") == true,
                "\(problem("{\"catalog\": {\"path\": 'x'}}") ?? "accepted")")
        #expect(problem("{\"a\": \"é\" x}")?.contains("line 1, column 11") == true, "columns count characters, not bytes")
        #expect(problem("{} {}")?.contains("text after the end of the JSON value") == true)
        #expect(problem("{\"spool\": {\"root\": \"x") != nil)
        #expect(problem("[1, 01]")?.contains("must not start with 0") == true)
        // Valid JSON still goes on to the settings' own checks.
        #expect(problem("{\"worker\": {\"concurrency\": 1.5e0}}")?.contains("worker.concurrency") == true)
        #expect(problem("\u{FEFF}{}") == nil)
        #expect(problem(" {\"spool\": {\"root\": \"x\\n\\u00e9\"}} ") == nil)
    }

    @Test func aMissingFileAndAnUnreadableOneAreToldApart() throws {
        let folder = NSTemporaryDirectory() + "darkroom-settings-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func problem(_ path: String) -> String {
            do {
                _ = try Configuration.load(path: path)
                return "loaded"
            } catch {
                return error.description
            }
        }
        #expect(problem(folder + "/absent.json").hasPrefix(folder + "/absent.json: no such file; check the path"))
        #expect(problem(folder).contains("a folder, not a file"))
        let locked = folder + "/locked.json"
        try Data("{}".utf8).write(to: URL(fileURLWithPath: locked))
        chmod(locked, 0o000)
        // Root reads any file: the unreadable case shows only for another user.
        if getuid() != 0 {
            #expect(problem(locked).contains("the file is there but cannot be read (permission denied)"))
        }
        // config check reads through the same function.
        let check = ConfigurationCheck.run(path: folder + "/absent.json", environment: [:])
        #expect(check.problems.map(\.description) == [folder + "/absent.json: no such file; check the path (or set DARKROOM_CONFIG, or name none to use the built-in defaults)"])
    }

    @Test func everySettingHasAMeaningInTheReference() {
        let gaps = ConfigurationReference.gaps()
        #expect(gaps.undescribed.isEmpty, "describe them in ConfigurationReference.meanings: \(gaps.undescribed)")
        #expect(gaps.unknown.isEmpty, "config show knows no such key: \(gaps.unknown)")
        let page = ConfigurationReference.markdown()
        #expect(page.contains("| `server.port` | `8470` | "))
        #expect(!page.contains("(not yet described)"))
    }
}
