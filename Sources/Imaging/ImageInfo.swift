/// A source format Darkroom decodes.
public enum ImageFormat: String, Sendable, Codable {
    /// JPEG (JFIF/EXIF): baseline, progressive, arithmetic, grayscale, CMYK/YCCK.
    case jpeg
    /// PNG: every colour type and bit depth, interlaced.
    case png

    /// The MIME type, as recorded in the catalog.
    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        }
    }
}

/// What a file's header says, read without decoding the pixels.
public struct ImageInfo: Sendable, Equatable {
    /// The source format.
    public var format: ImageFormat
    /// Width as stored, before orientation.
    public var width: Int
    /// Height as stored, before orientation.
    public var height: Int
    /// A short human description of the coding, e.g. "YCbCr 8-bit progressive" or "palette 4-bit interlaced".
    public var colorDescription: String
    /// Whether the file embeds an ICC colour profile (kept in every variant).
    public var hasICCProfile: Bool

    /// An info value from its fields.
    public init(format: ImageFormat, width: Int, height: Int, colorDescription: String, hasICCProfile: Bool) {
        self.format = format
        self.width = width
        self.height = height
        self.colorDescription = colorDescription
        self.hasICCProfile = hasICCProfile
    }
}
