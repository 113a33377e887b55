import Foundation
@testable import ObjectStorage
import Testing

/// The worked examples of AWS's S3 API reference, "Signature Calculations for the Authorization
/// Header: Transferring Payload in a Single Chunk" (sig-v4-header-based-auth: GET Object with a
/// range, PUT Object, GET Bucket lifecycle, GET Bucket list objects) and "Authenticating Requests:
/// Using Query Parameters" (sigv4-query-string-auth: a presigned GET of /test.txt): the canonical
/// requests, string-to-sign hashes and signatures the documentation prints, for bucket
/// `examplebucket`, key AKIAIOSFODNN7EXAMPLE, 2013-05-24T00:00:00Z, region us-east-1.
@Suite("SigV4: the S3 documentation's examples")
struct S3SigningExampleTests {
    static let credentials = S3Credentials(accessKey: "AKIAIOSFODNN7EXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    static let signer = SigV4Signer(credentials: credentials, region: "us-east-1")
    /// 20130524T000000Z.
    static let date = Date(timeIntervalSince1970: 1_369_353_600)
    static let host = SigV4Signer.Field("Host", "examplebucket.s3.amazonaws.com")
    static let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    static func authorization(_ signedHeaders: String, _ signature: String) -> String {
        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=\(signedHeaders), Signature=\(signature)"
    }

    @Test("GET Object with Range")
    func getObject() {
        let request = SigV4Signer.Request(method: "GET", path: "/test.txt", headers: [Self.host, .init("Range", "bytes=0-9")])
        let signed = Self.signer.sign(request, payload: .empty, date: Self.date)
        let signature = Self.signer.signature(for: signed, payload: .empty, date: Self.date)
        #expect(signature.canonicalRequest == """
            GET
            /test.txt

            host:examplebucket.s3.amazonaws.com
            range:bytes=0-9
            x-amz-content-sha256:\(Self.emptyHash)
            x-amz-date:20130524T000000Z

            host;range;x-amz-content-sha256;x-amz-date
            \(Self.emptyHash)
            """)
        #expect(signature.stringToSign == """
            AWS4-HMAC-SHA256
            20130524T000000Z
            20130524/us-east-1/s3/aws4_request
            7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972
            """)
        #expect(signed.header("x-amz-content-sha256") == Self.emptyHash)
        #expect(signed.header("Authorization") == Self.authorization(
            "host;range;x-amz-content-sha256;x-amz-date", "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"))
    }

    @Test("PUT Object: the payload's SHA-256 signed, a `$` in the key encoded")
    func putObject() {
        let body = Array("Welcome to Amazon S3.".utf8)
        let payload = SigV4Signer.Payload.hashing(body)
        #expect(payload == .sha256("44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"))
        let request = SigV4Signer.Request(method: "PUT", path: "/test$file.text", headers: [
            Self.host, .init("Date", "Fri, 24 May 2013 00:00:00 GMT"), .init("x-amz-storage-class", "REDUCED_REDUNDANCY"),
        ])
        let signed = Self.signer.sign(request, payload: payload, date: Self.date)
        let signature = Self.signer.signature(for: signed, payload: payload, date: Self.date)
        #expect(signature.canonicalRequest == """
            PUT
            /test%24file.text

            date:Fri, 24 May 2013 00:00:00 GMT
            host:examplebucket.s3.amazonaws.com
            x-amz-content-sha256:44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072
            x-amz-date:20130524T000000Z
            x-amz-storage-class:REDUCED_REDUNDANCY

            date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class
            44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072
            """)
        #expect(signature.stringToSign.hasSuffix("\n9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d"))
        #expect(signed.header("Authorization") == Self.authorization(
            "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
            "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"))
    }

    @Test("GET Bucket lifecycle: a parameter without a value is `lifecycle=`")
    func getLifecycle() {
        let request = SigV4Signer.Request(method: "GET", path: "/", query: [.init("lifecycle", "")], headers: [Self.host])
        let signed = Self.signer.sign(request, payload: .empty, date: Self.date)
        let signature = Self.signer.signature(for: signed, payload: .empty, date: Self.date)
        #expect(signature.canonicalRequest == """
            GET
            /
            lifecycle=
            host:examplebucket.s3.amazonaws.com
            x-amz-content-sha256:\(Self.emptyHash)
            x-amz-date:20130524T000000Z

            host;x-amz-content-sha256;x-amz-date
            \(Self.emptyHash)
            """)
        #expect(signature.stringToSign.hasSuffix("\n9766c798316ff2757b517bc739a67f6213b4ab36dd5da2f94eaebf79c77395ca"))
        #expect(signed.header("Authorization") == Self.authorization(
            "host;x-amz-content-sha256;x-amz-date", "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"))
    }

    @Test("GET Bucket (list objects): the query sorted")
    func listObjects() {
        let request = SigV4Signer.Request(method: "GET", path: "/", query: [.init("prefix", "J"), .init("max-keys", "2")], headers: [Self.host])
        let signed = Self.signer.sign(request, payload: .empty, date: Self.date)
        let signature = Self.signer.signature(for: signed, payload: .empty, date: Self.date)
        #expect(signature.canonicalRequest.split(separator: "\n", omittingEmptySubsequences: false)[2] == "max-keys=2&prefix=J")
        #expect(signature.stringToSign.hasSuffix("\ndf57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7"))
        #expect(signed.header("Authorization") == Self.authorization(
            "host;x-amz-content-sha256;x-amz-date", "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"))
    }

    static let presignedExample = "https://examplebucket.s3.amazonaws.com/test.txt"
        + "?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        + "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
        + "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
        + "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"

    @Test("the presigned GET of /test.txt for 86,400 s")
    func presignedGet() {
        let request = SigV4Signer.Request(method: "GET", path: "/test.txt", headers: [.init("host", "examplebucket.s3.amazonaws.com")])
        let (query, signature) = Self.signer.presignedQuery(request, expires: 86_400, date: Self.date)
        #expect(signature.canonicalRequest == """
            GET
            /test.txt
            X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host
            host:examplebucket.s3.amazonaws.com

            host
            UNSIGNED-PAYLOAD
            """)
        #expect(signature.stringToSign == """
            AWS4-HMAC-SHA256
            20130524T000000Z
            20130524/us-east-1/s3/aws4_request
            3bfa292879f6447bbcda7001decf97f4a54dc650c8942174ae0a9121cf58ad04
            """)
        #expect("https://examplebucket.s3.amazonaws.com/test.txt?" + query == Self.presignedExample)
    }

    @Test("the client's presigned URL is the documentation's, virtual-hosted on s3.amazonaws.com")
    func clientPresignedURL() async throws {
        let configuration = S3Configuration(
            endpoint: "https://s3.amazonaws.com", region: "us-east-1", bucket: "examplebucket", addressing: .virtualHosted,
            credentials: Self.credentials)
        try await withClient(configuration) { client in
            let url = try client.presignedURL(key: "test.txt", expires: 86_400, date: Self.date)
            #expect(url == Self.presignedExample)
        }
        // Path-style, on another endpoint: the bucket moves into the path, the host is the endpoint's.
        var pathStyle = configuration
        pathStyle.addressing = .pathStyle
        pathStyle.endpoint = "http://127.0.0.1:7480"
        try await withClient(pathStyle) { client in
            let url = try client.presignedURL(method: "put", key: "a b/c.jpg", expires: 60, headers: ["Content-Type": "image/jpeg"], date: Self.date)
            #expect(url.hasPrefix("http://127.0.0.1:7480/examplebucket/a%20b/c.jpg?X-Amz-Algorithm=AWS4-HMAC-SHA256&"))
            #expect(url.contains("&X-Amz-Expires=60&X-Amz-SignedHeaders=content-type%3Bhost&X-Amz-Signature="))
            let request = SigV4Signer.Request(method: "PUT", path: "/examplebucket/a b/c.jpg",
                                              headers: [.init("host", "127.0.0.1:7480"), .init("Content-Type", "image/jpeg")])
            let (query, _) = Self.signer.presignedQuery(request, expires: 60, date: Self.date)
            #expect(url == "http://127.0.0.1:7480/examplebucket/a%20b/c.jpg?" + query)
        }
    }
}
