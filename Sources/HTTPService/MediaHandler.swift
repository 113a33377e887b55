import Foundation
import Imaging
import Hummingbird
import Multipart
import Storage

/// `GET /v1/media/variants/{variant}/{shard1}/{shard2}/{file}`: a variant file of the library.
///
/// Only paths of the library's own layout (`Library.variantPath`) are served: a configured
/// variant, the two shard folders of the hash, a 64-digit SHA-256 and a known extension. Anything
/// else is refused before the file system is touched, so no request can name a file outside
/// the library's variants; and only regular files are served, never through a symbolic link
/// (`LibraryFile`). Variants are addressed by their original's SHA-256 and never change
/// under one path: the ETag is that hash and the variant's name, and caches may keep them forever.
struct MediaHandler: Sendable {
    let environment: ServiceEnvironment

    /// How long caches may keep a variant: a year, the longest HTTP/1.1 asks caches to honour.
    static let cacheControl = "public, max-age=31536000, immutable"
    /// Hexadecimal digits in a SHA-256.
    static let hashDigits = 64

    /// The variant file, whole or the byte range asked (`Range: bytes=...`: 206, or 416 past its
    /// end), 304 when the client's copy is current; with `head`, the same answer without its body.
    /// Read from the library wherever it is (a directory, or a bucket whose object is fetched
    /// with the range asked).
    func file(variant: String, shard1: String, shard2: String, file: String, ifNoneMatch: String?, range rangeHeader: String?,
              head: Bool = false) async throws -> Response {
        let (sha256, ext) = try Self.parse(file)
        guard environment.configuration.variants.contains(where: { $0.name == variant }) else {
            throw APIError.notFound("no variant named \(variant)")
        }
        let relative = Library.variantPath(sha256: sha256, variant: variant, extension: ext)
        guard relative == ["variants", variant, shard1, shard2, file].joined(separator: "/") else {
            // A path of the library's shape that names no file it could hold: not found.
            throw APIError.notFound("no such media file: \(shard1)/\(shard2) are not the shard folders of \(file)")
        }
        let etag = "\"\(sha256)-\(variant)\""
        var headers: HTTPFields = [.eTag: etag, .cacheControl: Self.cacheControl, .acceptRanges: "bytes"]
        let notModified = Self.matches(ifNoneMatch, etag)
        let range = notModified ? nil : try ByteRange(header: rangeHeader)
        let library = environment.library
        let read: BlobRead?
        do {
            read = try await environment.blocking { () throws -> BlobRead? in
                // A HEAD or a 304 needs only the size: the first byte stands for the whole.
                try library.read(relative, range: head || notModified ? 0...0 : range?.bounds)
            }
        } catch let error as SharedFileError {
            // A hard link planted in the library (to /etc/passwd, say): never served, and told.
            environment.logger.warning("refused to serve a library file with several names", metadata: [
                "file": "\(relative)", "links": "\(error.links)", "reason": "\(error)"])
            throw APIError.notFound("\(relative) is not served: it has several names (a hard link), which the library never makes; the server's log has more under this answer's request_id")
        }
        guard let read else { throw APIError.notFound("no such media file: \(relative)") }
        if notModified { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = OutputFormat.allCases.first { $0.fileExtension == ext }?.mimeType ?? OutputFormat.jpeg.mimeType
        var status = HTTPResponse.Status.ok
        var length = read.totalSize
        if let range {
            guard let bounds = range.resolved(size: read.totalSize) else {
                headers[.contentRange] = "bytes */\(read.totalSize)"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            }
            status = .partialContent
            headers[.contentRange] = "bytes \(bounds.lowerBound)-\(bounds.upperBound)/\(read.totalSize)"
            length = bounds.upperBound - bounds.lowerBound + 1
        }
        headers[.contentLength] = String(length)
        if head { return Response(status: status, headers: headers) }
        var bytes = read.bytes
        // A suffix range (`bytes=-N`) could only be resolved once the size was known: the file
        // was read whole (variants are small), and its end is what is sent.
        if let range, range.bounds == nil, let bounds = range.resolved(size: read.totalSize) {
            bytes = BlobRead.slice(bytes, bounds).bytes
        }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The hash and extension of a file name `<sha256>.<ext>`; 400 for anything else.
    static func parse(_ file: String) throws(APIError) -> (sha256: String, ext: String) {
        let pieces = file.split(separator: ".", omittingEmptySubsequences: false)
        guard pieces.count == 2, pieces[0].count == hashDigits,
              pieces[0].isLowercaseHex,
              OutputFormat.allCases.contains(where: { $0.fileExtension == pieces[1] }) else {
            throw .badRequest("\(file) is not a media file name (a SHA-256 in lowercase hexadecimal, a dot, jpg or webp)")
        }
        return (String(pieces[0]), String(pieces[1]))
    }

    /// Whether an If-None-Match header names this ETag (or is `*`).
    static func matches(_ header: String?, _ etag: String) -> Bool {
        guard let header else { return false }
        return header.split(separator: ",").contains { item in
            let tag = item.trimmingSpaces
            return tag == "*" || tag == etag || (tag.hasPrefix("W/") && tag.dropFirst(2) == etag)
        }
    }
}

/// One byte range of a `Range` header (`bytes=FIRST-LAST`, `bytes=FIRST-`, `bytes=-SUFFIX`); a
/// header of several ranges, or of another unit, is answered whole (RFC 9110 lets a server
/// ignore it), and a malformed one is refused.
struct ByteRange: Equatable {
    var first: Int64?
    var last: Int64?

    /// Nil when there is no header or it asks for something other than one byte range.
    init?(header: String?) throws(APIError) {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst("bytes=".count).trimmingSpaces
        guard let dash = spec.firstIndex(of: "-") else { throw .badRequest("Range \(header) is not bytes=FIRST-LAST") }
        let firstText = spec[..<dash], lastText = spec[spec.index(after: dash)...]
        first = firstText.isEmpty ? nil : Int64(firstText)
        last = lastText.isEmpty ? nil : Int64(lastText)
        guard (firstText.isEmpty || first != nil), (lastText.isEmpty || last != nil), first != nil || last != nil,
              (first ?? 0) >= 0, (last ?? 0) >= 0, first.map({ f in last.map { f <= $0 } ?? true }) ?? true else {
            throw .badRequest("Range \(header) is not bytes=FIRST-LAST with FIRST <= LAST")
        }
    }

    /// The bytes to read before the size is known: from FIRST (to LAST, or to the end).
    var bounds: ClosedRange<Int64>? {
        guard let first else { return nil }
        return first...(last ?? Int64.max - 1)
    }

    /// The bytes served of a file of `size`; nil when none of them is in it (416).
    func resolved(size: Int64) -> ClosedRange<Int64>? {
        guard size > 0 else { return nil }
        if let first {
            guard first < size else { return nil }
            return first...min(last ?? size - 1, size - 1)
        }
        guard let suffix = last, suffix > 0 else { return nil }
        return max(0, size - suffix)...(size - 1)
    }
}
