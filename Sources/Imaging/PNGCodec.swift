import CPNG

/// PNG through the CPNG shim (libpng); no libpng longjmp ever reaches Swift.
enum PNGCodec {
    private static let colourTypeNames = [0: "gray", 2: "RGB", 3: "palette", 4: "gray+alpha", 6: "RGBA"]

    /// The largest width or height PNG allows (2^31 - 1).
    static let dimensionMax = Int(Int32.max)

    /// The width and height IHDR claims, read as the unsigned numbers they are (the C layer's
    /// `int` fields say -1 past 2^31 - 1); nil when the file is too short to hold them.
    static func headerSize(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        guard bytes.count >= 24 else { return nil }
        func be32(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        return (be32(16), be32(20))
    }

    /// Refuses a header whose size PNG itself does not allow, naming it.
    private static func checkHeader(_ bytes: [UInt8]) throws {
        guard let (width, height) = headerSize(bytes), width > dimensionMax || height > dimensionMax else { return }
        throw ImagingError.corrupt(format: .png, detail: "the header claims \(width)×\(height) pixels, "
                                   + "more than PNG allows (\(dimensionMax) a side): the file is damaged or not a photo")
    }

    /// The chunks before the image data, without decoding pixels.
    static func probe(_ bytes: [UInt8], pixelLimit: Int) throws -> ImageInfo {
        try checkHeader(bytes)
        var info = dr_png_info()
        var status = dr_png_status()
        let code = bytes.withUnsafeBufferPointer { buffer in
            dr_png_probe(buffer.baseAddress, buffer.count, UInt64(max(pixelLimit, 0)), &info, &status)
        }
        try check(code, status: &status, info: info, pixelLimit: pixelLimit)
        return imageInfo(info)
    }

    /// Decodes to 8-bit RGB, transparency flattened on `background`.
    static func decode(_ bytes: [UInt8], pixelLimit: Int, background: RGB) throws -> (ImageInfo, DecodedImage) {
        try checkHeader(bytes)
        var info = dr_png_info()
        var image = dr_png_image()
        var status = dr_png_status()
        let code = bytes.withUnsafeBufferPointer { buffer in
            dr_png_decode(buffer.baseAddress, buffer.count, UInt64(max(pixelLimit, 0)), background.packed, &info, &image, &status)
        }
        try check(code, status: &status, info: info, pixelLimit: pixelLimit)
        let decoded = try DecodedImage(pixels: image.pixels, width: Int(image.width), height: Int(image.height),
                                       icc: image.icc, iccLength: Int(image.icc_length), free: { dr_png_free($0) })
        return (imageInfo(info), decoded)
    }

    private static func check(_ code: Int32, status: inout dr_png_status, info: dr_png_info, pixelLimit: Int) throws {
        let width = Int(info.width), height = Int(info.height)
        switch UInt32(bitPattern: code) {
        case DR_PNG_OK.rawValue:
            return
        case DR_PNG_TRUNCATED.rawValue:
            throw ImagingError.truncated(format: .png, detail: "premature end of PNG data")
        case DR_PNG_TOO_MANY_PIXELS.rawValue:
            throw ImagingError.tooManyPixels(width: width, height: height, limit: pixelLimit)
        case DR_PNG_ZERO_SIZE.rawValue:
            throw ImagingError.zeroSize(width: width, height: height)
        case DR_PNG_NO_MEMORY.rawValue:
            throw ImagingError.outOfMemory(width: width, height: height)
        case DR_PNG_PAST_DEADLINE.rawValue:
            throw ImagingError.pastDeadline
        default:
            let text = withUnsafeBytes(of: &status.message) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            throw ImagingError.corrupt(format: .png, detail: text.isEmpty ? "libpng error \(code)" : text)
        }
    }

    private static func imageInfo(_ info: dr_png_info) -> ImageInfo {
        var parts = [colourTypeNames[Int(info.color_type)] ?? "colour type \(info.color_type)", "\(info.bit_depth)-bit"]
        if info.interlaced != 0 { parts.append("interlaced") }
        return ImageInfo(
            format: .png, width: Int(info.width), height: Int(info.height),
            colorDescription: parts.joined(separator: " "), hasICCProfile: info.has_icc != 0)
    }
}
