import Foundation
@testable import ObjectStorage
import Testing

/// S3's XML answers, from samples written as S3 and Ceph's gateway send them.
@Suite("S3 XML answers")
struct XMLTests {
    static let listing = """
        <?xml version="1.0" encoding="UTF-8"?>
        <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
          <Name>photos</Name>
          <Prefix>originals/</Prefix>
          <KeyCount>3</KeyCount>
          <MaxKeys>3</MaxKeys>
          <IsTruncated>true</IsTruncated>
          <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
          <Contents>
            <Key>originals/ab/abcdef.jpg</Key>
            <LastModified>2024-05-01T10:20:30.000Z</LastModified>
            <ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag>
            <Size>3145728</Size>
            <StorageClass>STANDARD</StorageClass>
          </Contents>
          <Contents>
            <Key>originals/cd/R&amp;D &lt;draft&gt; été.heic</Key>
            <LastModified>2024-05-02T00:00:00Z</LastModified>
            <ETag>"d41d8cd98f00b204e9800998ecf8427e-3"</ETag>
            <Size>150000000</Size>
            <Owner><ID>darkroom</ID><DisplayName>darkroom</DisplayName></Owner>
            <StorageClass>STANDARD</StorageClass>
          </Contents>
          <Contents>
            <Key><![CDATA[originals/ef/cdata.png]]></Key>
            <Size>0</Size>
          </Contents>
        </ListBucketResult>
        """

    @Test("ListObjectsV2: keys (entities and CDATA decoded), sizes, ETags unquoted, dates, truncation and token")
    func listPage() throws {
        let page = try S3XML.listPage(Array(Self.listing.utf8))
        #expect(page.objects == [
            ListedObject(key: "originals/ab/abcdef.jpg", size: 3_145_728, etag: "9b2cf535f27731c974343645a3985328",
                         lastModified: Date(timeIntervalSince1970: 1_714_558_830)),
            ListedObject(key: "originals/cd/R&D <draft> été.heic", size: 150_000_000, etag: "d41d8cd98f00b204e9800998ecf8427e-3",
                         lastModified: Date(timeIntervalSince1970: 1_714_608_000)),
            ListedObject(key: "originals/ef/cdata.png", size: 0, etag: "", lastModified: nil),
        ])
        #expect(page.isTruncated)
        #expect(page.nextContinuationToken == "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")
        #expect(page.commonPrefixes.isEmpty)
    }

    @Test("ListObjectsV2: the last page, common prefixes, an empty bucket")
    func lastPageAndPrefixes() throws {
        let last = try S3XML.listPage(Array("""
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>photos</Name><Prefix></Prefix>
            <KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys><Delimiter>/</Delimiter><IsTruncated>false</IsTruncated>
            <Contents><Key>top.jpg</Key><Size>12</Size><ETag>"abc"</ETag></Contents>
            <CommonPrefixes><Prefix>originals/</Prefix></CommonPrefixes><CommonPrefixes><Prefix>variants/</Prefix></CommonPrefixes>
            </ListBucketResult>
            """.utf8))
        #expect(last == ListPage(objects: [ListedObject(key: "top.jpg", size: 12, etag: "abc")],
                                 commonPrefixes: ["originals/", "variants/"], isTruncated: false, nextContinuationToken: nil))
        let empty = try S3XML.listPage(Array("<ListBucketResult><Name>p</Name><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>".utf8))
        #expect(empty == ListPage(objects: [], isTruncated: false, nextContinuationToken: nil))
    }

    @Test("ListObjectsV2: what is not a listing is refused with a reason")
    func malformedListing() {
        #expect(throws: S3XML.Malformed.self) { try S3XML.listPage(Array("not xml at all".utf8)) }
        #expect(throws: S3XML.Malformed.self) { try S3XML.listPage(Array("<ListBucketResult><Contents><Key>a</Key>".utf8)) }
        #expect(throws: S3XML.Malformed.self) { try S3XML.listPage(Array("<Error><Code>AccessDenied</Code></Error>".utf8)) }
        #expect(throws: S3XML.Malformed.self) {
            try S3XML.listPage(Array("<ListBucketResult><Contents><Key>a</Key><Size>big</Size></Contents></ListBucketResult>".utf8))
        }
        #expect(throws: S3XML.Malformed.self) {
            try S3XML.listPage(Array("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>".utf8))
        }
    }

    @Test("error bodies: Code, Message and RequestId, and nothing of the signature's details")
    func errorBodies() {
        #expect(S3XML.errorBody(Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <Error><Code>NoSuchKey</Code><Message>The resource you requested does not exist</Message>
            <Resource>/photos/originals/x.jpg</Resource><RequestId>4442587FB7D0A2F9</RequestId></Error>
            """.utf8)) == S3XML.ErrorBody(code: "NoSuchKey", message: "The resource you requested does not exist", requestId: "4442587FB7D0A2F9"))
        let mismatch = S3XML.errorBody(Array("""
            <Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match the signature you provided.</Message>
            <AWSAccessKeyId>AKIAIOSFODNN7EXAMPLE</AWSAccessKeyId><StringToSign>AWS4-HMAC-SHA256
            20130524T000000Z</StringToSign><SignatureProvided>f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41</SignatureProvided>
            <CanonicalRequest>GET /test.txt</CanonicalRequest><RequestId>TX1</RequestId><HostId>h</HostId></Error>
            """.utf8))
        #expect(mismatch == S3XML.ErrorBody(code: "SignatureDoesNotMatch",
                                            message: "The request signature we calculated does not match the signature you provided.",
                                            requestId: "TX1"))
        // Ceph's gateway: the same document, a BucketName and HostId besides.
        #expect(S3XML.errorBody(Array("<Error><Code>SlowDown</Code><BucketName>photos</BucketName><RequestId>tx0000</RequestId><HostId>1-default</HostId></Error>".utf8))
            == S3XML.ErrorBody(code: "SlowDown", message: nil, requestId: "tx0000"))
        #expect(S3XML.errorBody([]) == nil)
        #expect(S3XML.errorBody(Array("<html><body>502 Bad Gateway</body></html>".utf8)) == nil)
        #expect(S3XML.errorBody(Array("Service Unavailable".utf8)) == nil)
    }

    @Test("multipart: the UploadId, the completion (and an Error inside a 200), the parts list")
    func multipart() throws {
        #expect(try S3XML.uploadId(Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
            <Bucket>photos</Bucket><Key>big.tif</Key><UploadId>VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA</UploadId>
            </InitiateMultipartUploadResult>
            """.utf8)) == "VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA")
        #expect(throws: S3XML.Malformed.self) { try S3XML.uploadId(Array("<InitiateMultipartUploadResult><UploadId></UploadId></InitiateMultipartUploadResult>".utf8)) }
        #expect(try S3XML.completion(Array("""
            <CompleteMultipartUploadResult><Location>http://h/photos/big.tif</Location><Bucket>photos</Bucket><Key>big.tif</Key>
            <ETag>"3858f62230ac3c915f300c664312c11f-9"</ETag></CompleteMultipartUploadResult>
            """.utf8)) == .success("3858f62230ac3c915f300c664312c11f-9"))
        #expect(try S3XML.completion(Array("<Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message></Error>".utf8))
            == .failure(S3XML.ErrorBody(code: "InternalError", message: "We encountered an internal error. Please try again.", requestId: nil)))
        #expect(S3XML.completeMultipartBody(parts: [(1, "a54357aff0632cce46d942af68356b38"), (2, "0c78aef83f66abc1fa1e8477f296d394")])
            == "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            + "<Part><PartNumber>1</PartNumber><ETag>\"a54357aff0632cce46d942af68356b38\"</ETag></Part>"
            + "<Part><PartNumber>2</PartNumber><ETag>\"0c78aef83f66abc1fa1e8477f296d394\"</ETag></Part></CompleteMultipartUpload>")
        #expect(S3XML.escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&apos;")
    }

    @Test("unfinished multipart uploads: keys, ids and start times, and the markers of the next page")
    func unfinishedUploads() throws {
        let page = try S3XML.unfinishedUploads(Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
            <Bucket>photos</Bucket><KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker>
            <NextKeyMarker>lib/originals/b.jpg</NextKeyMarker><NextUploadIdMarker>2~b</NextUploadIdMarker><MaxUploads>2</MaxUploads>
            <IsTruncated>true</IsTruncated>
            <Upload><Key>lib/originals/a&amp;.jpg</Key><UploadId>2~a</UploadId><Initiated>2026-11-27T06:00:00.000Z</Initiated></Upload>
            <Upload><Key>lib/originals/b.jpg</Key><UploadId>2~b</UploadId></Upload>
            </ListMultipartUploadsResult>
            """.utf8))
        #expect(page.uploads == [UnfinishedUpload(key: "lib/originals/a&.jpg", uploadId: "2~a", initiated: Date(timeIntervalSince1970: 1_795_759_200)),
                                 UnfinishedUpload(key: "lib/originals/b.jpg", uploadId: "2~b", initiated: nil)])
        #expect(page.next?.key == "lib/originals/b.jpg" && page.next?.uploadId == "2~b")
        let last = try S3XML.unfinishedUploads(Array("<ListMultipartUploadsResult><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>".utf8))
        #expect(last.uploads.isEmpty && last.next == nil)
        #expect(throws: S3XML.Malformed.self) {
            try S3XML.unfinishedUploads(Array("<ListMultipartUploadsResult><IsTruncated>true</IsTruncated></ListMultipartUploadsResult>".utf8))
        }
        #expect(throws: S3XML.Malformed.self) { try S3XML.unfinishedUploads(Array("<ListBucketResult></ListBucketResult>".utf8)) }
    }

    @Test("an external entity is not resolved")
    func noExternalEntities() throws {
        let secret = FileManager.default.temporaryDirectory.appendingPathComponent("objectstorage-xxe-\(UUID().uuidString)")
        try Data("LEAKED".utf8).write(to: secret)
        defer { try? FileManager.default.removeItem(at: secret) }
        let document = """
            <?xml version="1.0"?><!DOCTYPE Error [<!ENTITY x SYSTEM "file://\(secret.path)">]>
            <Error><Code>NoSuchKey</Code><Message>&x;</Message></Error>
            """
        let body = S3XML.errorBody(Array(document.utf8))
        #expect(body?.message?.contains("LEAKED") != true)
    }
}
