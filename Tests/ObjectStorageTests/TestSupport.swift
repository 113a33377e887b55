import Foundation
@testable import ObjectStorage

/// Runs `body` with a client for `configuration` and shuts the client down however `body` ends.
func withClient<T>(
    _ configuration: S3Configuration, statistics: ObjectStorageStatistics = ObjectStorageStatistics(),
    sleep: @escaping @Sendable (Double) async throws -> Void = { _ in },
    random: @escaping @Sendable () -> Double = { 0.5 },
    _ body: (S3Client) async throws -> T
) async throws -> T {
    let client = try S3Client(configuration: configuration, statistics: statistics, sleep: sleep, random: random, now: { Date() })
    do {
        let result = try await body(client)
        try await client.shutdown()
        return result
    } catch {
        try? await client.shutdown()
        throw error
    }
}

/// A TCP socket bound to a free loopback port, listening (with a backlog of 4) or not, and its
/// port; nil if the system refused. A socket bound and not listening holds its port while
/// refusing every connection to it: no server started meanwhile can take that port, as one can
/// a port freed by a stopped server. The caller closes it.
func loopbackSocket(listening: Bool) -> (descriptor: Int32, port: Int)? {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
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

/// Values recorded from any task, for assertions.
final class Recorder<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `values` is read and written under `lock` only.
    private let lock = NSLock()
    private var values: [Value] = []

    func append(_ value: Value) { lock.withLock { values.append(value) } }
    var all: [Value] { lock.withLock { values } }
}
