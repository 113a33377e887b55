import Operations

/// Where clients fetch variant files: under `/v1/media/` on this server, or under
/// `server.media_base_url`, a static server over the library root.
struct MediaLinks: Sendable {
    /// What a library path is appended to.
    let base: String

    init(mediaBaseURL: String?) {
        base = mediaBaseURL ?? APIRoute.mediaPrefix
    }

    /// The URL of a file, from its path relative to the library root.
    func url(_ libraryPath: String) -> String { base + libraryPath }

    /// The picture with URLs in place of its variants' library paths.
    func linked(_ picture: PictureView) -> PictureView {
        var picture = picture
        picture.variants = picture.variants.mapValues(url)
        return picture
    }
}
