/// A point of interest, normalised to 0...1 in displayed coordinates (after orientation):
/// (0, 0) is the top-left corner of the picture as shown, (1, 1) the bottom-right.
public struct FocalPoint: Sendable, Codable, Equatable {
    /// Horizontal position, 0 (left) ... 1 (right).
    public var x: Double
    /// Vertical position, 0 (top) ... 1 (bottom).
    public var y: Double

    /// A focal point from its coordinates (values outside 0...1 are clamped when used).
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}

/// A rectangle in the displayed, full-resolution coordinates of the source picture
/// (after orientation, before any scaled decode), in pixels.
public struct CropRect: Sendable, Codable, Equatable {
    /// Left edge.
    public var x: Int
    /// Top edge.
    public var y: Int
    /// Width (at least 1 when valid).
    public var width: Int
    /// Height (at least 1 when valid).
    public var height: Int

    /// A rectangle from its fields.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
}

/// How a `cover` crop is placed when no focal point is given.
public enum CropStrategy: String, Sendable, Codable {
    /// Where edges, saturated colour and skin tones are densest (in the spirit of libvips' attention crop).
    case attention
    /// In the middle of the picture.
    case centre
}

/// What placed a variant's crop.
public enum CropSource: String, Sendable, Codable {
    /// Centred on the given focal point.
    case focalPoint = "focal_point"
    /// Chosen by the attention measure.
    case attention
    /// Centred in the picture.
    case centre
    /// A rectangle stored by an earlier render, passed back in.
    case stored
    /// No crop: the variant shows the whole picture (`contain`).
    case none
}

/// What becomes of a photo's colour profile.
public enum ColourHandling: String, Sendable, Codable {
    /// Pictures with a profile other than sRGB (Display P3, Adobe RGB, ...) are converted to sRGB
    /// and their variants carry no profile: right in an app or browser that ignores profiles.
    case srgb
    /// The pixels are left in the photo's own space and its profile goes into every variant:
    /// right where profiles are honoured, and no colours outside sRGB are clipped.
    case keep
}

/// How one photo is rendered: limits, background, orientation and crop choices.
public struct RenderOptions: Sendable {
    /// The largest width × height (as stored) that is decoded; larger headers are refused
    /// before any raster is allocated. Default 100 megapixels.
    public var pixelLimit: Int
    /// The colour that transparency is flattened onto (JPEG output has no alpha).
    public var background: RGB
    /// EXIF orientation 1...8 (read by the metadata module); other values mean 1.
    public var orientation: Int
    /// The sidecar's focal point, if any; it wins over the crop strategy.
    public var focalPoint: FocalPoint?
    /// How `cover` crops are placed when there is no focal point and no stored crop.
    public var crop: CropStrategy
    /// Crops stored by an earlier render, by variant name; each is reused as is.
    public var crops: [String: CropRect]
    /// Whether a wider profile is converted to sRGB or kept.
    public var colour: ColourHandling

    /// The default pixel limit, 100 megapixels (as in the default `pipeline.json`).
    public static let defaultPixelLimit = 100_000_000

    /// Options from their fields; every one has the `pipeline.json` default.
    public init(
        pixelLimit: Int = RenderOptions.defaultPixelLimit,
        background: RGB = .white,
        orientation: Int = 1,
        focalPoint: FocalPoint? = nil,
        crop: CropStrategy = .attention,
        crops: [String: CropRect] = [:],
        colour: ColourHandling = .srgb
    ) {
        self.colour = colour
        self.pixelLimit = pixelLimit
        self.background = background
        self.orientation = orientation
        self.focalPoint = focalPoint
        self.crop = crop
        self.crops = crops
    }
}
