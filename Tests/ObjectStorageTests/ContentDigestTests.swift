import Crypto
import Foundation
@testable import ObjectStorage
import Testing

/// Whether an object already stored holds the bytes about to be written: the decision behind
/// `putIfAbsent` and `putFile(skipIfPresent:)`.
@Suite("Content digests and the put-if-absent decision")
struct ContentDigestTests {
    static let bytes = Array("Welcome to Amazon S3.".utf8)

    @Test("MD5, Content-MD5 and the single-part ETag")
    func md5() {
        #expect(SigV4Encoding.hex(ContentDigest.md5([UInt8]())) == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(ContentDigest.contentMD5(ContentDigest.md5([UInt8]())) == "1B2M2Y8AsgTpgAmY7PhCfg==")
        #expect(ContentDigest.singlePartETag(md5: ContentDigest.md5(Array("hello".utf8))) == "5d41402abc4b2a76b9719d911017c592")
    }

    @Test("the multipart ETag: MD5 of the parts' MD5s, a dash, the count")
    func multipartETag() {
        let parts = [[UInt8](repeating: 1, count: 10), [UInt8](repeating: 2, count: 4)].map { ContentDigest.md5($0) }
        let expected = SigV4Encoding.hex(Insecure.MD5.hash(data: parts[0] + parts[1])) + "-2"
        #expect(ContentDigest.multipartETag(partMD5s: parts) == expected)
    }

    @Test("ETags as servers write them are compared unquoted and lowercased")
    func normalizedETag() {
        #expect(ContentDigest.normalizedETag("\"9B2CF535F27731C974343645A3985328\"") == "9b2cf535f27731c974343645a3985328")
        #expect(ContentDigest.normalizedETag("W/\"abc\"") == "abc")
        #expect(ContentDigest.normalizedETag("abc-2") == "abc-2")
        #expect(ContentDigest.normalizedETag("\"") == "\"")
    }

    @Test("same size and the ETag of these bytes: already there; any difference: write")
    func decision() {
        let md5 = ContentDigest.md5(Self.bytes)
        let etag = "\"" + SigV4Encoding.hex(md5) + "\""
        #expect(ContentDigest.isSameObject(ObjectInfo(size: 21, etag: etag), size: 21, md5: md5))
        #expect(ContentDigest.isSameObject(ObjectInfo(size: 21, etag: etag.uppercased()), size: 21, md5: md5))
        // Another size, another checksum, an ETag that is no MD5 (KMS): written again.
        #expect(!ContentDigest.isSameObject(ObjectInfo(size: 22, etag: etag), size: 21, md5: md5))
        #expect(!ContentDigest.isSameObject(ObjectInfo(size: 21, etag: "\"d41d8cd98f00b204e9800998ecf8427e\""), size: 21, md5: md5))
        #expect(!ContentDigest.isSameObject(ObjectInfo(size: 21, etag: ""), size: 21, md5: md5))
        // A multipart ETag: compared only with the multipart ETag of the same parts.
        let parts = [ContentDigest.md5(Array(Self.bytes[0..<10])), ContentDigest.md5(Array(Self.bytes[10...]))]
        let multipart = ObjectInfo(size: 21, etag: "\"\(ContentDigest.multipartETag(partMD5s: parts))\"")
        #expect(!ContentDigest.isSameObject(multipart, size: 21, md5: md5))
        #expect(ContentDigest.isSameObject(multipart, size: 21, md5: md5, partMD5s: parts))
        #expect(!ContentDigest.isSameObject(multipart, size: 21, md5: md5, partMD5s: [parts[1], parts[0]]))
        #expect(!ContentDigest.isSameObject(multipart, size: 21, md5: md5, partMD5s: [md5]))
    }
}
