import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A raw TCP connection to a loopback server, for what an HTTP client library will not send:
/// a body that trickles or never comes, broken chunked framing, `Expect: 100-continue` looked
/// at byte by byte. Blocking: use it from `RawConnection.off` (a thread of its own), never on
/// the concurrency pool the server in this process runs on.
final class RawConnection: @unchecked Sendable {
    // @unchecked: used by one thread at a time.
    let descriptor: Int32
    private var received: [UInt8] = []

    /// Connects to `127.0.0.1:port`, from `source` (another loopback address, to be another client).
    init?(port: Int, from source: String? = nil) {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                close(descriptor)
                return nil
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            return nil
        }
    }

    deinit {
        close(descriptor)
    }

    /// Sends bytes; false when the connection no longer takes them.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Reads what arrives within `seconds`; false once the server has closed (end of file or reset).
    @discardableResult
    func read(for seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) > 0 else { continue }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { return false }
            received += buffer[..<count]
        }
        return true
    }

    /// Reads until `text` has arrived or the server closed, at most `seconds`; whether it arrived.
    func read(until text: String, within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if self.text.contains(text) { return true }
            if !read(for: 0.05) { return self.text.contains(text) }
        }
        return self.text.contains(text)
    }

    /// Whether the server closes the connection within `seconds` (reading what comes meanwhile).
    func closedByServer(within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if !read(for: 0.05) { return true }
        }
        return false
    }

    /// Everything received so far.
    var text: String { String(decoding: received, as: UTF8.self) }

    /// The status codes of the answers received so far, in order (100 included).
    var statuses: [Int] {
        text.components(separatedBy: "\r\n").compactMap { line in
            guard line.hasPrefix("HTTP/1.1 ") else { return nil }
            return Int(line.dropFirst(9).prefix(3))
        }
    }

    /// The value of header `name` in what was received (the last answer's), if any.
    func header(_ name: String) -> String? {
        let lines = text.components(separatedBy: "\r\n")
        return lines.last { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            .map { String($0.drop { $0 != ":" }.dropFirst()).trimmingCharacters(in: .whitespaces) }
    }

    /// The JSON body of the last answer received, if it is an object.
    var jsonBody: [String: Any]? {
        guard let start = text.range(of: "\r\n\r\n", options: .backwards) else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(text[start.upperBound...].utf8)) as? [String: Any]
    }

    /// Runs blocking socket work on a thread of its own.
    static func off<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { done in Thread { done.resume(returning: body()) }.start() }
    }
}
