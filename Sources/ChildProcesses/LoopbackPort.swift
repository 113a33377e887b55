import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Ports for the servers tests start on loopback.
public enum LoopbackPort {
    /// Why no port could be had.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// A loopback port nothing listens on now, below the kernel's range of ephemeral ports
    /// (32768 and up here): a port of that range, free when asked, may be taken a moment later
    /// as the local end of any outgoing connection (a test's thousands of requests to a bucket),
    /// and the server meant for it then cannot listen. Outside the range only a listener can
    /// take it, and the bind checks that none does now.
    public static func free() throws -> Int {
        for _ in 0..<64 {
            let candidate = Int.random(in: 20_000..<32_000)
            if try canBind(candidate) { return candidate }
        }
        throw Unavailable(description: "no free loopback port found between 20000 and 32000")
    }

    /// Whether a loopback socket can bind `port` now.
    static func canBind(_ port: Int) throws -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Unavailable(description: "cannot open a socket to find a free port") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
