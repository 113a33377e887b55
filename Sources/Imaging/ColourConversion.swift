import CColour

/// Conversion of a decoded picture to sRGB through its embedded ICC profile (lcms2).
enum ColourConversion {
    /// Whether `profile` describes sRGB itself (primaries, white and tone curves), so that
    /// converting would change nothing.
    static func isSRGB(_ profile: [UInt8]) -> Bool {
        profile.withUnsafeBufferPointer { dr_colour_is_srgb($0.baseAddress, $0.count) } != 0
    }

    /// Writes into `raster` the sRGB of CMYK `samples` (4 bytes a pixel, as many as the raster's
    /// pixels; `inverted` when 255 means no ink) converted through the CMYK `profile`; false,
    /// the raster untouched, when the profile cannot be used.
    static func cmykToSRGB(_ samples: PixelStorage, inverted: Bool, into raster: Raster, from profile: [UInt8]) -> Bool {
        guard samples.count >= raster.width * raster.height * 4 else { return false }
        let code = profile.withUnsafeBufferPointer { icc in
            dr_colour_cmyk_to_srgb(samples.base, inverted ? 1 : 0, raster.pixels, raster.width * raster.height, icc.baseAddress, icc.count)
        }
        return code == Int32(DR_COLOUR_OK.rawValue)
    }

    /// Converts `raster` in place from the space of `profile` to sRGB; false, the pixels
    /// untouched, when the profile cannot be used (not an RGB profile, unreadable). A
    /// matrix-shaper profile (Display P3, Adobe RGB: what phones and cameras embed) takes a path
    /// of two tables and integer arithmetic, any other goes through lcms2's pipeline.
    static func toSRGB(_ raster: Raster, from profile: [UInt8]) -> Bool {
        let code = profile.withUnsafeBufferPointer { icc in
            dr_colour_to_srgb(raster.pixels, raster.width * raster.height, icc.baseAddress, icc.count)
        }
        return code == Int32(DR_COLOUR_OK.rawValue)
    }

    /// The same conversion through lcms2's pipeline whatever the profile: the reference that the
    /// matrix-shaper path is tested against.
    static func toSRGBThroughLCMS(_ raster: Raster, from profile: [UInt8]) -> Bool {
        let code = profile.withUnsafeBufferPointer { icc in
            dr_colour_to_srgb_lcms(raster.pixels, raster.width * raster.height, icc.baseAddress, icc.count)
        }
        return code == Int32(DR_COLOUR_OK.rawValue)
    }
}
