/// Decoding, variants and the feed crop: the pixels of Darkroom.
///
/// One photo is decoded once, at the smallest libjpeg scale (M/8) that still covers the
/// largest variant, turned upright by its EXIF orientation, and every variant is resampled
/// from that raster (or from a variant at least twice its size already made from it) with a
/// Lanczos-3 filter.
///
/// Damaged input, decided case by case:
/// - A JPEG whose data ends early is refused as truncated ("premature end of JPEG data"), not
///   rendered with libjpeg's grey fill; other corrupt-data warnings (extraneous bytes, one bad
///   Huffman code) do not stop the decode, as in most viewers.
/// - A PNG whose image data has a wrong CRC but an intact zlib stream decodes (as in Pillow);
///   a wrong CRC on IHDR or PLTE is refused. Image data that runs out is truncation, but a last
///   IDAT chunk that merely claims more bytes than the file holds, after complete image data,
///   is not. Text, EXIF and other ancillary chunks are skipped unread, so compressed text
///   bombs are never inflated.
/// - 12-bit JPEG is refused: the installed libjpeg-turbo decodes 8-bit samples only.
public enum Imaging {
    /// The format of `bytes` by its magic bytes only (nil: neither JPEG nor PNG).
    public static func sniff(_ bytes: [UInt8]) -> ImageFormat? {
        FormatSniffer.format(of: bytes)
    }

    /// What bytes that are not a photo Darkroom reads look like ("a PDF document", "an MP4
    /// video"); `showingBytes` adds the first bytes of unknown data.
    public static func describe(_ bytes: [UInt8], showingBytes: Bool = true) -> String {
        bytes.isEmpty ? "an empty file (0 bytes)" : FormatSniffer.describe(bytes, showingBytes: showingBytes)
    }

    /// The header of a JPEG, PNG, HEIC, HEIF or AVIF, without decoding pixels (cheap: no raster is allocated).
    /// Throws `ImagingError` for empty files, other formats and unreadable headers.
    public static func probe(_ bytes: [UInt8]) throws -> ImageInfo {
        try probe(bytes, pixelLimit: 0)
    }

    /// Like `probe(_:)`, and also refuses a header above `pixelLimit` pixels (0: no limit)
    /// with `ImagingError.tooManyPixels`.
    public static func probe(_ bytes: [UInt8], pixelLimit: Int) throws -> ImageInfo {
        guard !bytes.isEmpty else { throw ImagingError.emptyFile }
        guard let format = FormatSniffer.format(of: bytes) else {
            throw ImagingError.notAnImage(looksLike: FormatSniffer.describe(bytes))
        }
        return try Renderer.probe(bytes, format: format, pixelLimit: pixelLimit)
    }

    /// Whether the resampler runs its 16-bit fixed-point AVX2 passes on this processor (else the
    /// float passes on the baseline vector unit): for reports.
    public static var resamplerUsesAVX2: Bool { Resampler.usesAVX2 }
    /// Whether the resampler's vertical pass runs on AVX-512 VNNI (for the benchmark's report).
    public static var resamplerUsesVNNI: Bool { Resampler.usesVNNI }

    /// Renders every recipe from one decode of `bytes`.
    ///
    /// - `contain` variants fit inside the recipe's box with the aspect kept, and keep the
    ///   source's size when it is already smaller (never upscaled).
    /// - `cover` variants are exactly the recipe's size, cropped. When the source is too
    ///   small for that, the variant is the largest window of the recipe's aspect that the
    ///   source holds, at the source's resolution (never enlarged), so its size is below the
    ///   recipe's but its aspect is the same.
    /// - A cover's window is, in order: the stored rectangle `options.crops[name]` when it lies
    ///   inside the picture (reused as is when its aspect matches the recipe's, otherwise the
    ///   recipe's largest window centred on it); the window centred on `options.focalPoint`;
    ///   the attention choice; the centre. The window is returned in displayed full-resolution
    ///   coordinates, to be stored.
    /// - Every variant is upright (`options.orientation` for JPEG and PNG; a HEIF file's own
    ///   container transformations, never its EXIF Orientation, for HEIC, HEIF and AVIF), carries the source's ICC profile when
    ///   it had one, and no other metadata.
    ///
    /// Throws `ImagingError` for anything that is not a decodable JPEG, PNG, HEIC, HEIF or AVIF, for a header above
    /// `options.pixelLimit` (before any pixel is allocated), and for invalid recipes.
    public static func render(_ bytes: [UInt8], recipes: [VariantRecipe], options: RenderOptions) throws -> RenderResult {
        let result = try Renderer(options: options).render(bytes, recipes: recipes)
        StageProfile.add(result.timings)
        return result
    }

    /// The picture's placeholder (`ThumbHash`), upright, as `render` makes it, from the least
    /// decode that gives it (a JPEG at an eighth of its size).
    public static func placeholder(_ bytes: [UInt8], options: RenderOptions) throws -> [UInt8] {
        let side = ThumbHash.maximumSide
        let tiny = VariantRecipe(name: "placeholder", fit: .contain, width: side, height: side, quality: 50)
        return try Renderer(options: options).render(bytes, recipes: [tiny]).thumbHash
    }
}
