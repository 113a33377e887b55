import Logging
import Operations
import Settings
import Storage

/// Where clients fetch variant files, by setting:
/// - `library.public_url`: a CDN or a public bucket in front of the library (its paths appended);
/// - `server.media_base_url`: a static server over the library root;
/// - `library.presign_seconds` with the library in a bucket: a presigned GET of each variant,
///   valid that long, straight from the bucket;
/// - else `/v1/media/` on this server, which reads the library (a directory or a bucket).
struct MediaLinks: Sendable {
    /// What a library path is appended to.
    let base: String
    /// Presigns a library path, when variants are fetched from the bucket by presigned URLs.
    let presign: (@Sendable (String) -> String?)?

    init(configuration: Configuration, library: any BlobStore, logger: Logger) {
        base = configuration.libraryPublicURL.map { $0.hasSuffix("/") ? $0 : $0 + "/" }
            ?? configuration.server.mediaBaseURL ?? APIRoute.mediaPrefix
        if configuration.libraryPublicURL == nil, let seconds = configuration.libraryPresignSeconds {
            presign = { path in
                do {
                    return try library.presignedURL(path, seconds: Int(seconds))
                } catch {
                    logger.warning("cannot presign a variant's URL; the media route's is given", metadata: ["path": "\(path)", "reason": "\(error)"])
                    return nil
                }
            }
        } else {
            presign = nil
        }
    }

    /// The URL of a file, from its path relative to the library root.
    func url(_ libraryPath: String) -> String { presign?(libraryPath) ?? base + libraryPath }

    /// The picture with URLs in place of its variants' library paths.
    func linked(_ picture: PictureView) -> PictureView {
        var picture = picture
        picture.variants = picture.variants.mapValues(url)
        return picture
    }
}
