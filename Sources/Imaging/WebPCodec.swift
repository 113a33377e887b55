import CWebP

/// WebP variants through the CWebP layer (libwebp's lossy encoder; the source's ICC profile in
/// an ICCP chunk when it has one).
enum WebPCodec {
    static func encode(_ raster: Raster, quality: Int, iccProfile: [UInt8]?, variant: String) throws -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var length = 0
        let profile = iccProfile ?? []
        let code = profile.withUnsafeBufferPointer { icc in
            dr_webp_encode(raster.pixels, Int32(raster.width), Int32(raster.height), Int32(quality),
                           icc.baseAddress, icc.count, &out, &length)
        }
        guard code == Int32(DR_WEBP_OK.rawValue), let out else {
            let detail = code == Int32(DR_WEBP_MUX_FAILED.rawValue) ? "libwebp could not embed the colour profile" : "libwebp error \(code)"
            throw ImagingError.encodeFailed(variant: variant, detail: detail)
        }
        defer { dr_webp_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: length))
    }

    /// The width and height of a WebP file; nil when it is not one.
    static func size(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        var width: Int32 = 0, height: Int32 = 0
        let valid = bytes.withUnsafeBufferPointer { dr_webp_size($0.baseAddress, $0.count, &width, &height) }
        return valid != 0 ? (Int(width), Int(height)) : nil
    }
}
