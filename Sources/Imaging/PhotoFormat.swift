

/// The photo formats the worker takes, told by their bytes only, never by a name or a
/// declared type: what the spool, the library and the upload hook agree on.
public enum PhotoFormat {
    /// The extension a photo is spooled and stored under (`jpg`, `png`, `heic`, `heif`, `avif`);
    /// nil when the bytes are none of these.
    public static func fileExtension(of bytes: [UInt8]) -> String? {
        Imaging.sniff(bytes).map(fileExtension)
    }

    /// Every extension a photo may have in the spool.
    public static let fileExtensions = ImageFormat.all.map(fileExtension)

    /// The extension of a format: a HEIF file keeps its own (`heic`, `heif`, `avif`).
    public static func fileExtension(_ format: ImageFormat) -> String {
        switch format {
        case .jpeg: "jpg"
        case .png: "png"
        case .heic: "heic"
        case .heif: "heif"
        case .avif: "avif"
        }
    }

    /// The reason bytes of no accepted format are refused, naming what they look like.
    public static func refusal(_ bytes: [UInt8]) -> String {
        if bytes.isEmpty { return "empty file (0 bytes); upload the photo again" }
        return "not a JPEG, PNG, HEIC, HEIF or AVIF (looks like \(Imaging.describe(bytes))); only JPEG, PNG, HEIC, HEIF and AVIF photos are accepted"
    }
}
