import AsyncHTTPClient
import Failures
import Foundation
import NIOCore
import NIOPosix

/// The S3 operations the client performs, named as in S3's API (`PutObject`...): the
/// `operation` of errors and the keys of the statistics.
public enum S3Operation: String, Sendable, CaseIterable, Codable, Comparable {
    case putObject = "PutObject"
    case getObject = "GetObject"
    case headObject = "HeadObject"
    case deleteObject = "DeleteObject"
    case copyObject = "CopyObject"
    case listObjects = "ListObjectsV2"
    case createMultipartUpload = "CreateMultipartUpload"
    case uploadPart = "UploadPart"
    case completeMultipartUpload = "CompleteMultipartUpload"
    case abortMultipartUpload = "AbortMultipartUpload"
    case listMultipartUploads = "ListMultipartUploads"
    case presign = "Presign"

    public static func < (lhs: S3Operation, rhs: S3Operation) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Why an object storage operation failed. Its description is one line naming the operation, the
/// bucket and key, the HTTP status and S3's error `Code` where there was an answer, and whether
/// the failure is transient; it never includes credentials, signatures or a signed URL.
public enum ObjectStorageError: Error, TransientAwareError, CustomStringConvertible, Sendable, Equatable {
    /// Which request failed, and after how many attempts.
    public struct Context: Sendable, Equatable {
        public var operation: S3Operation
        public var bucket: String
        /// The object's key; nil for bucket-level operations (a listing).
        public var key: String?
        /// How many times the request was sent (1 when it was not retried).
        public var attempts: Int

        public init(operation: S3Operation, bucket: String, key: String?, attempts: Int = 1) {
            self.operation = operation
            self.bucket = bucket
            self.key = key
            self.attempts = attempts
        }

        /// `PutObject s3://bucket/key`.
        var label: String { "\(operation.rawValue) s3://\(bucket)/\(key ?? "")" }
    }

    /// The server answered with an error: its HTTP status and, from the XML body, S3's error
    /// `Code` (`NoSuchKey`, `SignatureDoesNotMatch`, `SlowDown`...), `Message` and `RequestId`.
    case server(Context, status: Int, code: String?, message: String?, requestId: String?)
    /// No usable answer: the connection could not be made, broke, or timed out. `transient`
    /// says whether trying again may succeed (refused, reset, timeouts: yes; a TLS certificate
    /// that does not match: no).
    case transport(Context, reason: String, transient: Bool)
    /// An answer that cannot be understood (XML that does not parse, a missing `UploadId`).
    case badResponse(Context, reason: String)
    /// The task was cancelled before the operation finished.
    case cancelled(Context)
    /// The request cannot be made as asked (an empty key, a range or expiry out of bounds).
    case invalidRequest(Context, reason: String)
    /// A local file to upload could not be read, or changed while it was being uploaded.
    case localFile(Context, path: String, reason: String)
    /// The client cannot be configured as asked (endpoint, credentials, part sizes).
    case configuration(reason: String)

    /// S3 error codes that say "try again" whatever their status.
    static let transientCodes: Set<String> = [
        "SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable",
        "OperationAborted", "Throttling", "ThrottlingException", "TooManyRequests",
    ]

    /// Whether the same request may succeed if sent again: connection failures and timeouts,
    /// HTTP 500, 502, 503, 504 and 429, and the codes `SlowDown`, `RequestTimeout`,
    /// `InternalError` and kin. Not: 403, 404, `BadDigest`, `InvalidDigest`, invalid requests.
    public var isTransient: Bool {
        switch self {
        case .server(_, let status, let code, _, _):
            if let code, Self.transientCodes.contains(code) { return true }
            if let code, ["BadDigest", "InvalidDigest", "AccessDenied", "NoSuchKey", "NoSuchBucket",
                          "SignatureDoesNotMatch", "InvalidAccessKeyId"].contains(code) { return false }
            return [429, 500, 502, 503, 504].contains(status)
        case .transport(_, _, let transient):
            return transient
        case .badResponse, .cancelled, .invalidRequest, .localFile, .configuration:
            return false
        }
    }

    /// `storage` for every failure of the object store; `configuration` for a client that cannot
    /// be set up as asked.
    public var category: FailureCategory {
        if case .configuration = self { return .configuration }
        return .storage
    }

    /// The HTTP status of a server's answer.
    public var status: Int? {
        if case .server(_, let status, _, _, _) = self { return status }
        return nil
    }

    /// S3's error `Code` from the answer's body.
    public var code: String? {
        if case .server(_, _, let code, _, _) = self { return code }
        return nil
    }

    /// The request that failed (nil for a configuration error).
    public var context: Context? {
        switch self {
        case .server(let context, _, _, _, _), .transport(let context, _, _), .badResponse(let context, _),
             .cancelled(let context), .invalidRequest(let context, _), .localFile(let context, _, _):
            context
        case .configuration:
            nil
        }
    }

    /// Whether this is a 404 (`NoSuchKey` or any answer with that status).
    public var isNotFound: Bool { status == 404 }

    public var description: String {
        let line: String
        switch self {
        case .server(let context, let status, let code, let message, let requestId):
            var text = "S3 \(context.label): HTTP \(status)"
            if let code { text += " \(code)" }
            if let message, !message.isEmpty { text += ": \(Self.oneLine(message, limit: 200))" }
            if let requestId { text += " (request id \(Self.oneLine(requestId, limit: 64)))" }
            line = text + suffix(context)
        case .transport(let context, let reason, _):
            line = "S3 \(context.label): no answer from the server: \(Self.oneLine(reason, limit: 200))" + suffix(context)
        case .badResponse(let context, let reason):
            line = "S3 \(context.label): unreadable answer: \(Self.oneLine(reason, limit: 200))" + suffix(context)
        case .cancelled(let context):
            line = "S3 \(context.label): cancelled"
        case .invalidRequest(let context, let reason):
            line = "S3 \(context.label): invalid request: \(reason)"
        case .localFile(let context, let path, let reason):
            line = "S3 \(context.label): cannot upload the file \(path): \(reason)"
        case .configuration(let reason):
            line = "S3 configuration: \(reason)"
        }
        return Self.oneLine(line, limit: 1000)
    }

    private func suffix(_ context: Context) -> String {
        let attempts = context.attempts > 1 ? " after \(context.attempts) attempts" : ""
        return isTransient ? " [transient\(attempts)]" : " [permanent\(attempts)]"
    }

    /// `text` on one line (control characters as spaces), cut at `limit` characters.
    static func oneLine(_ text: String, limit: Int) -> String {
        var out = String(text.unicodeScalars.map { CharacterSet.controlCharacters.contains($0) ? " " : Character($0) })
        if out.count > limit { out = String(out.prefix(limit)) + "…" }
        return out
    }

    /// A failure of the HTTP client (no answer, or an answer cut off) as an error of `context`.
    static func fromTransport(_ error: any Error, context: Context) -> ObjectStorageError {
        if let error = error as? ObjectStorageError { return error }
        if error is CancellationError { return .cancelled(context) }
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled, .requestStreamCancelled:
                return .cancelled(context)
            case .connectTimeout, .readTimeout, .writeTimeout, .remoteConnectionClosed, .deadlineExceeded,
                 .getConnectionFromPoolTimeout, .tlsHandshakeTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout,
                 .uncleanShutdown:
                return .transport(context, reason: "\(error)", transient: true)
            default:
                return .transport(context, reason: "\(error)", transient: false)
            }
        }
        if error is NIOConnectionError || error is IOError || error is ChannelError {
            return .transport(context, reason: "\(error)", transient: true)
        }
        return .transport(context, reason: "\(error)", transient: false)
    }
}
