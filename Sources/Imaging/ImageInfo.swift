/// A source format Darkroom decodes.
public enum ImageFormat: String, Sendable, Codable {
    /// JPEG (JFIF/EXIF): baseline, progressive, arithmetic, grayscale, CMYK/YCCK.
    case jpeg
    /// PNG: every colour type and bit depth, interlaced.
    case png
    /// HEIC: HEIF with HEVC-coded images (iPhones, Samsung phones).
    case heic
    /// HEIF with another coding than HEVC or AV1, told by its `mif1`/`msf1` brand only.
    case heif
    /// AVIF: HEIF with AV1-coded images.
    case avif

    /// Every format, in the order messages name them.
    public static let all: [ImageFormat] = [.jpeg, .png, .heic, .heif, .avif]

    /// Whether the format is a HEIF container (decoded through libheif, whose container
    /// transformations, not the EXIF Orientation, turn the picture upright).
    public var isHEIF: Bool { self == .heic || self == .heif || self == .avif }

    /// The format of a MIME type, or nil.
    public init?(mimeType: String) {
        guard let format = Self.all.first(where: { $0.mimeType == mimeType }) else { return nil }
        self = format
    }

    /// The MIME type, as recorded in the catalog.
    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .heic: "image/heic"
        case .heif: "image/heif"
        case .avif: "image/avif"
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
