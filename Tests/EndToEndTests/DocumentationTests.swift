import ChildProcesses
import Foundation
import Testing

/// The README and docs/ cannot drift from the program: every shell block in them is run, in
/// order, file by file, with the built `darkroom` first on PATH, in a temporary workspace holding
/// a copy of the bundled samples/ and pipeline.json (what a newcomer has in a clone). A block
/// that needs what a test cannot have (root, systemd, a PostgreSQL server, a bucket) is marked
/// with `<!-- doc-test: skip (REASON) -->` on the line before it; those are counted and printed.
/// Blocks that start `darkroom serve &` run it in the background: the examples' port, 8470, is
/// replaced by a free loopback port, in the blocks and in the workspace's pipeline.json.
@Suite(.serialized)
struct DocumentationTests {
    /// One fenced shell block of a Markdown file.
    struct Block {
        var file: String
        /// The line of its opening fence, 1-based.
        var line: Int
        var text: String
        /// Why it is not run, when it is marked so.
        var skip: String?
    }

    static let shellInfo: Set<String> = ["sh", "bash", "console", "shell"]

    /// README.md and every docs/*.md, relative to the package root.
    static func documents() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: Workspace.packageRoot + "/docs")
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        return ["README.md"] + docs
    }

    /// The shell blocks of one file, with their skip marks. A `console` block's commands are its
    /// lines that start with `$ `; its other lines are output, not run.
    static func blocks(of file: String) throws -> [Block] {
        let lines = try String(contentsOfFile: Workspace.packageRoot + "/" + file, encoding: .utf8)
            .components(separatedBy: "\n")
        var blocks: [Block] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            guard line.hasPrefix("```"), shellInfo.contains(String(line.dropFirst(3)).trimmingCharacters(in: .whitespaces)) else {
                index += 1
                continue
            }
            let console = line.hasPrefix("```console")
            var previous = index - 1
            while previous >= 0 && lines[previous].trimmingCharacters(in: .whitespaces).isEmpty { previous -= 1 }
            var skip: String?
            if previous >= 0, let range = lines[previous].range(of: "<!-- doc-test: skip") {
                let rest = lines[previous][range.upperBound...]
                skip = rest.replacingOccurrences(of: "-->", with: "").trimmingCharacters(in: CharacterSet(charactersIn: " ()"))
            }
            var body: [String] = []
            var end = index + 1
            while end < lines.count && !lines[end].hasPrefix("```") {
                if !console {
                    body.append(lines[end])
                } else if lines[end].hasPrefix("$ ") {
                    body.append(String(lines[end].dropFirst(2)))
                }
                end += 1
            }
            blocks.append(Block(file: file, line: index + 1, text: body.joined(separator: "\n"), skip: skip))
            index = end + 1
        }
        return blocks
    }

    @Test("every shell block of the README and docs/ runs", arguments: try documents())
    func shellBlocksRun(file: String) throws {
        let blocks = try Self.blocks(of: file)
        for block in blocks where block.skip != nil {
            print("\(file):\(block.line): skipped (\(block.skip ?? ""))")
        }
        let runnable = blocks.filter { $0.skip == nil }
        print("\(file): \(runnable.count) shell block(s) run, \(blocks.count - runnable.count) skipped")
        guard !runnable.isEmpty else { return }

        let root = NSTemporaryDirectory() + "darkroom-docs-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let manager = FileManager.default
        try manager.createDirectory(atPath: root + "/bin", withIntermediateDirectories: true)
        try manager.createSymbolicLink(atPath: root + "/bin/darkroom", withDestinationPath: Workspace.binary)
        try manager.copyItem(atPath: Workspace.packageRoot + "/samples", toPath: root + "/samples")
        // The examples' port, in the blocks and in the bundled settings `serve` reads, is a free one.
        let port = try LoopbackPort.free()
        let settings = try String(contentsOfFile: Workspace.packageRoot + "/pipeline.json", encoding: .utf8)
        try settings.replacingOccurrences(of: "8470", with: String(port)).write(toFile: root + "/pipeline.json", atomically: true, encoding: .utf8)

        // One script per file, so that a block may use what an earlier one set up (a variable,
        // a server in the background); each block records its line before it runs.
        var script = """
            set -eo pipefail
            cleanup() { for job in $(jobs -p); do kill "$job" 2>/dev/null || true; done; wait 2>/dev/null || true; }
            trap cleanup EXIT

            """
        for block in runnable {
            script += "echo \(block.line) > .doc-test-block\n"
            script += block.text.replacingOccurrences(of: "8470", with: String(port)) + "\n"
        }
        try script.write(toFile: root + "/.doc-test.sh", atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [root + "/.doc-test.sh"]
        process.currentDirectoryURL = URL(fileURLWithPath: root)
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = root + "/bin:" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["HOME"] = root
        environment["SWIFT_BACKTRACE"] = "enable=no"
        for variable in ["DARKROOM_CONFIG", "DARKROOM_CATALOG_URL", "DARKROOM_API_TOKEN", "DARKROOM_WEBHOOK_SECRET"] {
            environment[variable] = nil
        }
        process.environment = environment
        manager.createFile(atPath: root + "/.doc-test.out", contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: root + "/.doc-test.out"))
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let ended = process.waitForExit(within: 300)
        try? output.close()
        let log = (try? String(contentsOfFile: root + "/.doc-test.out", encoding: .utf8)) ?? ""
        let line = (try? String(contentsOfFile: root + "/.doc-test-block", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
        #expect(ended, "\(file):\(line): the block did not end within 5 minutes\n\(log.suffix(4000))")
        #expect(process.terminationStatus == 0,
                "\(file):\(line): the shell block failed (exit \(process.terminationStatus))\n\(log.suffix(4000))")
    }

    @Test("docs/configuration.md is what `darkroom config reference` prints")
    func configurationReferenceIsGenerated() throws {
        let (status, printed, _) = try OperatorTests.run(Workspace.binary, ["config", "reference"])
        #expect(status == 0)
        let page = try String(contentsOfFile: Workspace.packageRoot + "/docs/configuration.md", encoding: .utf8)
        #expect(page == printed, "regenerate it: darkroom config reference > docs/configuration.md")
    }

    @Test("the README's links reach pages that exist, and it starts a server within its first 60 lines")
    func readmeIsAFrontDoor() throws {
        let readme = try String(contentsOfFile: Workspace.packageRoot + "/README.md", encoding: .utf8)
        #expect(!readme.contains("../shared"), "the README names nothing outside the repository")
        let firstLines = readme.components(separatedBy: "\n").prefix(60).joined(separator: "\n")
        #expect(firstLines.contains("darkroom serve") && firstLines.contains("/v1/uploads") && firstLines.contains("\"done\""))
        for document in try Self.documents() {
            let text = try String(contentsOfFile: Workspace.packageRoot + "/" + document, encoding: .utf8)
            let base = (document as NSString).deletingLastPathComponent
            let links = text.matches(of: /\]\(([^)#:\s]+\.md)(#[^)]*)?\)/).map { String($0.output.1) }
            for link in links {
                let target = base.isEmpty ? link : base + "/" + link
                #expect(FileManager.default.fileExists(atPath: Workspace.packageRoot + "/" + target), "\(document) links to \(link)")
            }
        }
    }
}
