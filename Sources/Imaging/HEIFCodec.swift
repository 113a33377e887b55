import CHEIF

/// HEIC, HEIF and AVIF through the CHEIF layer (libheif with its HEVC and AV1 decoders).
///
/// The primary image only (a motion photo's video and other top-level images are ignored);
/// its width and height are the displayed size, with the container's `irot`/`imir`/`clap`
/// applied by libheif, so the EXIF Orientation beside them is never applied again. libheif
/// cannot decode at a reduced scale, so the full image is decoded and the variants resampled
/// from it. 10- and 12-bit images are reduced to 8 bits by libheif, except HDR ones (an `nclx`
/// box with the PQ or HLG transfer and BT.2020 or P3 primaries, no ICC profile): those are
/// decoded at their depth and tone-mapped to SDR sRGB (ITU-R BT.2390's EETF, see
/// `dr_hdr_to_sdr` in CHEIF), so their variants carry no profile and are not grey.
enum HEIFCodec {
    /// The primary image's header, without decoding pixels.
    static func probe(_ bytes: [UInt8], format: ImageFormat, pixelLimit: Int) throws -> ImageInfo {
        var info = dr_heif_info()
        var status = dr_heif_status()
        let code = bytes.withUnsafeBufferPointer { buffer in
            dr_heif_probe(buffer.baseAddress, buffer.count, UInt64(max(pixelLimit, 0)), &info, &status)
        }
        try check(code, format: format, status: &status, info: info, pixelLimit: pixelLimit)
        return imageInfo(info, format: format)
    }

    /// Decodes the primary image, upright, to 8-bit RGB.
    static func decode(_ bytes: [UInt8], format: ImageFormat, pixelLimit: Int) throws -> (ImageInfo, DecodedImage) {
        var info = dr_heif_info()
        var image = dr_heif_image()
        var status = dr_heif_status()
        let code = bytes.withUnsafeBufferPointer { buffer in
            dr_heif_decode(buffer.baseAddress, buffer.count, UInt64(max(pixelLimit, 0)), &info, &image, &status)
        }
        try check(code, format: format, status: &status, info: info, pixelLimit: pixelLimit)
        let decoded = try DecodedImage(pixels: image.pixels, width: Int(image.width), height: Int(image.height),
                                       icc: image.icc, iccLength: Int(image.icc_length), free: { dr_heif_free($0) })
        return (imageInfo(info, format: format), decoded)
    }

    private static func check(_ code: Int32, format: ImageFormat, status: inout dr_heif_status, info: dr_heif_info, pixelLimit: Int) throws {
        let width = Int(info.width), height = Int(info.height)
        let text = withUnsafeBytes(of: &status.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        switch UInt32(bitPattern: code) {
        case DR_HEIF_OK.rawValue:
            return
        case DR_HEIF_TRUNCATED.rawValue:
            throw ImagingError.truncated(format: format, detail: text.isEmpty ? "end of data" : text)
        case DR_HEIF_TOO_MANY_PIXELS.rawValue:
            throw ImagingError.tooManyPixels(width: width, height: height, limit: pixelLimit)
        case DR_HEIF_ZERO_SIZE.rawValue:
            throw ImagingError.zeroSize(width: width, height: height)
        case DR_HEIF_NO_MEMORY.rawValue:
            throw ImagingError.outOfMemory(width: width, height: height)
        case DR_HEIF_PAST_DEADLINE.rawValue:
            throw ImagingError.pastDeadline
        case DR_HEIF_UNSUPPORTED.rawValue:
            throw ImagingError.notAnImage(looksLike: "a \(format.rawValue.uppercased()) file whose coding this build cannot decode: \(text)")
        default:
            throw ImagingError.corrupt(format: format, detail: text.isEmpty ? "libheif error \(code)" : text)
        }
    }

    private static func imageInfo(_ info: dr_heif_info, format: ImageFormat) -> ImageInfo {
        var parts = ["\(info.luma_bits)-bit"]
        if info.has_alpha != 0 { parts.append("alpha") }
        if info.color_profile == 2 { parts.append("nclx colour") }
        if info.hdr != 0 { parts.append("\(info.transfer == DR_HDR_HLG ? "HLG" : "PQ") HDR, tone-mapped to SDR") }
        if info.image_count > 1 { parts.append("\(info.image_count) images, primary read") }
        return ImageInfo(format: format, width: Int(info.width), height: Int(info.height),
                         colorDescription: parts.joined(separator: " "), hasICCProfile: info.color_profile == 1)
    }
}
