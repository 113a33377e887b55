import Foundation
import ObjectStorage
import Storage

/// The staging area of a bucket (`PREFIX` + `staging/TOKEN/NAME`, its sidecar and import ticket
/// beside it): where a queued photo waits for whichever machine claims its job, when machines
/// share only the database and the bucket. A failed photo moves to `PREFIX` + `failed/TOKEN/`,
/// beside its reason (`NAME.error.json`). Called from plain threads (`blocking`).
public final class BucketStaging: QueuedStaging, Sendable {
    public let client: S3Client
    /// The library's prefix: empty, or ending with `/`.
    public let prefix: String

    public init(client: S3Client, prefix: String) {
        self.client = client
        self.prefix = prefix.isEmpty || prefix.hasSuffix("/") ? prefix : prefix + "/"
    }

    /// The staging area of a bucket library: the same bucket, client and prefix.
    public convenience init(library: BucketLibrary) {
        self.init(client: library.client, prefix: library.prefix)
    }

    public var location: String { "s3://\(client.configuration.bucket)/\(prefix)staging/" }

    /// The key of a staged file: `TOKEN/relative` of a queued photo's folder.
    func stagedKey(token: String, _ relative: String) -> String { prefix + "staging/" + token + "/" + relative }

    public func publish(_ file: String, from folder: String) throws {
        let token = Self.token(of: file)
        let names = Self.names(of: file).filter { FileSystem.entryStatus(folder + "/" + $0)?.kind == .regular }
        let client = client
        // The photo last: its object in view means its sidecar and ticket are there too.
        var put: [String] = []
        do {
            for name in names.reversed() {
                let key = stagedKey(token: token, name)
                _ = try blocking { () async throws(ObjectStorageError) -> PutOutcome in
                    try await client.putFile(key: key, path: folder + "/" + name, contentType: "application/octet-stream", skipIfPresent: true)
                }
                put.append(key)
            }
        } catch {
            for key in put { try? blocking { () async throws(ObjectStorageError) in try await client.delete(key: key) } }
            throw error
        }
    }

    public func fetch(_ file: String, into folder: String) throws -> Bool {
        let token = Self.token(of: file)
        let client = client
        var fetchedPhoto = false
        for name in Self.names(of: file) {
            guard let bytes = try Self.bytesIfPresent(stagedKey(token: token, name), client) else { continue }
            let path = folder + "/" + name
            try FileSystem.makeDirectories((path as NSString).deletingLastPathComponent)
            try FileSystem.writeDurably(bytes, to: path)
            if name == Self.names(of: file)[0] { fetchedPhoto = true }
        }
        return fetchedPhoto
    }

    public func discard(_ file: String, failure: [UInt8]?) throws {
        let token = Self.token(of: file)
        let client = client
        let names = Self.names(of: file)
        if let failure {
            // Kept where every machine sees it: the photo and its sidecar under failed/, the reason beside.
            for name in names.prefix(2) {
                let from = stagedKey(token: token, name)
                let to = prefix + "failed/" + token + "/" + name
                guard let bytes = try Self.bytesIfPresent(from, client) else { continue }
                _ = try blocking { () async throws(ObjectStorageError) -> String in try await client.put(key: to, bytes: bytes) }
            }
            let reasonKey = prefix + "failed/" + token + "/" + names[0] + ".error.json"
            _ = try blocking { () async throws(ObjectStorageError) -> String in
                try await client.put(key: reasonKey, bytes: failure, contentType: "application/json")
            }
        }
        // The photo last: should a delete fail half-way (the bucket going away), the photo's
        // object is still in view, and the reconciliation, which looks for photos, finishes it.
        for name in names.reversed() {
            let key = stagedKey(token: token, name)
            try blocking { () async throws(ObjectStorageError) in try await client.delete(key: key) }
        }
    }

    public func sweep(now: Date, quietFor quietSeconds: Double) throws -> StagingSweep {
        let objects = try stagedObjects()
        let expired = try DirectUploads(staging: self).removeExpired(now: now)
        let strays = try removeStrayCompanions(among: objects, now: now, quietFor: quietSeconds)
        let cutoff = now.addingTimeInterval(-quietSeconds)
        let quiet = objects.filter { !Self.isCompanion($0.key) && ($0.lastModified ?? .distantPast) < cutoff }.map(\.key).sorted()
        return StagingSweep(quietPhotos: quiet, removed: expired + strays)
    }

    /// Removes, of the staging area's `objects`, the sidecars and import tickets staged without
    /// their photo, quiet for twice `quietSeconds`: what a publish or a discard cut short by the
    /// bucket going away left (a publish puts its photo within moments of its ticket; a discard
    /// removes its photo last). Returns how many went.
    func removeStrayCompanions(among objects: [ListedObject], now: Date, quietFor quietSeconds: Double) throws -> Int {
        let photos = Set(objects.lazy.filter { !Self.isCompanion($0.key) }.map(\.key))
        let cutoff = now.addingTimeInterval(-2 * quietSeconds)
        let strays = objects.filter { object in
            guard let photo = Self.photo(ofCompanion: object.key) else { return false }
            return !photos.contains(photo) && (object.lastModified ?? .distantPast) < cutoff
        }
        let client = client
        for stray in strays {
            let key = prefix + "staging/" + stray.key
            try blocking { () async throws(ObjectStorageError) in try await client.delete(key: key) }
        }
        return strays.count
    }

    /// Every object of the staging area, its key relative to `staging/` (`TOKEN/NAME...`).
    func stagedObjects() throws -> [ListedObject] {
        let client = client
        let base = prefix + "staging/"
        var objects: [ListedObject] = []
        var token: String?
        repeat {
            let continuation = token
            let page = try blocking { () async throws(ObjectStorageError) -> ListPage in
                try await client.list(prefix: base, continuationToken: continuation)
            }
            for var object in page.objects {
                object.key = String(object.key.dropFirst(base.count))
                objects.append(object)
            }
            token = page.isTruncated ? page.nextContinuationToken : nil
        } while token != nil
        return objects
    }

    /// Whether a staged key is a photo's sidecar or import ticket rather than a photo.
    static func isCompanion(_ relative: String) -> Bool { relative.hasSuffix(".json") }

    /// The photo a staged sidecar or import ticket belongs to; nil for a photo's own key.
    static func photo(ofCompanion relative: String) -> String? {
        if relative.hasSuffix(Spool.importTicketSuffix) { return String(relative.dropLast(Spool.importTicketSuffix.count)) }
        if relative.hasSuffix(".json") { return String(relative.dropLast(".json".count)) }
        return nil
    }

    /// The object's bytes; nil when there is none.
    static func bytesIfPresent(_ key: String, _ client: S3Client) throws -> [UInt8]? {
        do {
            return try blocking { () async throws(ObjectStorageError) -> [UInt8] in try await client.get(key: key) }
        } catch {
            if error.isNotFound { return nil }
            throw error
        }
    }

    /// `TOKEN` of `TOKEN/NAME`.
    static func token(of file: String) -> String { String(file.prefix { $0 != "/" }) }

    /// The photo's name in its folder, then its sidecar's and its import ticket's.
    static func names(of file: String) -> [String] {
        let name = String(file.drop { $0 != "/" }.dropFirst())
        return [name, name + ".json", name + Spool.importTicketSuffix]
    }
}
