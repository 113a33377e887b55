import ChildProcesses
import Foundation
import Testing
@testable import HTTPService

/// Raw loopback sockets that connect and then send nothing, or a request head a piece at a
/// time: the server must keep answering others and cut them after its timeouts.
@Suite("Slow and idle clients", .serialized)
struct SlowClientTests {
    func connectSocket(_ port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if connected != 0 {
            close(fd)
            return -1
        }
        return fd
    }

    func send(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Whether the server has closed `fd` (end of file or reset), waiting at most `seconds`.
    func isClosedByServer(_ fd: Int32, within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { return true }
        }
        return false
    }

    /// A whole GET /healthz over a fresh connection; the status line, or nil.
    func health(_ port: Int) -> String? {
        let fd = connectSocket(port)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        send(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(TestService.token)\r\nConnection: close\r\n\r\n")
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while poll(&poller, 1, 60_000) > 0 {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            received += buffer[..<n]
        }
        return String(decoding: received, as: UTF8.self).split(separator: "\r\n").first.map(String.init)
    }

    /// Runs blocking socket work on a thread of its own: a blocked thread of Swift's small
    /// concurrency pool (two on a 2-core machine) is one the server in this process cannot use.
    func blocking<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { done in Thread { done.resume(returning: body()) }.start() }
    }

    /// The real `darkroom serve` in a process of its own (its event loops and its concurrency
    /// pool are not shared with the other suites of this test run), with the given timeouts.
    func startServer(headerTimeout: Double, idleTimeout: Double) async throws -> (process: Process, port: Int, root: String) {
        let root = NSTemporaryDirectory() + "darkroom-slow-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let config = root + "/pipeline.json"
        let text = """
            {"spool": {"root": "\(root)/spool"}, "library": {"root": "\(root)/library"}, "catalog": {"path": "\(root)/catalog.sqlite"},
             "server": {"port": 0, "run_workers": false, "header_timeout_seconds": \(headerTimeout), "idle_timeout_seconds": \(idleTimeout),
                        "max_connections_per_client": 1000}}
            """
        _ = FileManager.default.createFile(atPath: config, contents: Data(text.utf8))
        let log = root + "/stderr"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ServeCommandTests.binary)
        process.arguments = ["serve", "--config", config]
        process.environment = ProcessInfo.processInfo.environment.merging(["DARKROOM_API_TOKEN": TestService.token, "SWIFT_BACKTRACE": "enable=no"]) { $1 }
        process.standardError = FileHandle(forWritingAtPath: log)
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        for _ in 0..<600 {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let port = text.firstMatch(of: #/ port=(\d+)/#).flatMap({ Int($0.1) }) { return (process, port, root) }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.terminate()
        Issue.record("darkroom serve did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        throw CancellationError()
    }

    @Test func healthAnswersAtOnceWhileSlowClientsAreConnectedAndTheyAreCutAfterTheTimeouts() async throws {
        let (server, port, root) = try await startServer(headerTimeout: 3, idleTimeout: 4)
        defer {
            server.terminate()
            server.waitForExit()
            try? FileManager.default.removeItem(atPath: root)
        }
        var silent: [Int32] = []
        var trickling: [Int32] = []
        defer { (silent + trickling).forEach { close($0) } }
        for i in 0..<240 {
            let fd = connectSocket(port)
            #expect(fd >= 0)
            if i % 2 == 0 { silent.append(fd) } else { trickling.append(fd); send(fd, "GET /healthz HTTP/1.1\r\n") }
        }
        // Headers a byte at a time, each byte well within the idle timeout.
        for _ in 0..<3 {
            for fd in trickling { send(fd, "X") }
            let started = Date()
            let status = await blocking { health(port) }
            #expect(status == "HTTP/1.1 200 OK", "\(status ?? "no answer")")
            // Milliseconds on an idle machine (see the README, 10,000 such clients against the
            // release build); the bound only says it is answered, leaving room for a heavily
            // loaded test run. What the timeouts change is tested below: the slow ones are cut.
            #expect(Date().timeIntervalSince(started) < 60, "answered under slow clients")
            try await Task.sleep(nanoseconds: 300_000_000)
        }
        let sockets = silent + trickling
        let stillOpen = await blocking { sockets.filter { !isClosedByServer($0, within: 10) } }
        #expect(stillOpen.isEmpty, "\(stillOpen.count) slow connections still open after the header timeout")
    }

    @Test func aKeptAliveConnectionIsClosedAfterTheIdleTimeout() async throws {
        let (server, port, root) = try await startServer(headerTimeout: 10, idleTimeout: 1)
        defer {
            server.terminate()
            server.waitForExit()
            try? FileManager.default.removeItem(atPath: root)
        }
        let fd = connectSocket(port)
        #expect(fd >= 0)
        defer { close(fd) }
        send(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(TestService.token)\r\n\r\n")
        let (answered, closed) = await blocking {
            var buffer = [UInt8](repeating: 0, count: 4096)
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let answered = poll(&poller, 1, 20_000) > 0 && recv(fd, &buffer, buffer.count, 0) > 0
            return (answered, isClosedByServer(fd, within: 20))
        }
        #expect(answered, "the request is answered")
        #expect(closed, "then the idle connection is closed")
    }
}
