import Foundation
import PostgresHarness
import Testing

/// Commands whose PostgreSQL catalog cannot be opened at start-up: one line with the real
/// reason, the exit status of sysexits.h, never the usage text or the password.
@Suite("A catalog database that is not there at start-up")
struct DatabaseStartupTests {
    /// The lines a command wrote on standard error.
    static func lines(_ text: String) -> [Substring] {
        text.split(separator: "\n", omittingEmptySubsequences: true)
    }

    @Test("a closed port: exit 69, one line naming the address and the refusal", arguments: [
        ["status"], ["run", "--once"],
    ])
    func closedPort(_ command: [String]) throws {
        let space = try Workspace()
        let port = try TemporaryCluster.freePort()
        let result = try space.run(command, environment: ["DARKROOM_CATALOG_URL": "postgres://darkroom:Zq7Wx4v@127.0.0.1:\(port)/x"])
        #expect(result.status == 69, "\(result.stderr)")
        let lines = Self.lines(result.stderr)
        #expect(lines.count == 1, "\(result.stderr)")
        let line = String(lines.first ?? "")
        #expect(line.hasPrefix("darkroom: cannot connect to PostgreSQL at postgres://darkroom@127.0.0.1:\(port)/x: "), "\(line)")
        #expect(line.lowercased().contains("connection refused"), "\(line)")
        #expect(!result.stderr.contains("Usage:") && !result.stderr.contains("Zq7Wx4v") && !result.stderr.contains("PSQLError"))
    }

    @Test("a raw '#' in the password: exit 78, the address masked", arguments: [
        ["status"], ["run", "--once"],
    ])
    func reservedCharacterInThePassword(_ command: [String]) throws {
        let space = try Workspace()
        let port = try TemporaryCluster.freePort()
        let url = "postgres://darkroom:Zq7#Wx4v@127.0.0.1:\(port)/x"
        let result = try space.run(command, environment: ["DARKROOM_CATALOG_URL": url])
        #expect(result.status == 78, "\(result.stderr)")
        let lines = Self.lines(result.stderr)
        #expect(lines.count == 1, "\(result.stderr)")
        let line = String(lines.first ?? "")
        #expect(line.hasPrefix("darkroom: DARKROOM_CATALOG_URL: the PostgreSQL address 'postgres://darkroom:***@127.0.0.1:\(port)/x' cannot be used: "
            + "its password holds a reserved character ('#')"), "\(line)")
        #expect(!result.stderr.contains("Usage:") && !result.stderr.contains("Zq7") && !result.stderr.contains("Wx4v"))
    }

    @Test("config check refuses the address, naming its setting and masking the password")
    func configCheck() throws {
        let space = try Workspace()
        let url = "postgres://darkroom:Zq7/Wx4v@db.internal/photos"
        let fromEnvironment = try space.run(["config", "check"], environment: ["DARKROOM_CATALOG_URL": url])
        #expect(fromEnvironment.status == 1)
        #expect(Self.lines(fromEnvironment.stderr).count == 1, "\(fromEnvironment.stderr)")
        #expect(fromEnvironment.stderr.hasPrefix("DARKROOM_CATALOG_URL: the PostgreSQL address 'postgres://darkroom:***@db.internal/photos' "
            + "cannot be used: its password holds a reserved character ('/')"), "\(fromEnvironment.stderr)")
        #expect(!fromEnvironment.stderr.contains("Zq7") && !fromEnvironment.stderr.contains("Wx4v"))

        // An address it can read, percent-encoded, passes.
        let fine = try space.run(["config", "check"], environment: ["DARKROOM_CATALOG_URL": "postgres://darkroom:Zq7%2FWx4v@db.internal/photos"])
        #expect(fine.status == 0, "\(fine.stderr)")

        // In the file: named by its key.
        let text = try String(contentsOfFile: space.configPath, encoding: .utf8)
        try text.replacingOccurrences(of: "\"catalog\": {", with: "\"catalog\": {\"url\": \"\(url)\", ")
            .write(toFile: space.configPath, atomically: true, encoding: .utf8)
        let inFile = try space.run(["config", "check"], environment: ["DARKROOM_CATALOG_URL": ""])
        #expect(inFile.status == 1)
        #expect(Self.lines(inFile.stderr).count == 1, "\(inFile.stderr)")
        #expect(inFile.stderr.hasPrefix("\(space.configPath): catalog.url: the PostgreSQL address 'postgres://darkroom:***@db.internal/photos'"),
                "\(inFile.stderr)")
        #expect(!inFile.stderr.contains("Zq7") && !inFile.stderr.contains("Wx4v"))
    }
}
