import Testing
@testable import Imaging

/// JPEG: colour spaces and codings decode to the same picture.
@Suite("JPEG decoding")
struct JPEGDecodeTests {
    @Test("Adobe CMYK decodes to the colours of the RGB version of the same picture", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"))
    func cmyk() throws {
        let cmyk = try Pixels.decode(try Corpus.bytes("jpeg/pillow/pil_sample_cmyk.jpg"))
        let rgb = try Pixels.decode(try Corpus.bytes("jpeg/pillow/pil_sample_rgb.jpg"))
        // Measured 4.7 levels (two lossy encodings of one picture); reading Adobe's inverted CMYK
        // the wrong way round would invert every colour, which the negative below shows is far off.
        #expect(Pixels.meanAbsoluteDifference(cmyk, rgb) < 10)
        let inverted = try Raster(width: cmyk.width, height: cmyk.height)
        for i in 0..<(cmyk.width * cmyk.height * 3) { inverted.pixels[i] = 255 - cmyk.pixels[i] }
        #expect(Pixels.meanAbsoluteDifference(inverted, rgb) > 50)
    }

    @Test("arithmetic-coded, progressive and baseline codings of one picture decode alike", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"))
    func codings() throws {
        let baseline = try Pixels.decode(try Corpus.bytes("jpeg/libjpeg-turbo/testorig.jpg"))
        for path in ["jpeg/libjpeg-turbo/testimgari.jpg", "jpeg/libjpeg-turbo/testimgint.jpg"] {
            let other = try Pixels.decode(try Corpus.bytes(path))
            // Measured 0.3 levels: the same coefficients, rounded differently by the IDCT paths.
            #expect(Pixels.meanAbsoluteDifference(baseline, other) < 1, "\(path)")
        }
    }

    @Test("grayscale JPEG renders as neutral RGB", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"))
    func grayscale() throws {
        let bytes = try Corpus.bytes("jpeg/pillow/hopper_gray.jpg")
        #expect(try Imaging.probe(bytes).colorDescription == "grayscale 8-bit")
        let raster = try Pixels.decode(bytes)
        for i in stride(from: 0, to: raster.width * raster.height * 3, by: 3) {
            #expect(raster.pixels[i] == raster.pixels[i + 1] && raster.pixels[i] == raster.pixels[i + 2])
        }
    }
}
