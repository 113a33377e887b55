import AsyncHTTPClient
import Failures
import Foundation
import NIOCore
@testable import ObjectStorage
import Testing

/// What an object storage error says and whether it is worth trying again.
@Suite("Object storage errors")
struct ErrorTests {
    static let context = ObjectStorageError.Context(operation: .putObject, bucket: "photos", key: "originals/ab/cd.jpg")

    static func server(_ status: Int, _ code: String?) -> ObjectStorageError {
        .server(context, status: status, code: code, message: nil, requestId: nil)
    }

    @Test("transient: 500, 502, 503, 504, 429, SlowDown, RequestTimeout, InternalError; not: 403, 404, BadDigest, InvalidDigest")
    func transience() {
        for (status, code) in [(500, nil), (502, nil), (503, nil), (504, nil), (429, nil), (503, "SlowDown"), (400, "RequestTimeout"),
                               (500, "InternalError"), (200, "InternalError"), (503, "ServiceUnavailable")] as [(Int, String?)] {
            #expect(Self.server(status, code).isTransient, "\(status) \(code ?? "-")")
        }
        for (status, code) in [(403, nil), (403, "AccessDenied"), (403, "SignatureDoesNotMatch"), (404, "NoSuchKey"), (404, nil),
                               (400, "BadDigest"), (400, "InvalidDigest"), (400, nil), (416, "InvalidRange"), (301, "PermanentRedirect"),
                               (500, "BadDigest")] as [(Int, String?)] {
            #expect(!Self.server(status, code).isTransient, "\(status) \(code ?? "-")")
        }
        #expect(ObjectStorageError.transport(Self.context, reason: "refused", transient: true).isTransient)
        #expect(!ObjectStorageError.badResponse(Self.context, reason: "x").isTransient)
        #expect(!ObjectStorageError.cancelled(Self.context).isTransient)
    }

    @Test("the HTTP client's failures: timeouts and broken connections are transient, cancellation is not an error of the store")
    func transportMapping() {
        let transient: [any Error] = [HTTPClientError.connectTimeout, HTTPClientError.readTimeout, HTTPClientError.remoteConnectionClosed,
                                      HTTPClientError.deadlineExceeded, IOError(errnoCode: ECONNRESET, reason: "read"), ChannelError.ioOnClosedChannel]
        for error in transient {
            #expect(ObjectStorageError.fromTransport(error, context: Self.context).isTransient, "\(error)")
        }
        #expect(ObjectStorageError.fromTransport(HTTPClientError.cancelled, context: Self.context) == .cancelled(Self.context))
        #expect(ObjectStorageError.fromTransport(CancellationError(), context: Self.context) == .cancelled(Self.context))
        #expect(!ObjectStorageError.fromTransport(HTTPClientError.invalidURL, context: Self.context).isTransient)
        let own = ObjectStorageError.badResponse(Self.context, reason: "x")
        #expect(ObjectStorageError.fromTransport(own, context: Self.context) == own)
    }

    @Test("one line naming the operation, bucket, key, status, code and transience")
    func description() {
        var context = Self.context
        context.attempts = 4
        let error = ObjectStorageError.server(context, status: 503, code: "SlowDown", message: "Please reduce your\nrequest rate.", requestId: "TX9")
        #expect(error.description == "S3 PutObject s3://photos/originals/ab/cd.jpg: HTTP 503 SlowDown: Please reduce your request rate. (request id TX9) [transient after 4 attempts]")
        #expect(Self.server(404, "NoSuchKey").description == "S3 PutObject s3://photos/originals/ab/cd.jpg: HTTP 404 NoSuchKey [permanent]")
        #expect(ObjectStorageError.transport(Self.context, reason: "connect timeout", transient: true).description
            == "S3 PutObject s3://photos/originals/ab/cd.jpg: no answer from the server: connect timeout [transient]")
        let list = ObjectStorageError.Context(operation: .listObjects, bucket: "photos", key: nil)
        #expect(ObjectStorageError.badResponse(list, reason: "not XML").description == "S3 ListObjectsV2 s3://photos/: unreadable answer: not XML [permanent]")
        let long = ObjectStorageError.server(Self.context, status: 400, code: "X", message: String(repeating: "m", count: 5000), requestId: nil)
        #expect(long.description.count < 400 && !long.description.contains("\n"))
    }

    @Test("category: storage, and configuration for a client that cannot be set up")
    func category() {
        #expect(Self.server(500, nil).category == .storage)
        #expect(FailureCategory(of: Self.server(404, "NoSuchKey")) == .storage)
        #expect(ObjectStorageError.localFile(Self.context, path: "/x", reason: "gone").category == .storage)
        #expect(ObjectStorageError.configuration(reason: "x").category == .configuration)
        #expect(Self.server(404, "NoSuchKey").isNotFound && Self.server(404, "NoSuchKey").code == "NoSuchKey" && Self.server(404, nil).status == 404)
    }
}
