import CJPEG

/// A raster fresh from a codec, with the colour profile it carried.
struct DecodedImage {
    let raster: Raster
    let iccProfile: [UInt8]?
    /// A CMYK JPEG's own samples (4 bytes a pixel), kept when asked for, to be converted through
    /// its CMYK profile; `raster` is then the decoder's approximation.
    var cmyk: (storage: PixelStorage, inverted: Bool)? = nil
}

extension DecodedImage {
    /// What a C decoder handed over: its 8-bit RGB buffer, adopted (no copy), and its ICC
    /// profile, copied and released with `free`. A missing buffer is an allocation that failed.
    init(pixels: UnsafeMutablePointer<UInt8>?, width: Int, height: Int,
         icc: UnsafeMutablePointer<UInt8>?, iccLength: Int, free: (UnsafeMutablePointer<UInt8>) -> Void) throws {
        guard let pixels else { throw ImagingError.outOfMemory(width: width, height: height) }
        raster = Raster(width: width, height: height, storage: PixelStorage(adopting: pixels, count: width * height * 3))
        cmyk = nil
        iccProfile = icc.map { icc in
            defer { free(icc) }
            return Array(UnsafeBufferPointer(start: icc, count: iccLength))
        }
    }
}

/// JPEG through the CJPEG shim (libjpeg-turbo); no libjpeg longjmp ever reaches Swift.
enum JPEGCodec {
    /// libjpeg's J_COLOR_SPACE values, for descriptions.
    private static let colourSpaceNames = [0: "unknown", 1: "grayscale", 2: "RGB", 3: "YCbCr", 4: "CMYK", 5: "YCCK"]

    /// The header, without decoding pixels.
    static func probe(_ bytes: [UInt8], pixelLimit: Int) throws -> ImageInfo {
        var info = dr_jpeg_info()
        var status = dr_jpeg_status()
        let code = bytes.withUnsafeBufferPointer { buffer in
            dr_jpeg_probe(buffer.baseAddress, buffer.count, UInt64(max(pixelLimit, 0)), &info, &status)
        }
        try check(code, status: &status, info: info, pixelLimit: pixelLimit)
        return imageInfo(info)
    }

    /// Decodes at scale `scaleNumerator`/8 to 8-bit RGB; with `keepCMYK`, a CMYK file's own
    /// samples are kept beside (see `DecodedImage.cmyk`).
    static func decode(_ bytes: [UInt8], scaleNumerator: Int, pixelLimit: Int, fast: Bool = false,
                       keepCMYK: Bool = false) throws -> (ImageInfo, DecodedImage) {
        var info = dr_jpeg_info()
        var image = dr_jpeg_image()
        var status = dr_jpeg_status()
        let code = bytes.withUnsafeBufferPointer { buffer in
            dr_jpeg_decode(
                buffer.baseAddress, buffer.count, Int32(scaleNumerator), UInt64(max(pixelLimit, 0)), fast ? 1 : 0,
                keepCMYK ? 1 : 0, &info, &image, &status)
        }
        try check(code, status: &status, info: info, pixelLimit: pixelLimit)
        var decoded = try DecodedImage(pixels: image.pixels, width: Int(image.width), height: Int(image.height),
                                       icc: image.icc, iccLength: Int(image.icc_length), free: { dr_jpeg_free($0) })
        if let samples = image.cmyk {
            decoded.cmyk = (PixelStorage(adopting: samples, count: Int(image.width) * Int(image.height) * 4), image.cmyk_inverted != 0)
        }
        return (imageInfo(info), decoded)
    }

    /// Whether scaled decodes here run the AVX2 builds of libjpeg-turbo's 3x3, 5x5, 6x6 and 10x10
    /// inverse DCTs.
    static var hasAVX2InverseDCT: Bool { dr_jpeg_avx2_idct_available() != 0 }

    /// Runs `body` with this thread's decodes and encodes on libjpeg-turbo's own transforms (the
    /// inverse DCTs, the forward DCT and quantisation), for comparison with the AVX2 builds.
    static func withLibraryTransforms<T>(_ body: () throws -> T) rethrows -> T {
        dr_jpeg_prefer_library_transforms(1)
        defer { dr_jpeg_prefer_library_transforms(0) }
        return try body()
    }

    /// Runs `blocks` generated sample blocks of each component of an encoder at `quality` (with
    /// `randomTables`, tables drawn from `seed`) through the library's and the AVX2 forward DCT and
    /// quantisation: how many came out differently; nil where the AVX2 one cannot serve (no AVX2).
    static func forwardDCTMismatches(quality: Int, seed: UInt32, blocks: Int, randomTables: Bool) throws -> Int? {
        var status = dr_jpeg_status()
        let mismatches = dr_jpeg_fdct_mismatches(Int32(quality), seed, blocks, randomTables ? 1 : 0, &status)
        try check(status.code, status: &status, info: dr_jpeg_info(), pixelLimit: 0)
        return mismatches < 0 ? nil : mismatches
    }

    /// Runs `blocks` generated coefficient blocks through the library's and the AVX2 inverse DCT of
    /// each component of `bytes` decoded at `scaleNumerator`/8: how many came out differently, and over
    /// how many components; nil when no component has an AVX2 build here.
    static func inverseDCTMismatches(_ bytes: [UInt8], scaleNumerator: Int, seed: UInt32, blocks: Int) throws
        -> (mismatches: Int, components: Int)?
    {
        var status = dr_jpeg_status()
        var components: Int32 = 0
        let mismatches = bytes.withUnsafeBufferPointer { buffer in
            dr_jpeg_idct_mismatches(buffer.baseAddress, buffer.count, Int32(scaleNumerator), seed, blocks, &components, &status)
        }
        try check(status.code, status: &status, info: dr_jpeg_info(), pixelLimit: 0)
        return mismatches < 0 ? nil : (mismatches, Int(components))
    }

    /// Encodes a raster as a JPEG carrying nothing but the pixels and, when given, the ICC profile.
    static func encode(
        _ raster: Raster, quality: Int, iccProfile: [UInt8]?, progressive: Bool, optimize: Bool, variant: String
    ) throws -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var length: UInt = 0
        var status = dr_jpeg_status()
        let code: Int32
        if let iccProfile, !iccProfile.isEmpty {
            code = iccProfile.withUnsafeBufferPointer { icc in
                dr_jpeg_encode(
                    raster.pixels, Int32(raster.width), Int32(raster.height), raster.rowBytes, Int32(quality),
                    progressive ? 1 : 0, optimize ? 1 : 0, icc.baseAddress, UInt32(icc.count), &out, &length, &status)
            }
        } else {
            code = dr_jpeg_encode(
                raster.pixels, Int32(raster.width), Int32(raster.height), raster.rowBytes, Int32(quality),
                progressive ? 1 : 0, optimize ? 1 : 0, nil, 0, &out, &length, &status)
        }
        guard code == Int32(DR_JPEG_OK.rawValue), let out else {
            throw ImagingError.encodeFailed(variant: variant, detail: message(&status, fallback: "libjpeg error \(code)"))
        }
        defer { dr_jpeg_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    private static func check(_ code: Int32, status: inout dr_jpeg_status, info: dr_jpeg_info, pixelLimit: Int) throws {
        let width = Int(info.width), height = Int(info.height)
        switch UInt32(bitPattern: code) {
        case DR_JPEG_OK.rawValue:
            return
        case DR_JPEG_TRUNCATED.rawValue:
            throw ImagingError.truncated(format: .jpeg, detail: "premature end of JPEG data")
        case DR_JPEG_TOO_MANY_PIXELS.rawValue:
            throw ImagingError.tooManyPixels(width: width, height: height, limit: pixelLimit)
        case DR_JPEG_ZERO_SIZE.rawValue:
            throw ImagingError.zeroSize(width: width, height: height)
        case DR_JPEG_UNSUPPORTED_PRECISION.rawValue:
            throw ImagingError.unsupportedPrecision(bits: Int(info.precision))
        case DR_JPEG_NO_MEMORY.rawValue:
            throw ImagingError.outOfMemory(width: width, height: height)
        case DR_JPEG_PAST_DEADLINE.rawValue:
            throw ImagingError.pastDeadline
        case DR_JPEG_OVER_MEMORY_CEILING.rawValue:
            throw ImagingError.overMemoryCeiling(detail: message(&status, fallback: "a progressive JPEG of \(width)×\(height) pixels needs too much memory"))
        default:
            throw ImagingError.corrupt(format: .jpeg, detail: message(&status, fallback: "libjpeg error \(code)"))
        }
    }

    private static func message(_ status: inout dr_jpeg_status, fallback: String) -> String {
        let text = withUnsafeBytes(of: &status.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return text.isEmpty ? fallback : text
    }

    private static func imageInfo(_ info: dr_jpeg_info) -> ImageInfo {
        var parts = [colourSpaceNames[Int(info.color_space)] ?? "colour space \(info.color_space)"]
        parts.append("\(info.precision)-bit")
        if info.progressive != 0 { parts.append("progressive") }
        if info.arithmetic != 0 { parts.append("arithmetic") }
        if info.adobe_marker != 0 && info.components == 4 { parts.append("Adobe") }
        return ImageInfo(
            format: .jpeg, width: Int(info.width), height: Int(info.height),
            colorDescription: parts.joined(separator: " "), hasICCProfile: info.has_icc != 0)
    }
}
