import Foundation
@testable import ObjectStorage
import Testing

/// The client against a real S3 server of your choosing, only when DARKROOM_S3_TEST_ENDPOINT is
/// set (with AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, optional AWS_REGION, and the bucket in
/// DARKROOM_S3_TEST_BUCKET, default `darkroom-test`, which must exist). It writes and removes
/// keys under `darkroom-objectstorage-test/`.
@Suite("S3 client against DARKROOM_S3_TEST_ENDPOINT",
       .enabled(if: ProcessInfo.processInfo.environment["DARKROOM_S3_TEST_ENDPOINT"] != nil,
                "set DARKROOM_S3_TEST_ENDPOINT (and AWS credentials) to run against a real S3 server"))
struct LiveS3Tests {
    @Test("put, head, get a range, list, presign, delete")
    func roundTrip() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["AWS_ENDPOINT_URL"] = environment["DARKROOM_S3_TEST_ENDPOINT"]
        let configuration = try S3Configuration.fromEnvironment(bucket: environment["DARKROOM_S3_TEST_BUCKET"] ?? "darkroom-test", environment)
        try await withClient(configuration, sleep: { try await Task.sleep(nanoseconds: UInt64($0 * 1e9)) },
                             random: { Double.random(in: 0..<1) }) { client in
            let prefix = "darkroom-objectstorage-test/\(UUID().uuidString)/"
            let key = prefix + "a b/été.bin"
            let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            #expect(try await client.putIfAbsent(key: key, bytes: bytes).wasWritten)
            #expect(try await client.putIfAbsent(key: key, bytes: bytes).wasWritten == false)
            #expect(try await client.head(key: key)?.size == bytes.count)
            #expect(try await client.get(key: key, range: 5...9) == Array(bytes[5...9]))
            #expect(try await client.list(prefix: prefix).objects.map(\.key) == [key])
            _ = try client.presignedURL(key: key, expires: 60)
            try await client.delete(key: key)
            #expect(try await client.head(key: key) == nil)
        }
    }
}
