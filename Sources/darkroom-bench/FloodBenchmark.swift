import AsyncHTTPClient
import BenchKit
import Foundation
import NIOCore

/// The multipart flood of issue 19, against the real `darkroom serve --no-workers`: `clients`
/// authenticated uploads at once, each a `multipart/form-data` body of `megabytes` MB of empty
/// parts (about 1.3 million in 64 MB), streamed as a client would. It measures how long each
/// takes to be refused and how far the server's resident memory rises above its idle figure
/// (/proc/PID/status, sampled every 10 ms while the floods run).
enum FloodBenchmark {
    /// How soon a flood must be refused.
    static let refusalTargetSeconds = 1.0
    /// How far six floods at once may raise the server's memory.
    static let memoryTargetMegabytes = 100.0
    /// The chunk the clients stream the body in.
    static let chunkBytes = 64 << 10

    struct Options {
        var clients = 6
        var megabytes = 64

        init() {}

        init(_ arguments: BenchArguments) throws {
            try arguments.check(valueFlags: ["--clients", "--megabytes"])
            clients = try arguments.int("--clients", default: clients, in: 1...64)
            megabytes = try arguments.int("--megabytes", default: megabytes, in: 1...1024)
        }
    }

    static func run(_ options: Options) throws -> [Verdict] {
        try HTTPBenchmark.Outcome.waiting { try await measure(options) }
    }

    static func measure(_ options: Options) async throws -> [Verdict] {
        print("## flood: \(options.clients) multipart bodies of \(options.megabytes) MB of empty parts at once to `darkroom serve`\n")
        let darkroom = try PipelineBenchmark.darkroomBinary()
        let scratch = try Machine.scratchDirectory("flood")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let workspace = try PipelineWorkspace(root: scratch.appendingPathComponent("run"), workers: 1,
                                              extra: ["server": ["host": "127.0.0.1", "port": 0, "max_upload_bytes": options.megabytes << 20]])
        let log = workspace.root.appendingPathComponent("serve.log").path
        let server = try HTTPBenchmark.start(darkroom, workspace: workspace, workers: false, log: log)
        defer { if server.isRunning { server.terminate() } }
        let port = try await HTTPBenchmark.listeningPort(log, server: server)
        let client = HTTPClient.shared
        // One small request first, so that the idle figure includes what serving anything costs.
        _ = try? await client.execute(request(port: port, body: nil), timeout: .seconds(10))
        try await Task.sleep(for: .milliseconds(500))
        let idle = residentMegabytes(server.processIdentifier)

        let part = Array("--flood\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\n\r\n".utf8)
        let chunk = ByteBuffer(bytes: Array((0..<(chunkBytes / part.count)).flatMap { _ in part }))
        let chunks = (options.megabytes << 20) / chunk.readableBytes
        let sampler = Task { () -> Double in
            var peak = 0.0
            while !Task.isCancelled {
                peak = max(peak, residentMegabytes(server.processIdentifier))
                try? await Task.sleep(for: .milliseconds(10))
            }
            return peak
        }
        let answers = try await withThrowingTaskGroup(of: (status: Int, seconds: Double, error: String?).self) { group in
            for _ in 0..<options.clients {
                group.addTask {
                    let body = HTTPClientRequest.Body.stream(Chunks(chunk: chunk, count: chunks), length: .known(Int64(chunks * chunk.readableBytes)))
                    let started = Machine.now()
                    do {
                        let response = try await client.execute(request(port: port, body: body), timeout: .seconds(120))
                        let text = try await response.body.collect(upTo: 1 << 20)
                        let error = (try? JSONSerialization.jsonObject(with: Data(text.readableBytesView)) as? [String: Any])?["error"] as? String
                        return (Int(response.status.code), Machine.now() - started, error)
                    } catch {
                        return (0, Machine.now() - started, "\(error)")
                    }
                }
            }
            var all: [(status: Int, seconds: Double, error: String?)] = []
            for try await answer in group { all.append(answer) }
            return all
        }
        try await Task.sleep(for: .milliseconds(200))
        sampler.cancel()
        let peak = await sampler.value
        let rise = peak - idle
        let slowest = answers.map { $0.seconds }.max() ?? 0
        let refused = answers.filter { $0.status == 413 }.count
        for answer in answers.prefix(1) { print("  answer: \(answer.status) \(answer.error ?? "")") }
        print(String(format: "  %d of %d refused with 413; slowest answer %.3f s; server RSS %.1f MB idle, %.1f MB peak (+%.1f MB)\n",
                     refused, answers.count, slowest, idle, peak, rise))
        print("The server is `darkroom serve --no-workers` on loopback; each client streams its body in \(chunkBytes >> 10) KB chunks with its")
        print("Content-Length; the time runs from the request's start to its whole answer. RSS is /proc/PID/status VmRSS.\n")
        let verdicts = [
            Verdict(section: "flood", measure: "\(options.clients) floods of \(options.megabytes) MB of empty multipart parts at once: refused, slowest answer",
                    figure: String(format: "%d of %d with 413, %.3f s", refused, answers.count, slowest),
                    target: String(format: "all, < %.0f s", refusalTargetSeconds),
                    passed: refused == answers.count && slowest < refusalTargetSeconds),
            Verdict(section: "flood", measure: "server memory above idle during the \(options.clients) floods",
                    figure: String(format: "+%.1f MB (%.1f → %.1f)", rise, idle, peak),
                    target: String(format: "< %.0f MB", memoryTargetMegabytes), passed: rise < memoryTargetMegabytes),
        ]
        Verdict.printTable(verdicts)
        print("")
        return verdicts
    }

    static func request(port: Int, body: HTTPClientRequest.Body?) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)" + (body == nil ? "/healthz" : "/v1/uploads"))
        request.method = body == nil ? .GET : .POST
        request.headers.add(name: "Authorization", value: "Bearer \(HTTPBenchmark.token)")
        if let body {
            request.headers.add(name: "Content-Type", value: "multipart/form-data; boundary=flood")
            request.body = body
        }
        return request
    }

    /// The resident memory of a process in MB (VmRSS); 0 when it cannot be read.
    static func residentMegabytes(_ pid: Int32) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kilobytes / 1024
    }

    /// The same chunk `count` times, made as it is sent.
    struct Chunks: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        let chunk: ByteBuffer
        let count: Int

        struct AsyncIterator: AsyncIteratorProtocol {
            let chunk: ByteBuffer
            var left: Int

            mutating func next() async -> ByteBuffer? {
                guard left > 0 else { return nil }
                left -= 1
                return chunk
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunk: chunk, left: count) }
    }
}
