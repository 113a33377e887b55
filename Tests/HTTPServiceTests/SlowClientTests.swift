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
        while poll(&poller, 1, 20_000) > 0 {
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

    @Test func healthAnswersAtOnceWhileSlowClientsAreConnectedAndTheyAreCutAfterTheTimeouts() async throws {
        try await TestService.with(workers: false, configure: {
            $0.server.headerTimeoutSeconds = 2
            $0.server.idleTimeoutSeconds = 3
        }) { service in
            var silent: [Int32] = []
            var trickling: [Int32] = []
            defer { (silent + trickling).forEach { close($0) } }
            for i in 0..<240 {
                let fd = connectSocket(service.port)
                #expect(fd >= 0)
                if i % 2 == 0 { silent.append(fd) } else { trickling.append(fd); send(fd, "GET /healthz HTTP/1.1\r\n") }
            }
            // Headers a byte at a time, each byte well within the idle timeout.
            for _ in 0..<3 {
                for fd in trickling { send(fd, "X") }
                let started = Date()
                let port = service.port
                let status = await blocking { health(port) }
                #expect(status == "HTTP/1.1 200 OK", "\(status ?? "no answer")")
                // Milliseconds on an idle machine (see the README); the bound leaves room for a test run
                // whose other suites keep Swift's concurrency pool busy. Without the timeouts, 10,000
                // such clients kept /healthz from answering for over a minute.
                #expect(Date().timeIntervalSince(started) < 15, "answered under slow clients")
                try await Task.sleep(nanoseconds: 300_000_000)
            }
            let sockets = silent + trickling
            let stillOpen = await blocking { sockets.filter { !isClosedByServer($0, within: 6) } }
            #expect(stillOpen.isEmpty, "\(stillOpen.count) slow connections still open after the header timeout")
        }
    }

    @Test func aKeptAliveConnectionIsClosedAfterTheIdleTimeout() async throws {
        try await TestService.with(workers: false, configure: {
            $0.server.idleTimeoutSeconds = 1
        }) { service in
            let fd = connectSocket(service.port)
            #expect(fd >= 0)
            defer { close(fd) }
            send(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(TestService.token)\r\n\r\n")
            let (answered, closed) = await blocking {
                var buffer = [UInt8](repeating: 0, count: 4096)
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let answered = poll(&poller, 1, 5000) > 0 && recv(fd, &buffer, buffer.count, 0) > 0
                return (answered, isClosedByServer(fd, within: 5))
            }
            #expect(answered, "the request is answered")
            #expect(closed, "then the idle connection is closed")
        }
    }
}
