

/// The photo formats the worker takes, told by their bytes only, never by a name or a
/// declared type: what the spool, the library and the upload hook agree on.
public enum PhotoFormat {
    /// The extension a photo is spooled and stored under (`jpg`, `png`); nil when the bytes are
    /// neither JPEG nor PNG.
    public static func fileExtension(of bytes: [UInt8]) -> String? {
        Imaging.sniff(bytes).map(fileExtension)
    }

    /// Every extension a photo may have in the spool.
    public static let fileExtensions = [ImageFormat.jpeg, .png].map(fileExtension)

    /// The extension of a format.
    public static func fileExtension(_ format: ImageFormat) -> String {
        format == .png ? "png" : "jpg"
    }

    /// The reason bytes that are neither JPEG nor PNG are refused, naming what they look like.
    public static func refusal(_ bytes: [UInt8]) -> String {
        if bytes.isEmpty { return "empty file (0 bytes); upload the photo again" }
        return "not a JPEG or PNG (looks like \(Imaging.describe(bytes))); only JPEG and PNG photos are accepted"
    }
}
