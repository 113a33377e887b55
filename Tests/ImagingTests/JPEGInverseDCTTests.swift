import Foundation
import Testing
@testable import Imaging

/// Decodes at 3/8, 5/8 and 6/8 run AVX2 builds of libjpeg-turbo's 3x3, 5x5, 6x6, 10x10 and 12x12
/// inverse DCTs (CJPEG/idct.c), which must give the library's output bit for bit.
@Suite("JPEG inverse DCT")
struct JPEGInverseDCTTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("samples")

    /// The bundled samples and every corpus JPEG: baseline and progressive, 4:2:0, 4:2:2, 4:4:4,
    /// grayscale and CMYK, with restart markers and without.
    static func photos() throws -> [(name: String, bytes: [UInt8])] {
        var photos: [(String, [UInt8])] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.samples.path).sorted() where name.lowercased().hasSuffix(".jpg") {
            photos.append(("samples/\(name)", try [UInt8](Data(contentsOf: Self.samples.appendingPathComponent(name)))))
        }
        for path in Corpus.imageFiles() where path.hasPrefix("jpeg/") && [".jpg", ".jpeg"].contains(where: path.lowercased().hasSuffix) {
            photos.append((path, try Corpus.bytes(path)))
        }
        return photos
    }

    /// The scales whose transforms have AVX2 builds: 3/8 (3x3, and 6x6 for 4:2:0 chroma), 5/8 (5x5
    /// and 10x10), 6/8 (6x6 for full-resolution components, 12x12 for 4:2:0 chroma).
    static let scales = [3, 5, 6]

    @Test("a decode at 3/8, 5/8 or 6/8 with the AVX2 inverse DCTs is byte for byte the library's", arguments: scales)
    func wholeDecodes(scale: Int) throws {
        var compared = 0, withAVX2 = 0
        for photo in try Self.photos() {
            // A file libjpeg refuses is refused either way; that is the decoding tests' concern.
            guard let (_, library) = try? JPEGCodec.withLibraryTransforms({
                try JPEGCodec.decode(photo.bytes, scaleNumerator: scale, pixelLimit: 100_000_000)
            }) else { continue }
            let (_, chosen) = try JPEGCodec.decode(photo.bytes, scaleNumerator: scale, pixelLimit: 100_000_000)
            let a = chosen.raster, b = library.raster
            #expect(a.width == b.width && a.height == b.height, "\(photo.name)")
            let count = b.width * b.height * 3
            #expect(memcmp(a.pixels, b.pixels, count) == 0, "\(photo.name) at \(scale)/8: the decodes differ")
            compared += 1
            if (try? JPEGCodec.inverseDCTMismatches(photo.bytes, scaleNumerator: scale, seed: 1, blocks: 0)) != nil { withAVX2 += 1 }
        }
        #expect(compared >= 4)
        if JPEGCodec.hasAVX2InverseDCT {
            #expect(withAVX2 >= 4, "only \(withAVX2) of \(compared) photos had a component at an AVX2 transform's size")
        }
    }

    @Test("generated blocks, hostile ones and random quantisation tables among them, come out as the library's",
          .enabled(if: JPEGCodec.hasAVX2InverseDCT, "this processor has no AVX2: decodes use libjpeg-turbo's own transforms"),
          arguments: scales)
    func generatedBlocks(scale: Int) throws {
        // 4:2:0 (hopper: chroma at twice the luma's transform size) and 4:2:2 (the Canon: one size)
        // from the bundled samples; with the corpus, grayscale and libjpeg-turbo's own test image too.
        var files: [(name: String, bytes: [UInt8])] = try ["hopper.jpg", "Canon_EOS5D-MIII__K6A7944.JPG"].map {
            ("samples/\($0)", try [UInt8](Data(contentsOf: Self.samples.appendingPathComponent($0))))
        }
        if Corpus.isAvailable {
            for path in ["jpeg/pillow/hopper_gray.jpg", "jpeg/libjpeg-turbo/testorig.jpg"] { files.append((path, try Corpus.bytes(path))) }
        }
        for (index, file) in files.enumerated() {
            // Every file's full-resolution components are at an AVX2 transform's size at these scales.
            let result = try #require(
                try JPEGCodec.inverseDCTMismatches(file.bytes, scaleNumerator: scale, seed: UInt32(index + 7), blocks: 100_000),
                "\(file.name) at \(scale)/8: no component at an AVX2 transform's size")
            #expect(result.components >= 1)
            #expect(result.mismatches == 0, "\(file.name) at \(scale)/8: \(result.mismatches) blocks differ")
        }
    }

    @Test("a decode at another scale is untouched by the switch")
    func otherScales() throws {
        let bytes = try [UInt8](Data(contentsOf: Self.samples.appendingPathComponent("hopper.jpg")))
        for scale in [1, 2, 4, 7, 8] {
            #expect(try JPEGCodec.inverseDCTMismatches(bytes, scaleNumerator: scale, seed: 1, blocks: 10) == nil, "scale \(scale)/8")
        }
    }
}
