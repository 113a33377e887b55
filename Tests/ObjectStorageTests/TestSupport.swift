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

/// Values recorded from any task, for assertions.
final class Recorder<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `values` is read and written under `lock` only.
    private let lock = NSLock()
    private var values: [Value] = []

    func append(_ value: Value) { lock.withLock { values.append(value) } }
    var all: [Value] { lock.withLock { values } }
}
