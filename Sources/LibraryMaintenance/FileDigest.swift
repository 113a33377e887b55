import Crypto
import Foundation
import ObjectStorage
#if canImport(Glibc)
import Glibc
#endif

/// The checksums by which S3 knows a file's bytes: the MD5 of the whole file (an object put in
/// one request has it as its ETag) and of each part of `partSize` (an object put in parts has
/// the MD5 of those, `-N`). Computed in one pass, a MiB at a time: a file is never held whole.
struct FileDigest: Sendable, Equatable {
    var size: Int
    var md5: [UInt8]
    var partMD5s: [[UInt8]]

    /// The digest of the file at `path`, computed off the concurrency pool.
    static func of(_ path: String, partSize: Int) async throws(LibraryMaintenanceError) -> FileDigest {
        try await offload { () throws(LibraryMaintenanceError) -> FileDigest in try compute(path, partSize: partSize) }
    }

    static func compute(_ path: String, partSize: Int) throws(LibraryMaintenanceError) -> FileDigest {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .localFile(path, String(cString: strerror(errno))) }
        defer { close(fd) }
        let partSize = max(1, partSize)
        var whole = Insecure.MD5()
        var part = Insecure.MD5()
        var partFill = 0
        var parts: [[UInt8]] = []
        var size = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let wanted = min(buffer.count, partSize - partFill)
            let count = buffer.withUnsafeMutableBytes { raw in Glibc.read(fd, raw.baseAddress, wanted) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .localFile(path, String(cString: strerror(errno)))
            }
            if count == 0 { break }
            buffer.withUnsafeBytes { raw in
                let chunk = UnsafeRawBufferPointer(rebasing: raw[0..<count])
                whole.update(bufferPointer: chunk)
                part.update(bufferPointer: chunk)
            }
            size += count
            partFill += count
            if partFill == partSize {
                parts.append(Array(part.finalize()))
                part = Insecure.MD5()
                partFill = 0
            }
        }
        if partFill > 0 || parts.isEmpty { parts.append(Array(part.finalize())) }
        return FileDigest(size: size, md5: Array(whole.finalize()), partMD5s: parts)
    }

    /// Whether a stored object (its size and ETag) holds these bytes; nil when its ETag cannot
    /// tell (not an MD5, nor the multipart ETag of parts of this size: a KMS-encrypted object,
    /// one put in parts of another size, a server that gives none), so that only reading the
    /// object back can.
    func matches(size storedSize: Int, etag: String) -> Bool? {
        guard storedSize == size else { return false }
        let etag = ContentDigest.normalizedETag(etag)
        if etag.contains("-") {
            return etag == ContentDigest.multipartETag(partMD5s: partMD5s) ? true : nil
        }
        guard etag.count == 32, etag.allSatisfy(\.isHexDigit) else { return nil }
        return etag == ContentDigest.singlePartETag(md5: md5)
    }
}

extension S3Client {
    /// The part size `putFile` uses for a file of `size` bytes (the configured one, larger when
    /// more than S3's 10,000 parts would be needed), or the whole size when it goes in one put.
    func partSize(forFileOf size: Int) -> Int {
        guard size > configuration.multipartThreshold else { return max(size, 1) }
        let needed = (size + 9_999) / 10_000
        let mib = 1 << 20
        return max(configuration.partSize, (needed + mib - 1) / mib * mib)
    }
}
