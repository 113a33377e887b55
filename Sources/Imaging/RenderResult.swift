/// Measures of a picture that the cover policy scores, taken from a small copy of it.
public struct PictureStatistics: Sendable, Codable, Equatable {
    /// Detail at the analysis size: the variance V of a 4-neighbour Laplacian of luma
    /// (0...255 scale), mapped to 0...1 as V / (V + `PictureStatistics.sharpnessHalfPoint`).
    /// 0 is a flat picture; a variance of the half point gives 0.5; crisp detail tends to 1.
    public var sharpness: Double
    /// Mean Rec. 601 luma, 0 (black) ... 1 (white).
    public var meanLuma: Double
    /// The share of pixels whose luma is within `PictureStatistics.clipMargin` of black or white.
    public var clippedFraction: Double

    /// The Laplacian variance that maps to a sharpness of 0.5.
    public static let sharpnessHalfPoint = 200.0
    /// How close to 0 or 255 (in 8-bit luma levels) a pixel counts as clipped.
    public static let clipMargin = 3

    /// Statistics from their values.
    public init(sharpness: Double, meanLuma: Double, clippedFraction: Double) {
        self.sharpness = sharpness
        self.meanLuma = meanLuma
        self.clippedFraction = clippedFraction
    }
}

/// One encoded variant.
public struct RenderedVariant: Sendable {
    /// The recipe's name.
    public var name: String
    /// Width in pixels, as displayed.
    public var width: Int
    /// Height in pixels, as displayed.
    public var height: Int
    /// The encoded format.
    public var format: OutputFormat
    /// The encoded file.
    public var bytes: [UInt8]
    /// For `cover`: the rectangle of the source shown, in displayed full-resolution
    /// coordinates, to be stored and passed back in later renders; nil for `contain`.
    public var crop: CropRect?
    /// What placed the crop (`.none` for `contain`).
    public var cropSource: CropSource

    /// A variant from its fields.
    public init(name: String, width: Int, height: Int, format: OutputFormat, bytes: [UInt8], crop: CropRect?, cropSource: CropSource) {
        self.name = name
        self.width = width
        self.height = height
        self.format = format
        self.bytes = bytes
        self.crop = crop
        self.cropSource = cropSource
    }
}

/// The CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID) each stage of one render took,
/// in milliseconds: for the benchmark's profile and anyone asking where a photo's time goes.
public struct RenderTimings: Sendable, Equatable {
    /// The codec's decode at its scale (and the conversion to sRGB, when the photo needs one).
    public var decode = 0.0
    /// Turning the raster upright, the analysis copy, its statistics, the placeholder and the
    /// placing of the crops.
    public var analysis = 0.0
    /// Resampling every variant.
    public var resample = 0.0
    /// Encoding every variant.
    public var encode = 0.0

    public init() {}

    public var total: Double { decode + analysis + resample + encode }
}

/// Everything one render produced.
public struct RenderResult: Sendable {
    /// The header's description of the source.
    public var info: ImageInfo
    /// Width as displayed (after orientation), full resolution.
    public var displayWidth: Int
    /// Height as displayed (after orientation), full resolution.
    public var displayHeight: Int
    /// Width of the one raster decoded (after the codec's scaled decode, as stored).
    public var decodedWidth: Int
    /// Height of the one raster decoded (after the codec's scaled decode, as stored).
    public var decodedHeight: Int
    /// The variants, in recipe order.
    public var variants: [RenderedVariant]
    /// Sharpness, exposure and clipping of the picture.
    public var statistics: PictureStatistics
    /// The picture's placeholder (`ThumbHash`), upright.
    public var thumbHash: [UInt8]
    /// Where the render's CPU time went.
    public var timings = RenderTimings()

    /// A result from its fields.
    public init(
        info: ImageInfo, displayWidth: Int, displayHeight: Int, decodedWidth: Int, decodedHeight: Int,
        variants: [RenderedVariant], statistics: PictureStatistics, thumbHash: [UInt8]
    ) {
        self.thumbHash = thumbHash
        self.info = info
        self.displayWidth = displayWidth
        self.displayHeight = displayHeight
        self.decodedWidth = decodedWidth
        self.decodedHeight = decodedHeight
        self.variants = variants
        self.statistics = statistics
    }
}
