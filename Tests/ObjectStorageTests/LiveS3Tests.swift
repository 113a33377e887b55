import Foundation
import GatewayHarness
@testable import ObjectStorage
import Testing

/// The client against a real S3 server: the tests' RADOS Gateway, or, when
/// DARKROOM_S3_TEST_ENDPOINT is set, a server of your choosing (with AWS_ACCESS_KEY_ID,
/// AWS_SECRET_ACCESS_KEY, optional AWS_REGION, and an existing bucket in
/// DARKROOM_S3_TEST_BUCKET, default `darkroom-test`). It writes and removes keys under
/// `darkroom-objectstorage-test/`.
@Suite("S3 client against a real server",
       .enabled(if: SharedGateway.available || ProcessInfo.processInfo.environment["DARKROOM_S3_TEST_ENDPOINT"] != nil,
                Comment(rawValue: SharedGateway.skipReason)))
struct LiveS3Tests {
    /// The server's configuration: the one the environment names, else the shared gateway's.
    static func configuration() throws -> S3Configuration {
        var environment = ProcessInfo.processInfo.environment
        if let endpoint = environment["DARKROOM_S3_TEST_ENDPOINT"] {
            environment["AWS_ENDPOINT_URL"] = endpoint
            return try S3Configuration.fromEnvironment(bucket: environment["DARKROOM_S3_TEST_BUCKET"] ?? "darkroom-test", environment)
        }
        let gateway = try SharedGateway.gateway.get()
        environment["AWS_ENDPOINT_URL"] = gateway.endpoint.absoluteString
        environment["AWS_ACCESS_KEY_ID"] = gateway.accessKey
        environment["AWS_SECRET_ACCESS_KEY"] = gateway.secretKey
        environment["AWS_REGION"] = gateway.region
        return try S3Configuration.fromEnvironment(bucket: try SharedGateway.freshBucket(), addressing: .pathStyle, environment)
    }

    @Test("put, head, get a range, list, presign, delete")
    func roundTrip() async throws {
        let configuration = try Self.configuration()
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
