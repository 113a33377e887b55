import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Tells the service manager (systemd, with `Type=notify`) how the daemon is doing, over the
/// datagram socket `$NOTIFY_SOCKET` names: `READY=1` once the catalog is open and the spool is
/// writable, `STOPPING=1` when it starts draining. Without `$NOTIFY_SOCKET` it does nothing.
public enum ServiceManager {
    /// Sends one notification (`READY=1`, `STOPPING=1`, `STATUS=...`, several joined by a line
    /// end); whether it was sent. A socket name starting with `@` is in the abstract namespace.
    @discardableResult
    public static func notify(_ state: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let name = environment["NOTIFY_SOCKET"], !name.isEmpty else { return false }
        var path = Array(name.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                message.withUnsafeBytes { bytes in sendto(fd, bytes.baseAddress, bytes.count, 0, socketAddress, length) }
            }
        }
        return sent == message.count
    }
}
