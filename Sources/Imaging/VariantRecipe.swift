/// How a variant's picture is fitted into its recipe's width × height.
public enum Fit: String, Sendable, Codable {
    /// Fits inside width × height, aspect ratio kept; the long edge is at most the recipe's.
    case contain
    /// Fills width × height exactly, the excess cropped away (see `Imaging.render`).
    case cover
}

/// The encoded format of a variant.
public enum OutputFormat: String, Sendable, Codable, CaseIterable {
    /// Baseline JPEG, sRGB-or-embedded-profile, no metadata markers.
    case jpeg
    /// Lossy WebP (libwebp), the source's ICC profile kept, no metadata; a quarter to a third
    /// smaller than a JPEG of the same quality setting.
    case webp

    /// The extension a variant of this format is stored under.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .webp: "webp"
        }
    }

    /// The MIME type it is served with.
    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .webp: "image/webp"
        }
    }
}

/// One named variant to render, as `pipeline.json` describes it.
public struct VariantRecipe: Sendable, Codable, Equatable {
    /// The variant's name (`thumb`, `preview`, `mobile`, `feed`); the key of stored crops.
    public var name: String
    /// How the picture fits the box.
    public var fit: Fit
    /// The box's width in pixels (at least 1).
    public var width: Int
    /// The box's height in pixels (at least 1).
    public var height: Int
    /// The encoded format.
    public var format: OutputFormat
    /// The encoder's quality, 1...100.
    public var quality: Int

    /// A recipe from its fields.
    public init(name: String, fit: Fit, width: Int, height: Int, format: OutputFormat = .jpeg, quality: Int) {
        self.name = name
        self.fit = fit
        self.width = width
        self.height = height
        self.format = format
        self.quality = quality
    }

    /// The app's default variants: thumb cover 320×320, preview contain 1024,
    /// mobile contain 2048 and feed cover 1080×1350 (4:5), as in the default `pipeline.json`.
    public static let defaults: [VariantRecipe] = [
        VariantRecipe(name: "thumb", fit: .cover, width: 320, height: 320, quality: 80),
        VariantRecipe(name: "preview", fit: .contain, width: 1024, height: 1024, quality: 82),
        VariantRecipe(name: "mobile", fit: .contain, width: 2048, height: 2048, quality: 85),
        VariantRecipe(name: "feed", fit: .cover, width: 1080, height: 1350, quality: 85),
    ]
}

/// An 8-bit sRGB colour, used as the background that transparency is flattened onto.
public struct RGB: Sendable, Codable, Equatable {
    /// Red, 0...255.
    public var r: UInt8
    /// Green, 0...255.
    public var g: UInt8
    /// Blue, 0...255.
    public var b: UInt8

    /// A colour from its components.
    public init(r: UInt8, g: UInt8, b: UInt8) {
        self.r = r
        self.g = g
        self.b = b
    }

    /// A colour from `#rrggbb` (the `#` is optional); throws `ImagingError.invalidColour` otherwise.
    public init(hex: String) throws {
        var digits = Substring(hex)
        if digits.hasPrefix("#") { digits = digits.dropFirst() }
        guard digits.count == 6, digits.allSatisfy(\.isHexDigit), let value = UInt32(digits, radix: 16) else {
            throw ImagingError.invalidColour(hex)
        }
        self.init(r: UInt8((value >> 16) & 0xFF), g: UInt8((value >> 8) & 0xFF), b: UInt8(value & 0xFF))
    }

    /// White, the default background.
    public static let white = RGB(r: 255, g: 255, b: 255)

    /// The colour as `#rrggbb`.
    public var hex: String {
        let value = (Int(r) << 16) | (Int(g) << 8) | Int(b)
        let text = String(value, radix: 16)
        return "#" + String(repeating: "0", count: 6 - text.count) + text
    }

    var packed: UInt32 { (UInt32(r) << 16) | (UInt32(g) << 8) | UInt32(b) }
}
