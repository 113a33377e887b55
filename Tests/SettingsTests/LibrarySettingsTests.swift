import Foundation
import Testing
@testable import Settings

/// `library.url` and its bucket: the address, the service, and credentials that only the
/// environment gives.
@Suite("pipeline.json: the library in a bucket")
struct LibrarySettingsTests: ConfigurationParsing {

    @Test func aBucketAddressIsReadWithItsPrefix() throws {
        let configuration = try parse(#"{"library": {"url": "s3://photos-eu/darkroom/prod", "s3": {"endpoint": "http://127.0.0.1:7480", "region": "eu-west-1"}}}"#)
        let address = try #require(configuration.libraryURL.flatMap(BucketAddress.init))
        #expect(address.bucket == "photos-eu" && address.prefix == "darkroom/prod/")
        #expect(BucketAddress("s3://photos")?.prefix == "")
        #expect(configuration.libraryS3.effectiveEndpoint(environment: [:]) == "http://127.0.0.1:7480")
        #expect(configuration.libraryS3.effectiveRegion(environment: ["AWS_REGION": "us-west-2"]) == "eu-west-1", "the file wins")
        #expect(configuration.libraryS3.effectivePathStyle(environment: [:]), "an endpoint of its own: path-style")
        #expect(Configuration.defaults.libraryS3.effectivePathStyle(environment: [:]) == false, "AWS: virtual-hosted")
        #expect(Configuration.defaults.libraryS3.effectiveEndpoint(environment: ["AWS_ENDPOINT_URL": "http://minio:9000"]) == "http://minio:9000")
        #expect(Configuration.defaults.libraryS3.effectiveRegion(environment: [:]) == "us-east-1")
    }

    @Test(arguments: [
        (#"{"library": {"url": "photos"}}"#, "library.url"),
        (#"{"library": {"url": "s3://Upper/x"}}"#, "library.url"),
        (#"{"library": {"url": "s3://ab"}}"#, "library.url"),
        (#"{"library": {"s3": {"endpoint": "127.0.0.1:7480"}}}"#, "library.s3.endpoint"),
        (#"{"library": {"public_url": "cdn.example.com"}}"#, "library.public_url"),
        (#"{"library": {"presign_seconds": 700000}}"#, "library.presign_seconds"),
        (#"{"library": {"s3": {"secret_access_key": "x"}}}"#, "library.s3.secret_access_key"),
        (#"{"library": {"access_key_id": "x"}}"#, "library.access_key_id"),
    ])
    func aBadBucketSettingIsRefusedNamingItsKey(json: String, key: String) {
        let said = problem(json)
        #expect(said?.contains(key) == true, "\(said ?? "accepted")")
    }

    @Test func credentialsInTheFileAreRefusedWithWhereTheyBelong() {
        let said = problem(#"{"library": {"s3": {"access_key_id": "AKIA", "secret_access_key": "shh"}}}"#) ?? ""
        #expect(said.contains("AWS_ACCESS_KEY_ID") && said.contains("environment"))
        #expect(!said.contains("shh"))
    }

    @Test func configShowMasksTheCredentialsTheEnvironmentGives() {
        let environment = ["AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "very-secret", "AWS_REGION": "eu-central-1"]
        let settings = ConfigurationCheck.settings(of: .defaults, file: [:], environment: environment)
        let byKey = Dictionary(settings.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byKey["AWS_ACCESS_KEY_ID"]?.value == "\"********\"" && byKey["AWS_ACCESS_KEY_ID"]?.source == .environment)
        #expect(byKey["AWS_SECRET_ACCESS_KEY"]?.value == "\"********\"")
        #expect(byKey["AWS_SESSION_TOKEN"]?.value == "null")
        #expect(byKey["AWS_REGION"]?.value == "\"eu-central-1\"")
        #expect(!settings.contains { $0.value.contains("very-secret") || $0.value.contains("AKIAEXAMPLE") })
        #expect(byKey["library.url"]?.value == "null")
    }
}
