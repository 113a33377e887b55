import BucketStorage
import Foundation
import GatewayHarness
import ObjectStorage
import Settings
import Storage
import Testing

/// `LibraryStores`: the store the settings name (a bucket when `library.url` is set, else the
/// directory), the one-line errors when a bucket cannot be reached as configured, and the
/// readiness check.
@Suite("Library stores from the settings")
struct LibraryStoresTests {
    static let keys = ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"]

    @Test("without library.url the store is the local directory, ready while it can be written")
    func localDirectory() async throws {
        let root = FileManager.default.temporaryDirectory.path + "/darkroom-stores-" + UUID().uuidString.prefix(8).lowercased()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var configuration = Configuration.defaults
        configuration.libraryRoot = root + "/library"
        configuration.backupDir = root + "/backup"
        let store = try LibraryStores.open(configuration, environment: Self.keys)
        let library = try #require(store as? Library)
        #expect(library.root == root + "/library")
        #expect(library.backupRoot == root + "/backup")
        #expect(store.location == root + "/library")
        try await onPlainThread { try LibraryStores.checkReachable(store) }

        try FileManager.default.removeItem(atPath: root + "/library")
        let error = await #expect(throws: FileSystemError.self) { try await onPlainThread { try LibraryStores.checkReachable(store) } }
        #expect(error?.path == root + "/library")
    }

    @Test("library.url without credentials in the environment: one line naming what is missing")
    func missingCredentials() throws {
        var configuration = Configuration.defaults
        configuration.libraryURL = "s3://photos-bucket/library"
        let neither = #expect(throws: LibraryStoreError.self) { try LibraryStores.open(configuration, environment: [:]) }
        #expect(neither?.description
                == "library.url is s3://photos-bucket/library/ but AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set in the environment")
        #expect(neither?.category == .configuration && neither?.isTransient == false)
        let noSecret = #expect(throws: LibraryStoreError.self) {
            try LibraryStores.open(configuration, environment: ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": " "])
        }
        #expect(noSecret?.description == "library.url is s3://photos-bucket/library/ but AWS_SECRET_ACCESS_KEY is not set in the environment")
        let copyTarget = #expect(throws: LibraryStoreError.self) {
            try LibraryStores.bucket(try #require(BucketAddress("s3://other-bucket")), configuration: configuration, environment: [:])
        }
        #expect(copyTarget?.description
                == "the library at s3://other-bucket/ but AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set in the environment")
    }

    @Test("a library.url that is not s3://, or an endpoint that is not http(s), is refused in one line")
    func badSettings() throws {
        var configuration = Configuration.defaults
        configuration.libraryURL = "https://photos-bucket/library"
        let url = #expect(throws: LibraryStoreError.self) { try LibraryStores.open(configuration, environment: Self.keys) }
        #expect(url?.description == "library.url is https://photos-bucket/library, which is not s3://BUCKET/PREFIX")

        configuration.libraryURL = "s3://photos-bucket/library"
        configuration.libraryS3.endpoint = "ftp://files.example"
        let endpoint = #expect(throws: LibraryStoreError.self) { try LibraryStores.open(configuration, environment: Self.keys) }
        #expect(endpoint?.description.hasPrefix("library.url is s3://photos-bucket/library/ but the endpoint must be an http:// or https:// URL") == true)
        #expect(endpoint?.description.contains("\n") == false)
    }

    @Test("endpoint, region and addressing come from library.s3, else the environment; credentials from the environment")
    func clientSettings() async throws {
        var configuration = Configuration.defaults
        configuration.libraryURL = "s3://photos-bucket/a/b"
        var environment = Self.keys
        environment["AWS_SESSION_TOKEN"] = "session"

        let aws = try #require(try LibraryStores.open(configuration, environment: environment) as? BucketLibrary)
        #expect(aws.location == "s3://photos-bucket/a/b/")
        #expect(aws.prefix == "a/b/")
        #expect(aws.client.configuration.endpoint == "https://s3.us-east-1.amazonaws.com")
        #expect(aws.client.configuration.region == "us-east-1")
        #expect(aws.client.configuration.addressing == .virtualHosted)
        #expect(aws.client.configuration.credentials == S3Credentials(accessKey: "AKIDEXAMPLE", secretKey: Self.keys["AWS_SECRET_ACCESS_KEY"] ?? "",
                                                                      sessionToken: "session"))
        #expect(aws.key(for: "originals/ab/cd/x.jpg") == "a/b/originals/ab/cd/x.jpg")
        let url = try aws.presignedGET("variants/feed/ab/cd/x.webp", seconds: 60)
        #expect(url.hasPrefix("https://photos-bucket.s3.us-east-1.amazonaws.com/a/b/variants/feed/ab/cd/x.webp?"))
        try await aws.shutdown()

        environment["AWS_ENDPOINT_URL"] = "http://127.0.0.1:7480"
        environment["AWS_REGION"] = "eu-west-3"
        let local = try #require(try LibraryStores.open(configuration, environment: environment) as? BucketLibrary)
        #expect(local.client.configuration.endpoint == "http://127.0.0.1:7480")
        #expect(local.client.configuration.region == "eu-west-3")
        #expect(local.client.configuration.addressing == .pathStyle)
        try await local.shutdown()

        configuration.libraryS3.endpoint = "https://objects.example"
        configuration.libraryS3.region = "garage"
        configuration.libraryS3.pathStyle = false
        let chosen = try LibraryStores.bucket(try #require(BucketAddress("s3://copy-target")), configuration: configuration, environment: environment)
        #expect(chosen.location == "s3://copy-target/")
        #expect(chosen.prefix == "")
        #expect(chosen.client.configuration.endpoint == "https://objects.example")
        #expect(chosen.client.configuration.region == "garage")
        #expect(chosen.client.configuration.addressing == .virtualHosted)
        try await chosen.shutdown()
    }

    @Test("an endpoint where nothing listens is a transient failure of the readiness check")
    func nothingListens() async throws {
        var configuration = Configuration.defaults
        configuration.libraryURL = "s3://nowhere-bucket/library/"
        configuration.libraryS3.endpoint = "http://127.0.0.1:1"
        let store = try #require(try LibraryStores.open(configuration, environment: Self.keys) as? BucketLibrary)
        let error = await #expect(throws: ObjectStorageError.self) { try await onPlainThread { try LibraryStores.checkReachable(store) } }
        #expect(error?.isTransient == true)
        #expect(error?.category == .storage)
        // Retried as the client's policy allows, then given up.
        #expect(error?.context?.attempts == RetryPolicy().maxAttempts)
        try await store.shutdown()
    }
}

@Suite("Library stores against the gateway", .enabled(if: SharedGateway.available, Comment(rawValue: SharedGateway.skipReason)))
struct LibraryStoresGatewayTests {
    /// The settings and environment that reach `bucket` of the shared gateway.
    static func settings(_ gateway: RadosGateway, bucket: String) -> (Configuration, [String: String]) {
        var configuration = Configuration.defaults
        configuration.libraryURL = "s3://\(bucket)/library/"
        configuration.libraryS3.endpoint = gateway.endpoint.absoluteString
        configuration.libraryS3.region = gateway.region
        return (configuration, ["AWS_ACCESS_KEY_ID": gateway.accessKey, "AWS_SECRET_ACCESS_KEY": gateway.secretKey])
    }

    @Test("the bucket of library.url is reachable; a missing bucket or refused keys are not, and say why")
    func reachability() async throws {
        // On a plain thread: the gateway may be starting, and curl makes the bucket.
        let (gateway, bucket) = try await onPlainThread { (try SharedGateway.gateway.get(), try SharedGateway.freshBucket(prefix: "stores")) }
        let (configuration, environment) = Self.settings(gateway, bucket: bucket)

        let store = try LibraryStores.open(configuration, environment: environment)
        let library = try #require(store as? BucketLibrary)
        try await onPlainThread { try LibraryStores.checkReachable(store) }
        #expect(library.statistics.snapshot().count(.listObjects, .success) == 1)
        let photo = SamplePhoto(seed: 60, count: 1_000)
        let path = try await onPlainThread { try store.putOriginal(photo.bytes, sha256: photo.sha256, extension: "jpg", linkingFrom: nil) }
        try await onPlainThread { try LibraryStores.checkReachable(store) }
        #expect(try await library.client.get(key: "library/" + path) == photo.bytes)
        try await library.shutdown()

        var missing = configuration
        missing.libraryURL = "s3://\(bucket)-missing/library/"
        let absent = try #require(try LibraryStores.open(missing, environment: environment) as? BucketLibrary)
        let noBucket = await #expect(throws: ObjectStorageError.self) { try await onPlainThread { try LibraryStores.checkReachable(absent) } }
        #expect(noBucket?.status == 404)
        #expect(noBucket?.code == "NoSuchBucket")
        #expect(noBucket?.isTransient == false)
        try await absent.shutdown()

        var wrongSecret = environment
        wrongSecret["AWS_SECRET_ACCESS_KEY"] = String(gateway.secretKey.reversed())
        let refused = try #require(try LibraryStores.open(configuration, environment: wrongSecret) as? BucketLibrary)
        let denied = await #expect(throws: ObjectStorageError.self) { try await onPlainThread { try LibraryStores.checkReachable(refused) } }
        #expect(denied?.status == 403)
        #expect(denied?.isTransient == false)
        try await refused.shutdown()
    }
}
