import Foundation
import ObjectStorage
import Storage

/// Uploads that go straight from the client to the bucket, never through a Darkroom server:
/// `grant` records what was asked (the size, the type, the photo's fields) beside the library's
/// staging area, under `PREFIX` + `direct/ID/`, and answers a presigned PUT for exactly those
/// bytes; once the client has put them, `stage` moves the photo into the staging area as a queued
/// photo (`ID/NAME`) whose job the caller then records. A grant never completed is removed by
/// `removeExpired` once its URL has expired. Called from plain threads (`blocking`).
///
/// The `direct/` area is apart from `staging/` on purpose: the staging area's reconciliation
/// queues any photo it finds there, and a direct upload must become a job only when its client
/// says it is complete (and its bytes are a photo).
public struct DirectUploads: Sendable {
    public let client: S3Client
    /// The library's prefix: empty, or ending with `/`.
    public let prefix: String
    let staging: BucketStaging

    public init(staging: BucketStaging) {
        self.staging = staging
        self.client = staging.client
        self.prefix = staging.prefix
    }

    /// What a grant records, as JSON beside the upload's object.
    public struct Grant: Codable, Sendable, Equatable {
        public var id: String
        /// The exact size the presigned PUT allows.
        public var size: Int
        /// The `Content-Type` the presigned PUT must carry.
        public var contentType: String
        /// The photo's sidecar (its fields), as the spool would hold it; nil for none.
        public var sidecar: String?
        /// When the presigned URL stops working.
        public var expiresAt: Date

        public init(id: String, size: Int, contentType: String, sidecar: String?, expiresAt: Date) {
            (self.id, self.size, self.contentType, self.sidecar, self.expiresAt) = (id, size, contentType, sidecar, expiresAt)
        }
    }

    /// The presigned PUT of a grant: the URL, and the headers the client's PUT must carry with
    /// these exact values (they are signed).
    public struct Ticket: Sendable, Equatable {
        public var url: String
        public var headers: [String: String]
        public var expiresAt: Date
    }

    /// Where the client's bytes go.
    func objectKey(_ id: String) -> String { prefix + "direct/" + id + "/photo" }
    /// Where the grant is recorded.
    func grantKey(_ id: String) -> String { prefix + "direct/" + id + "/grant.json" }

    /// Records `grant` and answers the presigned PUT for it, valid until `grant.expiresAt`.
    public func grant(_ grant: Grant, now: Date = Date()) throws -> Ticket {
        let seconds = Int(grant.expiresAt.timeIntervalSince(now).rounded(.up))
        let headers = ["Content-Length": String(grant.size), "Content-Type": grant.contentType]
        let url = try client.presignedURL(method: "PUT", key: objectKey(grant.id), expires: max(1, seconds), headers: headers, date: now)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = .sortedKeys
        let bytes = try [UInt8](encoder.encode(grant))
        let (client, key) = (client, grantKey(grant.id))
        _ = try blocking { () async throws(ObjectStorageError) -> String in
            try await client.put(key: key, bytes: bytes, contentType: "application/json")
        }
        return Ticket(url: url, headers: headers, expiresAt: grant.expiresAt)
    }

    /// The grant of `id`; nil when there is none (never granted, completed, or expired and removed).
    public func recorded(_ id: String) throws -> Grant? {
        guard let bytes = try BucketStaging.bytesIfPresent(grantKey(id), client) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(Grant.self, from: Data(bytes))
    }

    /// The size of the bytes the client has put for `id`; nil while there are none.
    public func arrivedSize(_ id: String) throws -> Int? {
        let (client, key) = (client, objectKey(id))
        return try blocking { () async throws(ObjectStorageError) -> ObjectInfo? in try await client.head(key: key) }?.size
    }

    /// The first `count` bytes the client has put for `id` (what tells a photo's format).
    public func leadingBytes(_ id: String, count: Int) throws -> [UInt8] {
        let (client, key) = (client, objectKey(id))
        return try blocking { () async throws(ObjectStorageError) -> [UInt8] in try await client.get(key: key, range: 0...(count - 1)) }
    }

    /// Moves the client's bytes for `grant` into the staging area as the queued photo
    /// `ID/name`, its sidecar beside it, and returns that queued file; the photo's object last,
    /// so that it is in view only once its sidecar is. Nothing of it is left staged when it throws.
    public func stage(_ grant: Grant, as name: String) throws -> String {
        let file = grant.id + "/" + name
        let client = client
        let photoKey = staging.stagedKey(token: grant.id, name)
        let sidecarKey = staging.stagedKey(token: grant.id, name + ".json")
        do {
            if let sidecar = grant.sidecar {
                let bytes = Array(sidecar.utf8)
                _ = try blocking { () async throws(ObjectStorageError) -> String in
                    try await client.put(key: sidecarKey, bytes: bytes, contentType: "application/json")
                }
            }
            let source = objectKey(grant.id)
            _ = try blocking { () async throws(ObjectStorageError) -> String in try await client.copy(from: source, to: photoKey) }
        } catch {
            try? staging.discard(file, failure: nil)
            throw error
        }
        return file
    }

    /// Removes what the client put for `id` and its grant.
    public func remove(_ id: String) throws {
        for key in [objectKey(id), grantKey(id)] {
            let client = client
            try blocking { () async throws(ObjectStorageError) in try await client.delete(key: key) }
        }
    }

    /// Removes the uploads whose grant expired more than `graceSeconds` before `now` (their URL
    /// no longer works, so nothing more can arrive), and any object under `direct/` without a
    /// grant that is older than the longest grant S3 allows. Returns how many uploads went.
    public func removeExpired(now: Date = Date(), graceSeconds: Double = 300) throws -> Int {
        let client = client
        let base = prefix + "direct/"
        var objects: [String: [ListedObject]] = [:]
        var token: String?
        repeat {
            let continuation = token
            let page = try blocking { () async throws(ObjectStorageError) -> ListPage in
                try await client.list(prefix: base, continuationToken: continuation)
            }
            for object in page.objects {
                let id = String(object.key.dropFirst(base.count).prefix { $0 != "/" })
                objects[id, default: []].append(object)
            }
            token = page.isTruncated ? page.nextContinuationToken : nil
        } while token != nil
        var removed = 0
        for (id, found) in objects.sorted(by: { $0.key < $1.key }) {
            let expired: Bool
            if let grant = try recorded(id) {
                expired = grant.expiresAt.addingTimeInterval(graceSeconds) < now
            } else {
                let newest = found.compactMap(\.lastModified).max() ?? .distantPast
                expired = newest.addingTimeInterval(Double(SigV4Signer.maximumExpiry) + graceSeconds) < now
            }
            guard expired else { continue }
            for object in found {
                let key = object.key
                try blocking { () async throws(ObjectStorageError) in try await client.delete(key: key) }
            }
            removed += 1
        }
        return removed
    }
}
