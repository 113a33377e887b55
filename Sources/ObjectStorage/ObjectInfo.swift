import Crypto
import Foundation

/// What `head` tells of a stored object.
public struct ObjectInfo: Sendable, Equatable {
    public var size: Int
    /// The ETag without its quotes: the hex MD5 of the bytes for an object stored in one part
    /// (and not encrypted with KMS); `hex-N` for one uploaded in N parts.
    public var etag: String
    public var lastModified: Date?
    public var contentType: String?

    public init(size: Int, etag: String, lastModified: Date? = nil, contentType: String? = nil) {
        self.size = size
        self.etag = etag
        self.lastModified = lastModified
        self.contentType = contentType
    }
}

/// One object of a listing.
public struct ListedObject: Sendable, Equatable {
    public var key: String
    public var size: Int
    /// Without its quotes, as in `ObjectInfo`.
    public var etag: String
    public var lastModified: Date?

    public init(key: String, size: Int, etag: String, lastModified: Date? = nil) {
        self.key = key
        self.size = size
        self.etag = etag
        self.lastModified = lastModified
    }
}

/// One page of a ListObjectsV2 listing.
public struct ListPage: Sendable, Equatable {
    public var objects: [ListedObject]
    /// The "directories" under a delimiter, when one was given.
    public var commonPrefixes: [String]
    /// Whether more keys follow: ask again with `nextContinuationToken`.
    public var isTruncated: Bool
    public var nextContinuationToken: String?

    public init(objects: [ListedObject], commonPrefixes: [String] = [], isTruncated: Bool, nextContinuationToken: String?) {
        self.objects = objects
        self.commonPrefixes = commonPrefixes
        self.isTruncated = isTruncated
        self.nextContinuationToken = nextContinuationToken
    }
}

/// A multipart upload begun and neither completed nor aborted: its parts take space in the
/// bucket, unseen by a listing of objects, until it is aborted.
public struct UnfinishedUpload: Sendable, Equatable {
    public var key: String
    public var uploadId: String
    /// When it was begun; nil when the server does not say.
    public var initiated: Date?

    public init(key: String, uploadId: String, initiated: Date?) {
        self.key = key
        self.uploadId = uploadId
        self.initiated = initiated
    }
}

/// What a conditional put did.
public enum PutOutcome: Sendable, Equatable {
    /// The bytes were written; the ETag the server gave them (unquoted).
    case written(etag: String)
    /// An object of the same size and checksum was already there: nothing was sent.
    case alreadyPresent(ObjectInfo)

    public var wasWritten: Bool {
        if case .written = self { return true }
        return false
    }
}

/// The MD5 checksums S3 computes, and the decision whether an object already stored holds the
/// bytes about to be written (so that a content-addressed put can skip the upload).
public enum ContentDigest {
    /// The MD5 of `bytes`.
    public static func md5<Bytes: DataProtocol>(_ bytes: Bytes) -> [UInt8] {
        Array(Insecure.MD5.hash(data: bytes))
    }

    /// `Content-MD5`: the MD5 in base64.
    public static func contentMD5(_ md5: [UInt8]) -> String {
        Data(md5).base64EncodedString()
    }

    /// The ETag S3 gives an object stored in one part: the hex MD5.
    public static func singlePartETag(md5: [UInt8]) -> String {
        SigV4Encoding.hex(md5)
    }

    /// The ETag S3 gives an object uploaded in parts: the hex MD5 of the parts' MD5s one after
    /// the other, `-`, the number of parts.
    public static func multipartETag(partMD5s: [[UInt8]]) -> String {
        SigV4Encoding.hex(Insecure.MD5.hash(data: partMD5s.flatMap { $0 })) + "-\(partMD5s.count)"
    }

    /// An ETag as the server wrote it (`"…"`, possibly weak `W/"…"`) without quotes, lowercased.
    public static func normalizedETag(_ etag: String) -> String {
        var text = etag.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("W/") { text.removeFirst(2) }
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = String(text.dropFirst().dropLast()) }
        return text.lowercased()
    }

    /// Whether `existing` holds bytes of `size` whose checksum is `md5` (and, for an object
    /// stored in parts, whose parts' checksums are `partMD5s`). Same size and the ETag S3 would
    /// give those bytes: the same object. Any other ETag (a multipart one with other parts, a
    /// KMS-encrypted object's) cannot be compared: the answer is no, and the caller writes
    /// again, which is harmless for content-addressed keys.
    public static func isSameObject(_ existing: ObjectInfo, size: Int, md5: [UInt8], partMD5s: [[UInt8]]? = nil) -> Bool {
        guard existing.size == size else { return false }
        let etag = normalizedETag(existing.etag)
        if etag.contains("-") {
            guard let partMD5s, !partMD5s.isEmpty else { return false }
            return etag == multipartETag(partMD5s: partMD5s)
        }
        return etag == singlePartETag(md5: md5)
    }
}
