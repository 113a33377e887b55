import AsyncHTTPClient
import ChildProcesses
import Foundation
import Testing

/// The `darkroom serve` binary itself: its refusal without a token, and its shutdown on SIGTERM.
@Suite("darkroom serve")
struct ServeCommandTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The built binary: `$DARKROOM_BIN`, else the one beside the test bundle.
    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["DARKROOM_BIN"] { return path }
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("darkroom").path
        return FileManager.default.isExecutableFile(atPath: beside) ? beside : packageRoot + "/.build/debug/darkroom"
    }

    /// A configuration file over a temporary spool, with the given `server` section.
    private func workspace(server: String) throws -> (root: String, config: String) {
        let root = NSTemporaryDirectory() + "darkroom-serve-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let config = root + "/pipeline.json"
        let text = """
            {"spool": {"root": "\(root)/spool", "settle_seconds": 0}, "library": {"root": "\(root)/library"},
             "catalog": {"path": "\(root)/catalog.sqlite"}, "worker": {"concurrency": 1}, "server": \(server)}
            """
        _ = FileManager.default.createFile(atPath: config, contents: Data(text.utf8))
        return (root, config)
    }

    private func launch(_ arguments: [String], root: String, environment extra: [String: String] = [:]) throws -> (Process, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["DARKROOM_API_TOKEN"] = nil
        environment["SWIFT_BACKTRACE"] = "enable=no"
        environment.merge(extra) { $1 }
        process.environment = environment
        let log = root + "/stderr-" + UUID().uuidString
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: log)
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        return (process, log)
    }

    @Test func refusesToStartWithoutAToken() throws {
        let (root, config) = try workspace(server: #"{"port": 0}"#)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (process, log) = try launch(["serve", "--config", config], root: root)
        process.waitForExit()
        #expect(process.terminationStatus != 0)
        let text = try String(contentsOfFile: log, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(text.contains("set server.token in pipeline.json or DARKROOM_API_TOKEN"))
        #expect(!text.contains("\n"))
    }

    @Test func answersThenExitsZeroOnSIGTERM() async throws {
        let (root, config) = try workspace(server: #"{"port": 0}"#)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (process, log) = try launch(["serve", "--config", config], root: root, environment: ["DARKROOM_API_TOKEN": "s3cret"])
        let bound = try await listeningPort(log)
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(bound)/healthz")
        request.headers.add(name: "Authorization", value: "Bearer s3cret")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        #expect(response.status == .ok)
        process.terminate()
        process.waitForExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        #expect(try String(contentsOfFile: log, encoding: .utf8).contains("darkroom serve stopped"))
    }

    /// `server.worker_niceness`: the spool workers' threads, and they alone, run that many nice
    /// steps below the server's, as the kernel records each thread of the process.
    @Test func theWorkersThreadsAloneRunAtTheConfiguredNiceness() async throws {
        let (root, config) = try workspace(server: #"{"port": 0, "worker_niceness": 7}"#)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (process, log) = try launch(["serve", "--config", config], root: root, environment: ["DARKROOM_API_TOKEN": "s3cret"])
        defer { if process.isRunning { process.terminate() } }
        _ = try await listeningPort(log)
        let pid = process.processIdentifier
        var threads: [(name: String, nice: Int)] = []
        for _ in 0..<100 {
            threads = Self.threads(of: pid)
            if threads.contains(where: { $0.name == "worker-0" }) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let workers = threads.filter { $0.name.hasPrefix("worker-") }
        #expect(workers.map(\.name) == ["worker-0"], "threads: \(threads)")
        #expect(workers.allSatisfy { $0.nice == 7 }, "workers: \(workers)")
        // The event loops that accept and answer requests, and the pools that write uploads and
        // read the catalog for them, keep the process's priority (the main thread's).
        let main = try #require(Self.threads(of: pid, task: pid).first)
        let serving = threads.filter { $0.name.hasPrefix("NIO-") || $0.name.contains("TP-#") }
        #expect(serving.count > 16, "threads: \(threads)")
        #expect(serving.allSatisfy { $0.nice == main.nice }, "serving: \(serving.filter { $0.nice != main.nice }), main: \(main)")
        process.terminate()
        process.waitForExit()
        #expect(process.terminationStatus == 0)
    }

    /// The port a starting `darkroom serve` logs that it listens on.
    private func listeningPort(_ log: String) async throws -> Int {
        for _ in 0..<200 {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let port = text.firstMatch(of: #/ port=(\d+)/#).flatMap({ Int($0.1) }) { return port }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("no port in the log after 10 s: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        throw CancellationError()
    }

    /// The threads of process `pid` (or its one thread `task`): name and nice value, from /proc.
    static func threads(of pid: Int32, task: Int32? = nil) -> [(name: String, nice: Int)] {
        let directory = "/proc/\(pid)/task"
        let tasks = task.map { ["\($0)"] } ?? (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return tasks.compactMap { task -> (name: String, nice: Int)? in
            guard let comm = try? String(contentsOfFile: "\(directory)/\(task)/comm", encoding: .utf8),
                  let stat = try? String(contentsOfFile: "\(directory)/\(task)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            // After "pid (comm) ", the fields run from the 3rd (state); nice is the 19th.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 16, let nice = Int(fields[16]) else { return nil }
            return (comm.trimmingCharacters(in: .whitespacesAndNewlines), nice)
        }.sorted { $0.name < $1.name }
    }

    @Test func helpReadsLikeAManPage() throws {
        let (root, _) = try workspace(server: "{}")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["serve", "--help"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitForExit()
        for words in ["OVERVIEW:", "POST /v1/uploads", "SIGTERM", "DARKROOM_API_TOKEN", "--no-workers"] {
            #expect(text.contains(words), "\(words)")
        }
    }
}
