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

    /// A TCP socket bound to a free loopback port, listening (with a backlog of 4) or not, and its
    /// port; nil if the system refused. A socket bound and not listening holds its port while
    /// refusing every connection to it: no server started meanwhile can take that port, as one can
    /// a port freed by a stopped server. A listening one that nothing accepts from is a server
    /// that never answers: connections complete and requests wait. The caller closes it.
    public static func socket(listening: Bool) -> (descriptor: Int32, port: Int)? {
        let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && (!listening || listen(descriptor, 4) == 0) && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            return nil
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }
}
