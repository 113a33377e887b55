import Foundation
@testable import ObjectStorage
import Testing

/// The canonical forms of paths, queries, header values and dates, on the edge cases S3 keys
/// and listings meet.
@Suite("SigV4: canonical encoding")
struct EncodingTests {
    @Test("path segments: unreserved characters kept, '/' kept, every other byte %XX in uppercase")
    func canonicalURI() {
        #expect(SigV4Encoding.canonicalURI("/") == "/")
        #expect(SigV4Encoding.canonicalURI("") == "/")
        #expect(SigV4Encoding.canonicalURI("/bucket/originals/ab/cdef.jpg") == "/bucket/originals/ab/cdef.jpg")
        #expect(SigV4Encoding.canonicalURI("/b/a b+c") == "/b/a%20b%2Bc")
        #expect(SigV4Encoding.canonicalURI("/b/~user/-._") == "/b/~user/-._")
        #expect(SigV4Encoding.canonicalURI("/b/100%.jpg") == "/b/100%25.jpg")
        #expect(SigV4Encoding.canonicalURI("/b/a?b#c&d=e") == "/b/a%3Fb%23c%26d%3De")
        #expect(SigV4Encoding.canonicalURI("/b/été.jpg") == "/b/%C3%A9t%C3%A9.jpg")
        #expect(SigV4Encoding.canonicalURI("/b/😀") == "/b/%F0%9F%98%80")
        #expect(SigV4Encoding.canonicalURI("/b/!'()*,;:@$") == "/b/%21%27%28%29%2A%2C%3B%3A%40%24")
        // A key is a name: no double slash collapsed, no dot segment resolved.
        #expect(SigV4Encoding.canonicalURI("/b//x/./y/../z") == "/b//x/./y/../z")
        // The hex is uppercase.
        #expect(SigV4Encoding.canonicalURI("/\u{7F}\u{0A}") == "/%7F%0A")
    }

    @Test("query: '/' and '=' encoded too, sorted by name then value in byte order")
    func canonicalQuery() {
        typealias F = SigV4Signer.Field
        #expect(SigV4Encoding.canonicalQuery([]) == "")
        #expect(SigV4Encoding.canonicalQuery([F("prefix", "originals/2024/"), F("list-type", "2")])
            == "list-type=2&prefix=originals%2F2024%2F")
        #expect(SigV4Encoding.canonicalQuery([F("uploads", "")]) == "uploads=")
        #expect(SigV4Encoding.canonicalQuery([F("k", "a b+c=d&e")]) == "k=a%20b%2Bc%3Dd%26e")
        // Uppercase sorts before lowercase (byte order), and a shorter name before a longer one.
        #expect(SigV4Encoding.canonicalQuery([F("b", "1"), F("B", "2"), F("a", "3"), F("aa", "4")]) == "B=2&a=3&aa=4&b=1")
        // Sorted on the encoded form: "%2F" (0x25) sorts before "-" (0x2D).
        #expect(SigV4Encoding.canonicalQuery([F("x", "-"), F("x", "/")]) == "x=%2F&x=-")
        // A continuation token (opaque, base64 with '+', '/', '=') survives intact.
        #expect(SigV4Encoding.canonicalQuery([F("continuation-token", "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")])
            == "continuation-token=1ueGcxLPRx1Tr%2FXYExHnhbYLgveDs2J%2Fwm36Hy4vbOwM%3D")
    }

    @Test("header values: trimmed, inner runs of spaces made one; names lowercased and sorted; repeats joined")
    func canonicalHeaders() {
        #expect(SigV4Encoding.canonicalHeaderValue("  a   b \t c  ") == "a b c")
        #expect(SigV4Encoding.canonicalHeaderValue("\"a   b\"") == "\"a b\"")
        #expect(SigV4Encoding.canonicalHeaderValue("") == "")
        let (block, signed) = SigV4Signer.canonicalHeaders([
            .init("X-Amz-Meta-B", "2"), .init("Host", "h"), .init("x-amz-meta-a", " 1 "), .init("X-AMZ-META-B", "3"),
            .init("Authorization", "never signed"),
        ])
        #expect(block == "host:h\nx-amz-meta-a:1\nx-amz-meta-b:2,3\n")
        #expect(signed == "host;x-amz-meta-a;x-amz-meta-b")
    }

    @Test("timestamps: ISO 8601 basic in UTC, and the scope's date")
    func timestamps() {
        #expect(SigV4Encoding.timestamps(Date(timeIntervalSince1970: 1_440_938_160)) == ("20150830T123600Z", "20150830"))
        #expect(SigV4Encoding.timestamps(Date(timeIntervalSince1970: 0)) == ("19700101T000000Z", "19700101"))
        // Fractions are dropped, not rounded up into the next second.
        #expect(SigV4Encoding.timestamps(Date(timeIntervalSince1970: 951_868_799.999)) == ("20000229T235959Z", "20000229"))
        #expect(SigV4Encoding.timestamps(Date(timeIntervalSince1970: 4_102_444_800)) == ("21000101T000000Z", "21000101"))
        // Every day of four years round-trips through the civil calendar.
        for day in stride(from: Int64(-800), to: 800, by: 1) {
            let seconds = 1_577_836_800 + day * 86_400 + 3_723
            let (y, m, d, hh, mm, ss) = UTCCalendar.components(seconds)
            #expect(UTCCalendar.seconds(year: y, month: m, day: d, hour: hh, minute: mm, second: ss) == seconds)
        }
    }

    @Test("S3's dates: Last-Modified (HTTP date) and LastModified (ISO 8601) are read")
    func dates() {
        #expect(UTCCalendar.parseHTTPDate("Wed, 12 Oct 2009 17:50:00 GMT") == Date(timeIntervalSince1970: 1_255_369_800))
        #expect(UTCCalendar.parseHTTPDate("Fri, 24 May 2013 00:00:00 GMT") == Date(timeIntervalSince1970: 1_369_353_600))
        #expect(UTCCalendar.parseHTTPDate("Wed, 12 Foo 2009 17:50:00 GMT") == nil)
        #expect(UTCCalendar.parseHTTPDate("2009-10-12T17:50:30Z") == nil)
        #expect(UTCCalendar.parseISO8601("2009-10-12T17:50:30.000Z") == Date(timeIntervalSince1970: 1_255_369_830))
        #expect(UTCCalendar.parseISO8601("2009-10-12T17:50:30Z") == Date(timeIntervalSince1970: 1_255_369_830))
        #expect(UTCCalendar.parseISO8601("2009-10-12T17:50:30.500Z") == Date(timeIntervalSince1970: 1_255_369_830.5))
        #expect(UTCCalendar.parseISO8601("2009-10-12 17:50:30Z") == nil)
        #expect(UTCCalendar.parseISO8601("2009-13-12T17:50:30Z") == nil)
    }

    @Test("credentials: fromEnvironment reads the AWS variables and names only what is missing")
    func credentialsFromEnvironment() throws {
        let full = try S3Credentials.fromEnvironment([
            "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret-value", "AWS_SESSION_TOKEN": "token-value",
        ])
        #expect(full == S3Credentials(accessKey: "AKIDEXAMPLE", secretKey: "secret-value", sessionToken: "token-value"))
        #expect(!full.description.contains("secret-value") && !full.description.contains("token-value"))
        var dumped = ""
        dump(full, to: &dumped)
        #expect(!dumped.contains("secret-value") && !dumped.contains("token-value"))
        #expect(try S3Credentials.fromEnvironment(["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b", "AWS_SESSION_TOKEN": ""]).sessionToken == nil)
        #expect(throws: ObjectStorageError.configuration(reason: "no S3 credentials: AWS_SECRET_ACCESS_KEY not set in the environment")) {
            try S3Credentials.fromEnvironment(["AWS_ACCESS_KEY_ID": "a"])
        }
        let error = #expect(throws: ObjectStorageError.self) { try S3Credentials.fromEnvironment([:]) }
        #expect(error?.category == .configuration)
    }

    @Test("configuration: the endpoint, region and addressing from the environment, and what is refused")
    func configuration() throws {
        let environment = ["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"]
        let aws = try S3Configuration.fromEnvironment(bucket: "photos", environment.merging(["AWS_REGION": "eu-west-3"]) { $1 })
        #expect(aws.endpoint == "https://s3.eu-west-3.amazonaws.com" && aws.region == "eu-west-3" && aws.addressing == .virtualHosted)
        let local = try S3Configuration.fromEnvironment(bucket: "photos", environment.merging(["AWS_ENDPOINT_URL": "http://127.0.0.1:7480"]) { $1 })
        #expect(local.endpoint == "http://127.0.0.1:7480" && local.region == "us-east-1" && local.addressing == .pathStyle)
        #expect(try local.validated() == .init(scheme: "http", host: "127.0.0.1", port: 7480))
        var https = local
        https.endpoint = "HTTPS://S3.Example.com:443/"
        #expect(try https.validated() == .init(scheme: "https", host: "s3.example.com", port: nil))
        https.endpoint = "http://[::1]:9000"
        #expect(try https.validated().authority == "[::1]:9000")

        func refused(_ change: (inout S3Configuration) -> Void) -> String? {
            var configuration = local
            change(&configuration)
            do {
                _ = try configuration.validated()
                return nil
            } catch {
                return error.description
            }
        }
        #expect(refused { $0.endpoint = "ftp://host" }?.contains("http:// or https://") == true)
        #expect(refused { $0.endpoint = "http://user:hunter2@host" }.map { !$0.contains("hunter2") } == true)
        #expect(refused { $0.endpoint = "http://host/prefix" }?.contains("no path") == true)
        #expect(refused { $0.bucket = "" } != nil)
        #expect(refused { $0.addressing = .virtualHosted; $0.bucket = "Upper_Case" }?.contains("path-style") == true)
        #expect(refused { $0.partSize = 1 << 20 }?.contains("5 MiB") == true)
        #expect(refused { $0.multipartThreshold = 8 << 20 }?.contains("threshold") == true)
        #expect(refused { $0.readTimeoutSeconds = 0 } != nil)
        #expect(refused { _ in } == nil)
    }
}
