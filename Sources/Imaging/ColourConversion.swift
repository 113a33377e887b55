import CColour

/// Conversion of a decoded picture to sRGB through its embedded ICC profile (lcms2).
enum ColourConversion {
    /// Whether `profile` describes sRGB itself (primaries, white and tone curves), so that
    /// converting would change nothing.
    static func isSRGB(_ profile: [UInt8]) -> Bool {
        profile.withUnsafeBufferPointer { dr_colour_is_srgb($0.baseAddress, $0.count) } != 0
    }

    /// Converts `raster` in place from the space of `profile` to sRGB; false, the pixels
    /// untouched, when the profile cannot be used (not an RGB profile, unreadable).
    static func toSRGB(_ raster: Raster, from profile: [UInt8]) -> Bool {
        let code = profile.withUnsafeBufferPointer { icc in
            dr_colour_to_srgb(raster.pixels, raster.width * raster.height, icc.baseAddress, icc.count)
        }
        return code == Int32(DR_COLOUR_OK.rawValue)
    }
}
