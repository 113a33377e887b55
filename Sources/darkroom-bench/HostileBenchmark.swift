import BenchInputs
import BenchKit
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Attack 1 of issue 29 and the slow uploads of its item 4, repeated against the real
/// `darkroom serve --no-workers` on loopback:
///
/// - `trickle`: `connections` unauthenticated connections each promising a body of 1e9 bytes
///   (`Content-Length: 1000000000`) and sending one byte every 10 s, re-opened as they close;
/// - `wait`: `pollers` authorised `GET /v1/uploads/ID?wait=60` on an upload that stays queued,
///   each asked again as soon as it is answered or closed;
/// - `slow`: `slow` authorised uploads that send 2 MB of an 8 MB body, then a byte a second.
///
/// The attackers come from `addresses` loopback addresses (127.0.1.x; 1 by default, the attack
/// as it was made); with more, the limit of connections per client no longer turns them away
/// and `server.max_connections` is what holds. Meanwhile a probe asks the admin
/// listener's `/healthz` every 100 ms, and a well-behaved client (127.0.0.2) uploads a small photo
/// every second; the worst latency of each, and the server's resident memory, are printed.
enum HostileBenchmark {
    static let healthTargetSeconds = 0.1
    static let uploadTargetSeconds = 1.0
    static let slowMemoryTargetMegabytes = 100.0

    struct Options {
        var connections = 1100
        var pollers = 2000
        var slow = 100
        var seconds = 20
        var addresses = 1

        init(_ arguments: BenchArguments) throws {
            try arguments.check(valueFlags: ["--connections", "--pollers", "--slow", "--seconds", "--addresses"])
            connections = try arguments.int("--connections", default: connections, in: 1...5000)
            pollers = try arguments.int("--pollers", default: pollers, in: 1...5000)
            slow = try arguments.int("--slow", default: slow, in: 1...1000)
            seconds = try arguments.int("--seconds", default: seconds, in: 2...600)
            addresses = try arguments.int("--addresses", default: addresses, in: 1...250)
        }
    }

    /// What one phase measured.
    struct Figures: Sendable {
        var worstHealth = 0.0
        var healthFailures = 0
        var worstUpload = 0.0
        var uploadFailures = 0
        var peakMegabytes = 0.0
    }

    static func run(_ options: Options) throws -> [Verdict] {
        raiseFileLimit()
        print("## hostile: attack 1 of issue 29 and slow uploads against `darkroom serve --no-workers`\n")
        let darkroom = try PipelineBenchmark.darkroomBinary()
        let scratch = try Machine.scratchDirectory("hostile")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let workspace = try PipelineWorkspace(root: scratch.appendingPathComponent("run"), workers: 1,
                                              extra: ["server": ["host": "127.0.0.1", "port": 0]])
        let log = workspace.root.appendingPathComponent("serve.log").path
        let server = try HTTPBenchmark.start(darkroom, workspace: workspace, workers: false, log: log)
        defer { if server.isRunning { server.terminate() } }
        let (port, admin) = try ports(log, server: server)
        let photo = SyntheticPhoto.png(width: 64, height: 64)
        guard let first = upload(photo, port: port, tag: 0).id else { throw BenchError("the first upload was not accepted") }
        Thread.sleep(forTimeInterval: 0.5)
        let idle = FloodBenchmark.residentMegabytes(server.processIdentifier)

        let trickleHead = "POST /v1/uploads HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n"
        let trickle = measure(options, port: port, admin: admin, photo: photo, server: server) {
            Attackers(count: options.connections, addresses: options.addresses, port: port,
                      opening: Array(trickleHead.utf8), every: 10, byte: Array("x".utf8))
        }
        let waitHead = "GET /v1/uploads/\(first)?wait=60 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(HTTPBenchmark.token)\r\n\r\n"
        let wait = measure(options, port: port, admin: admin, photo: photo, server: server) {
            Attackers(count: options.pollers, addresses: options.addresses, port: port,
                      opening: Array(waitHead.utf8), every: nil, byte: [], askAgain: true)
        }
        var slowBody = Array("POST /v1/uploads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(HTTPBenchmark.token)\r\nContent-Length: \(8 << 20)\r\n\r\n".utf8)
        slowBody += photo.prefix(8)
        slowBody += [UInt8](repeating: 0x20, count: (2 << 20) - 8)
        let slow = measure(options, port: port, admin: admin, photo: photo, server: server) {
            Attackers(count: options.slow, addresses: options.addresses, port: port, opening: slowBody, every: 1, byte: [0x20])
        }
        Thread.sleep(forTimeInterval: 1)
        let after = FloodBenchmark.residentMegabytes(server.processIdentifier)
        server.terminate()
        let stopStarted = Machine.now()
        server.waitUntilExit()
        let stopSeconds = Machine.now() - stopStarted

        for (name, figures) in [("trickle", trickle), ("wait", wait), ("slow", slow)] {
            print("  \(name): " + String(format: "admin /healthz worst %.3f s (%d failed); upload worst %.3f s (%d failed); server RSS peak %.1f MB",
                                           figures.worstHealth, figures.healthFailures, figures.worstUpload, figures.uploadFailures,
                                           figures.peakMegabytes))
        }
        print(String(format: "  server RSS %.1f MB idle, %.1f MB after the attacks; SIGTERM to exit %.2f s\n", idle, after, stopSeconds))
        print("Each phase runs \(options.seconds) s: \(options.connections) trickling connections, then \(options.pollers) wait pollers,")
        print("then \(options.slow) slow uploads, from \(options.addresses) loopback addresses; /healthz is asked on the admin listener")
        print("every 100 ms and a \(photo.count)-byte photo is uploaded from 127.0.0.2 every second (a failure counts as \(Int(timeoutSeconds)) s).\n")
        var verdicts: [Verdict] = []
        for (name, figures) in [("trickle", trickle), ("wait", wait), ("slow", slow)] {
            verdicts.append(Verdict(section: "hostile", measure: "\(name): admin /healthz worst latency",
                                    figure: String(format: "%.3f s", figures.worstHealth),
                                    target: String(format: "< %.1f s", healthTargetSeconds),
                                    passed: figures.worstHealth < healthTargetSeconds && figures.healthFailures == 0))
            verdicts.append(Verdict(section: "hostile", measure: "\(name): a well-behaved upload's worst latency",
                                    figure: String(format: "%.3f s", figures.worstUpload),
                                    target: String(format: "< %.0f s", uploadTargetSeconds),
                                    passed: figures.worstUpload < uploadTargetSeconds && figures.uploadFailures == 0))
        }
        verdicts.append(Verdict(section: "hostile", measure: "\(options.slow) slow uploads: server memory above idle",
                                figure: String(format: "+%.1f MB", slow.peakMegabytes - idle),
                                target: String(format: "< %.0f MB", slowMemoryTargetMegabytes),
                                passed: slow.peakMegabytes - idle < slowMemoryTargetMegabytes))
        Verdict.printTable(verdicts)
        print("")
        return verdicts
    }

    /// How long a probe or an upload may take before it counts as failed.
    static let timeoutSeconds = 10.0

    /// Runs one phase: the attackers start, the probes run for `seconds`, the attackers stop.
    static func measure(_ options: Options, port: Int, admin: Int, photo: [UInt8], server: Process,
                        attackers make: () -> Attackers) -> Figures {
        let attackers = make()
        let stop = Machine.now() + Double(options.seconds)
        let attack = Thread { attackers.run(until: stop) }
        attack.start()
        let figures = FiguresBox()
        let uploaded = Mutex(false)
        let uploader = Thread {
            defer { uploaded.withLock { $0 = true } }
            var tag = 1
            while Machine.now() < stop {
                let started = Machine.now()
                let answer = upload(photo, port: port, tag: tag, from: "127.0.0.2")
                let seconds = answer.status == 202 ? Machine.now() - started : timeoutSeconds
                figures.state.withLock { figures in
                    figures.worstUpload = max(figures.worstUpload, seconds)
                    if answer.status != 202 { figures.uploadFailures += 1 }
                }
                tag += 1
                Thread.sleep(forTimeInterval: max(0, 1 - (Machine.now() - started)))
            }
        }
        uploader.start()
        while Machine.now() < stop {
            let started = Machine.now()
            let status = exchange("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", port: admin).status
            let seconds = status == 200 ? Machine.now() - started : timeoutSeconds
            let memory = FloodBenchmark.residentMegabytes(server.processIdentifier)
            figures.state.withLock { figures in
                figures.worstHealth = max(figures.worstHealth, seconds)
                if status != 200 { figures.healthFailures += 1 }
                figures.peakMegabytes = max(figures.peakMegabytes, memory)
            }
            Thread.sleep(forTimeInterval: max(0, 0.1 - (Machine.now() - started)))
        }
        // An upload still in hand at the end counts (as a failure if it never ends).
        while !attackers.finished || !uploaded.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.05) }
        Thread.sleep(forTimeInterval: 1.2)
        return figures.state.withLock { $0 }
    }

    final class FiguresBox: Sendable {
        let state = Mutex(Figures())
    }

    /// Uploads `photo` (made distinct by `tag`) as a well-behaved client; its status and id.
    static func upload(_ photo: [UInt8], port: Int, tag: Int, from source: String? = nil) -> (status: Int, id: String?) {
        let body = PhotoSet.distinct(photo, index: tag + Int(Machine.now() * 1000))
        let head = "POST /v1/uploads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(HTTPBenchmark.token)\r\nContent-Type: image/png\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let answer = exchange(head, body: body, port: port, from: source)
        let id = answer.text.firstMatch(of: #/"id":"([0-9a-f]{32})"/#).map { String($0.1) }
        return (answer.status, id)
    }

    /// One request on a fresh connection, read to the server's close; status 0 when it failed.
    static func exchange(_ head: String, body: [UInt8] = [], port: Int, from source: String? = nil) -> (status: Int, text: String) {
        guard let socket = Attackers.connect(port: port, from: source, blocking: true) else { return (0, "") }
        defer { close(socket) }
        var timeout = timeval(tv_sec: Int(timeoutSeconds), tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Array(head.utf8) + body
        guard request.withUnsafeBytes({ send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else { return (0, "") }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[..<count]
        }
        let text = String(decoding: received, as: UTF8.self)
        return (text.hasPrefix("HTTP/1.1 ") ? Int(text.dropFirst(9).prefix(3)) ?? 0 : 0, text)
    }

    /// The main and admin ports, from the server's log.
    static func ports(_ log: String, server: Process) throws -> (Int, Int) {
        let deadline = Machine.now() + HTTPBenchmark.startSeconds
        while Machine.now() < deadline, server.isRunning {
            let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
            func port(_ line: Substring?) -> Int? { line?.firstMatch(of: #/ (?:admin_)?port=(\d+)/#).flatMap { Int($0.1) } }
            if let admin = port(lines.first { $0.contains("admin_port=") }),
               let main = port(lines.first { $0.contains(" port=") }) {
                return (main, admin)
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw BenchError("darkroom serve did not say where it and its admin listener listen within \(Int(HTTPBenchmark.startSeconds)) s")
    }

    /// Enough descriptors for thousands of connections.
    static func raiseFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}

/// Many raw connections driven by one thread: each sends `opening`, then `byte` every `every`
/// seconds (or, with `askAgain`, its opening again once answered), and is re-opened when the
/// server closes it (at most every 100 ms).
final class Attackers: @unchecked Sendable {
    // @unchecked: driven by one thread; `finished` is only read elsewhere.
    let count: Int
    let addresses: Int
    let port: Int
    let opening: [UInt8]
    let every: Double?
    let byte: [UInt8]
    let askAgain: Bool
    private let done = Mutex(false)
    var finished: Bool { done.withLock { $0 } }

    init(count: Int, addresses: Int, port: Int, opening: [UInt8], every: Double?, byte: [UInt8], askAgain: Bool = false) {
        (self.count, self.addresses, self.port, self.opening, self.every, self.byte, self.askAgain) =
            (count, addresses, port, opening, every, byte, askAgain)
    }

    func run(until stop: Double) {
        var sockets = [Int32](repeating: -1, count: count)
        var next = [Double](repeating: 0, count: count)
        // Opened, its opening not yet taken (the connection is still being made).
        var unsent = [Bool](repeating: false, count: count)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while Machine.now() < stop {
            let now = Machine.now()
            for index in 0..<count where now >= next[index] {
                if sockets[index] < 0 {
                    guard let socket = Self.connect(port: port, from: "127.0.1.\(1 + index % addresses)", blocking: false) else {
                        next[index] = now + 0.1
                        continue
                    }
                    sockets[index] = socket
                    unsent[index] = true
                    next[index] = now
                } else if unsent[index] {
                    let sent = opening.withUnsafeBytes { send(sockets[index], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                    if sent > 0 {
                        // What did not fit is left out: a trickle, a poll or a slow body need no more.
                        unsent[index] = false
                        next[index] = every.map { now + $0 } ?? .infinity
                    } else {
                        next[index] = now + 0.05
                    }
                } else if let every {
                    _ = byte.withUnsafeBytes { send(sockets[index], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                    next[index] = now + every
                }
            }
            var pollers = sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&pollers, nfds_t(pollers.count), 20) > 0 else { continue }
            for (index, poller) in pollers.enumerated() where poller.revents != 0 && sockets[index] >= 0 {
                let read = recv(sockets[index], &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if read <= 0 || askAgain {
                    close(sockets[index])
                    sockets[index] = -1
                    next[index] = Machine.now() + 0.1
                }
            }
        }
        for socket in sockets where socket >= 0 { close(socket) }
        done.withLock { $0 = true }
    }

    /// A TCP connection to 127.0.0.1:port from `source`; nil when refused.
    static func connect(port: Int, from source: String?, blocking: Bool) -> Int32? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        func address(_ host: String, _ port: Int) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr(host)
            return address
        }
        if let source {
            var local = address(source, 0)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                close(socket)
                return nil
            }
        }
        // Non-blocking before connecting: a server whose listen queue is full must not stall the attackers.
        if !blocking { _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK) }
        var remote = address("127.0.0.1", port)
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 || (!blocking && errno == EINPROGRESS) else {
            close(socket)
            return nil
        }
        return socket
    }
}
