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

    func file(variant: String, shard1: String, shard2: String, file: String, ifNoneMatch: String?) async throws -> Response {
        let (sha256, ext) = try Self.parse(file)
        guard environment.configuration.variants.contains(where: { $0.name == variant }) else {
            throw APIError.notFound("no variant named \(variant)")
        }
        let relative = Library.variantPath(sha256: sha256, variant: variant, extension: ext)
        guard relative == ["variants", variant, shard1, shard2, file].joined(separator: "/") else {
            throw APIError.badRequest("\(shard1)/\(shard2) are not the shard folders of \(file)")
        }
        let root = environment.configuration.libraryRoot
        let etag = "\"\(sha256)-\(variant)\""
        var headers: HTTPFields = [.eTag: etag, .cacheControl: Self.cacheControl]
        let notModified = Self.matches(ifNoneMatch, etag)
        let components = relative.split(separator: "/").map(String.init)
        let bytes = try await environment.blocking { () -> Data? in
            LibraryFile.read(root: root, components: components, contents: !notModified)
        }
        guard let bytes else { throw APIError.notFound("no such media file: \(relative)") }
        if notModified { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = OutputFormat.allCases.first { $0.fileExtension == ext }?.mimeType ?? OutputFormat.jpeg.mimeType
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
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
