import Foundation

/// How good a picture is as a moment's cover, in 0...1, with the parts it is made of.
///
/// The score is a weighted mean of four parts, each in 0...1:
/// - **sharpness** (weight 0.40): as the imaging module measures it;
/// - **exposure** (0.30): `(1 - 2·|meanLuma - 0.5|) · (1 - clipped / 0.25)`, best for a mean
///   luma at mid-grey and no clipping; a quarter of the pixels clipped scores 0;
/// - **resolution** (0.15): megapixels over 4, saturating at 1 (twice the `mobile` variant);
/// - **aspect fit** (0.15): the share of the picture a crop to the feed aspect keeps
///   (1 for a 4:5 portrait at the default 4:5 feed, 0.6 for a 4:3 landscape).
public struct CoverScore: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The weighted score, 0...1: what `PhotoFacts.coverScore` holds.
    public var value: Double
    /// The sharpness part, 0...1.
    public var sharpness: Double
    /// The exposure part, 0...1.
    public var exposure: Double
    /// The resolution part, 0...1.
    public var resolution: Double
    /// The aspect-fit part, 0...1.
    public var aspectFit: Double

    /// The weights and saturation points of the score.
    public struct Weights: Sendable, Hashable, Codable {
        /// Weight of sharpness.
        public var sharpness: Double
        /// Weight of exposure.
        public var exposure: Double
        /// Weight of resolution.
        public var resolution: Double
        /// Weight of the fit to the feed aspect.
        public var aspectFit: Double
        /// Megapixels at which the resolution part reaches 1.
        public var fullResolutionMegapixels: Double
        /// Clipped fraction of pixels at which the exposure part reaches 0.
        public var clippingLimit: Double

        /// The documented weights (see `CoverScore`).
        public static let `default` = Weights(sharpness: 0.4, exposure: 0.3, resolution: 0.15, aspectFit: 0.15,
                                              fullResolutionMegapixels: 4, clippingLimit: 0.25)

        /// Weights from their values.
        public init(sharpness: Double, exposure: Double, resolution: Double, aspectFit: Double,
                    fullResolutionMegapixels: Double, clippingLimit: Double) {
            self.sharpness = sharpness
            self.exposure = exposure
            self.resolution = resolution
            self.aspectFit = aspectFit
            self.fullResolutionMegapixels = fullResolutionMegapixels
            self.clippingLimit = clippingLimit
        }
    }

    /// The score of a picture from what the imaging module measured.
    /// - Parameters:
    ///   - sharpness: 0...1 (values outside are clamped, NaN counts as 0).
    ///   - meanLuma: mean luma, 0 (black) ... 1 (white).
    ///   - clippedFraction: fraction of pixels clipped to black or white, 0...1.
    ///   - width: displayed width in pixels.
    ///   - height: displayed height in pixels.
    ///   - feedAspect: the feed picture's width / height (4:5 = 0.8 by default).
    ///   - weights: the weights to use.
    public static func score(sharpness: Double, meanLuma: Double, clippedFraction: Double,
                             width: Int, height: Int, feedAspect: Double = 4.0 / 5.0,
                             weights: Weights = .default) -> CoverScore {
        let sharp = unit(sharpness)
        let luma = 1 - 2 * abs(unit(meanLuma) - 0.5)
        let clipping = 1 - unit(unit(clippedFraction) / max(weights.clippingLimit, .leastNonzeroMagnitude))
        let exposure = luma * clipping
        var resolution = 0.0, fit = 0.0
        if width > 0, height > 0 {
            let megapixels = Double(width) * Double(height) / 1_000_000
            resolution = unit(megapixels / max(weights.fullResolutionMegapixels, .leastNonzeroMagnitude))
            let aspect = Double(width) / Double(height)
            if feedAspect.isFinite, feedAspect > 0 { fit = min(aspect, feedAspect) / max(aspect, feedAspect) }
        }
        let total = weights.sharpness + weights.exposure + weights.resolution + weights.aspectFit
        let weighted = weights.sharpness * sharp + weights.exposure * exposure
            + weights.resolution * resolution + weights.aspectFit * fit
        let value = total > 0 ? unit(weighted / total) : 0
        return CoverScore(value: value, sharpness: sharp, exposure: exposure, resolution: resolution, aspectFit: fit)
    }

    /// "0.82 (sharpness 0.90, exposure 0.80, resolution 1.00, aspect fit 0.94)".
    public var description: String {
        "\(twoDecimals(value)) (sharpness \(twoDecimals(sharpness)), exposure \(twoDecimals(exposure)), "
            + "resolution \(twoDecimals(resolution)), aspect fit \(twoDecimals(aspectFit)))"
    }

    /// Clamps to 0...1, NaN to 0.
    static func unit(_ x: Double) -> Double { x.isNaN ? 0 : min(1, max(0, x)) }
}

/// Two decimals, for reasons and descriptions.
func twoDecimals(_ x: Double) -> String { String(format: "%.2f", x) }
