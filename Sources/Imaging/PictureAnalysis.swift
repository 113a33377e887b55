import CResample

/// Measures taken from the small analysis copy of a picture: the statistics the cover policy
/// scores, and the per-pixel interest that places attention crops.
enum PictureAnalysis {
    /// Weight of colour saturation (max - min of R, G, B) in the attention score, relative to edges.
    static let saturationWeight: Float = DR_SALIENCY_SATURATION_WEIGHT
    /// Score that a skin-toned pixel adds (skin draws the eye in portraits and groups).
    static let skinScore: Float = DR_SALIENCY_SKIN_SCORE
    /// Saturation below this (0...255) adds nothing: greys and pastels are not interesting.
    static let saturationFloor: Float = DR_SALIENCY_SATURATION_FLOOR

    /// Sharpness, mean luma and clipping of an RGB raster (the sums in CResample's
    /// `dr_luma_statistics`, four partial sums each).
    /// `luma`: the raster's `luma(of:)`, when the caller has it already.
    static func statistics(of raster: Raster, luma: [Float]? = nil) -> PictureStatistics {
        let width = raster.width, height = raster.height, count = width * height
        guard count > 0 else { return PictureStatistics(sharpness: 0, meanLuma: 0, clippedFraction: 0) }
        let luma = luma ?? Self.luma(of: raster)
        var sums = dr_luma_statistics_t()
        dr_luma_statistics(luma, Int32(width), Int32(height), Float(PictureStatistics.clipMargin),
                           Float(255 - PictureStatistics.clipMargin), &sums)
        let sum = sums.sum, clipped = Int(sums.clipped), samples = Int(sums.samples)
        // Variance of the 4-neighbour Laplacian over interior pixels.
        var variance = 0.0
        if samples > 0 {
            let mean = sums.laplacian_sum / Double(samples)
            variance = max(0, sums.laplacian_squares / Double(samples) - mean * mean)
        }
        return PictureStatistics(
            sharpness: variance / (variance + PictureStatistics.sharpnessHalfPoint),
            meanLuma: sum / Double(count) / 255,
            clippedFraction: Double(clipped) / Double(count))
    }

    /// Per-pixel interest: edge energy (|Laplacian| of luma), saturation above a floor, and skin
    /// tones (`dr_saliency` in CResample, whose header holds the weights these constants read).
    /// `luma`: the raster's `luma(of:)`, when the caller has it already.
    static func saliency(of raster: Raster, luma: [Float]? = nil) -> [Float] {
        let width = raster.width, height = raster.height, count = width * height
        guard count > 0 else { return [] }
        let luma = luma ?? Self.luma(of: raster)
        return [Float](unsafeUninitializedCapacity: count) { scores, initialised in
            dr_saliency(raster.pixels, luma, Int32(width), Int32(height), scores.baseAddress)
            initialised = count
        }
    }

    /// The raster's luma (`fillLuma`), made once by a render for both the statistics and the
    /// attention map.
    static func luma(of raster: Raster) -> [Float] {
        let count = raster.width * raster.height
        return [Float](unsafeUninitializedCapacity: count) { luma, initialised in
            if let base = luma.baseAddress { fillLuma(raster, into: base) }
            initialised = count
        }
    }

    /// Rec. 601 luma, 0...255 (`dr_luma`: 0.299 R + 0.587 G + 0.114 B in Float, in that order).
    static func fillLuma(_ raster: Raster, into luma: UnsafeMutablePointer<Float>) {
        dr_luma(raster.pixels, raster.width * raster.height, luma)
    }
}
