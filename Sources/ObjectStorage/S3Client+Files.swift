import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension S3Client {
    /// Uploads the file at `path` under `key` without holding more than one part of it in memory:
    /// a file up to `multipartThreshold` bytes in one put (read once, with `Content-MD5`), a
    /// larger one in parts of `partSize` (each read from disk in turn, with its own `Content-MD5`
    /// and signed SHA-256, retried on its own), completed with the list of parts, and aborted on
    /// any failure so that no parts are left behind. A file whose size changes meanwhile fails.
    ///
    /// With `skipIfPresent`, an object of the same size whose ETag is what these bytes would get
    /// (their MD5, or the multipart ETag of these parts) is left as it is and nothing is sent;
    /// the file is then read once more to compute its checksums, part by part.
    public func putFile(key: String, path: String, contentType: String = "application/octet-stream",
                        skipIfPresent: Bool = false) async throws(ObjectStorageError) -> PutOutcome {
        try check(key: key, .putObject)
        let context = ObjectStorageError.Context(operation: .putObject, bucket: configuration.bucket, key: key)
        let file = try await PartReader.open(path, context: context)
        defer { file.close() }
        let partSize = effectivePartSize(for: file.size)
        let multipart = file.size > configuration.multipartThreshold

        if skipIfPresent, let existing = try await head(key: key), existing.size == file.size {
            let (whole, parts) = try await file.digests(partSize: partSize)
            if ContentDigest.isSameObject(existing, size: file.size, md5: whole, partMD5s: multipart ? parts : nil) {
                return .alreadyPresent(existing)
            }
        }
        guard multipart else {
            let bytes = try await file.read(offset: 0, count: file.size)
            try file.checkUnchanged()
            return .written(etag: try await put(key: key, bytes: bytes, contentType: contentType))
        }
        return .written(etag: try await uploadParts(key: key, file: file, partSize: partSize, contentType: contentType))
    }

    /// The part size for a file: the configured one, or larger when the file would need more
    /// than S3's 10,000 parts (rounded up to a MiB).
    func effectivePartSize(for size: Int) -> Int {
        let needed = (size + 9_999) / 10_000
        let mib = 1 << 20
        return max(configuration.partSize, (needed + mib - 1) / mib * mib)
    }

    private func uploadParts(key: String, file: PartReader, partSize: Int, contentType: String) async throws(ObjectStorageError) -> String {
        let uploadId = try await createMultipartUpload(key: key, contentType: contentType)
        do throws(ObjectStorageError) {
            var parts: [(number: Int, etag: String)] = []
            var md5s: [[UInt8]] = []
            var offset = 0
            while offset < file.size {
                let length = min(partSize, file.size - offset)
                let bytes = try await file.read(offset: offset, count: length)
                md5s.append(ContentDigest.md5(bytes))
                let etag = try await uploadPart(key: key, uploadId: uploadId, number: parts.count + 1, bytes: bytes, md5: md5s.last!)
                parts.append((parts.count + 1, etag))
                offset += length
            }
            try file.checkUnchanged()
            let etag = try await completeMultipartUpload(key: key, uploadId: uploadId, parts: parts)
            // Ceph's gateway answers the completion with an empty ETag: the one S3 gives such an
            // object is known from the parts.
            return etag.isEmpty ? ContentDigest.multipartETag(partMD5s: md5s) : etag
        } catch {
            // In a task of its own, so that a cancelled upload still removes its parts.
            let client = self
            await Task { try? await client.abortMultipartUpload(key: key, uploadId: uploadId) }.value
            throw error
        }
    }

    /// Starts a multipart upload; its `UploadId`.
    func createMultipartUpload(key: String, contentType: String) async throws(ObjectStorageError) -> String {
        let call = Call(operation: .createMultipartUpload, method: .POST, key: key, query: [.init("uploads", "")],
                        headers: [.init("Content-Type", contentType)])
        return try await perform(call) { (response, context) async throws(ObjectStorageError) -> String in
            let body = try await collect(response, limit: 1 << 20, context: context)
            do throws(S3XML.Malformed) {
                return try S3XML.uploadId(body)
            } catch {
                throw .badResponse(context, reason: error.description)
            }
        }
    }

    /// Uploads part `number` (from 1); its ETag (unquoted).
    func uploadPart(key: String, uploadId: String, number: Int, bytes: [UInt8], md5: [UInt8]) async throws(ObjectStorageError) -> String {
        let call = Call(operation: .uploadPart, method: .PUT, key: key,
                        query: [.init("partNumber", String(number)), .init("uploadId", uploadId)],
                        headers: [.init("Content-MD5", ContentDigest.contentMD5(md5))],
                        body: .bytes(bytes), payload: .hashing(bytes))
        return try await perform(call) { (response, context) async throws(ObjectStorageError) -> String in
            try await drain(response, context: context)
            guard let etag = response.headers.first(name: "ETag"), !etag.isEmpty else {
                throw .badResponse(context, reason: "no ETag in the answer to UploadPart \(number)")
            }
            return ContentDigest.normalizedETag(etag)
        }
    }

    /// Completes a multipart upload from its parts; the object's ETag. An `Error` document in a
    /// 200 answer (S3 sends one when the completion fails after it began answering) is a failure,
    /// retried when transient.
    func completeMultipartUpload(key: String, uploadId: String, parts: [(number: Int, etag: String)]) async throws(ObjectStorageError) -> String {
        let body = Array(S3XML.completeMultipartBody(parts: parts).utf8)
        let call = Call(operation: .completeMultipartUpload, method: .POST, key: key, query: [.init("uploadId", uploadId)],
                        headers: [.init("Content-Type", "application/xml")], body: .bytes(body), payload: .hashing(body))
        return try await perform(call) { (response, context) async throws(ObjectStorageError) -> String in
            let answer = try await collect(response, limit: 1 << 20, context: context)
            let completion: Result<String, S3XML.ErrorBody>
            do throws(S3XML.Malformed) {
                completion = try S3XML.completion(answer)
            } catch {
                throw .badResponse(context, reason: error.description)
            }
            switch completion {
            case .success(let etag):
                return etag
            case .failure(let error):
                throw .server(context, status: Int(response.status.code), code: error.code, message: error.message, requestId: error.requestId)
            }
        }
    }

    /// The multipart uploads under `prefix` begun and neither completed nor aborted (all pages).
    public func unfinishedUploads(prefix: String) async throws(ObjectStorageError) -> [UnfinishedUpload] {
        var found: [UnfinishedUpload] = []
        var marker: (key: String, uploadId: String)?
        repeat {
            var call = Call(operation: .listMultipartUploads, method: .GET, key: nil, query: [.init("uploads", "")])
            if !prefix.isEmpty { call.query.append(.init("prefix", prefix)) }
            if let marker {
                call.query.append(.init("key-marker", marker.key))
                if !marker.uploadId.isEmpty { call.query.append(.init("upload-id-marker", marker.uploadId)) }
            }
            let page = try await perform(call) { (response, context) async throws(ObjectStorageError) -> ([UnfinishedUpload], (key: String, uploadId: String)?) in
                let body = try await collect(response, limit: 64 << 20, context: context)
                do throws(S3XML.Malformed) {
                    let page = try S3XML.unfinishedUploads(body)
                    return (page.uploads, page.next)
                } catch {
                    throw .badResponse(context, reason: error.description)
                }
            }
            found += page.0
            marker = page.1
        } while marker != nil
        return found
    }

    /// Abandons a multipart upload and its parts.
    public func abortMultipartUpload(key: String, uploadId: String) async throws(ObjectStorageError) {
        let call = Call(operation: .abortMultipartUpload, method: .DELETE, key: key, query: [.init("uploadId", uploadId)],
                        accepted: [200, 204, 404])
        try await perform(call) { (response, context) async throws(ObjectStorageError) in
            try await drain(response, context: context)
        }
    }
}

/// A file opened for upload: its size when opened, and reads at an offset on NIO's blocking
/// thread pool (never on the concurrency pool's threads).
final class PartReader: Sendable {
    let descriptor: Int32
    let path: String
    let size: Int
    let context: ObjectStorageError.Context

    private init(descriptor: Int32, path: String, size: Int, context: ObjectStorageError.Context) {
        self.descriptor = descriptor
        self.path = path
        self.size = size
        self.context = context
    }

    static func open(_ path: String, context: ObjectStorageError.Context) async throws(ObjectStorageError) -> PartReader {
        let opened: Result<PartReader, ObjectStorageError> = await blockingIO {
            let fd = openForReading(path)
            guard fd >= 0 else { return .failure(.localFile(context, path: path, reason: String(cString: strerror(errno)))) }
            var info = stat()
            guard fstat(fd, &info) == 0 else {
                let reason = String(cString: strerror(errno))
                _ = closeDescriptor(fd)
                return .failure(.localFile(context, path: path, reason: reason))
            }
            guard (info.st_mode & S_IFMT) == S_IFREG else {
                _ = closeDescriptor(fd)
                return .failure(.localFile(context, path: path, reason: "not a regular file"))
            }
            return .success(PartReader(descriptor: fd, path: path, size: Int(info.st_size), context: context))
        }
        return try opened.get()
    }

    func close() {
        _ = closeDescriptor(descriptor)
    }

    /// Exactly `count` bytes from `offset`; a file that ends sooner changed since it was opened.
    func read(offset: Int, count: Int) async throws(ObjectStorageError) -> [UInt8] {
        let result: Result<[UInt8], ObjectStorageError> = await blockingIO { [self] in
            var bytes = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let n = bytes.withUnsafeMutableBytes { buffer in
                    pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset + done))
                }
                if n < 0 {
                    if errno == EINTR { continue }
                    return .failure(.localFile(context, path: path, reason: String(cString: strerror(errno))))
                }
                if n == 0 { return .failure(.localFile(context, path: path, reason: "the file got shorter while it was being uploaded")) }
                done += n
            }
            return .success(bytes)
        }
        return try result.get()
    }

    /// Throws when the file's size is no longer what it was when opened.
    func checkUnchanged() throws(ObjectStorageError) {
        var info = stat()
        guard fstat(descriptor, &info) == 0, Int(info.st_size) == size else {
            throw .localFile(context, path: path, reason: "the file changed size while it was being uploaded")
        }
    }

    /// The MD5 of the whole file and of each part of `partSize`, read part by part.
    func digests(partSize: Int) async throws(ObjectStorageError) -> (whole: [UInt8], parts: [[UInt8]]) {
        var whole = Insecure.MD5()
        var parts: [[UInt8]] = []
        var offset = 0
        repeat {
            let length = min(partSize, size - offset)
            let bytes = try await read(offset: offset, count: length)
            whole.update(data: bytes)
            parts.append(ContentDigest.md5(bytes))
            offset += length
        } while offset < size
        return (Array(whole.finalize()), parts)
    }

    /// Runs blocking file work on NIO's thread pool.
    private static func blockingIO<T: Sendable>(_ work: @escaping @Sendable () -> Result<T, ObjectStorageError>) async -> Result<T, ObjectStorageError> {
        do {
            return try await NIOThreadPool.singleton.runIfActive(work)
        } catch {
            return work()
        }
    }

    private func blockingIO<T: Sendable>(_ work: @escaping @Sendable () -> Result<T, ObjectStorageError>) async -> Result<T, ObjectStorageError> {
        await Self.blockingIO(work)
    }
}

private func openForReading(_ path: String) -> Int32 {
    open(path, O_RDONLY | O_CLOEXEC)
}

private func closeDescriptor(_ fd: Int32) -> Int32 {
    close(fd)
}
