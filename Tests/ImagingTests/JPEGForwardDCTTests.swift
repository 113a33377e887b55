import Foundation
import Testing
@testable import Imaging

/// Encodes run an AVX2 build of libjpeg-turbo's forward DCT and quantisation (CJPEG/fdct.c),
/// which must give the library's coefficients bit for bit, and so the same file.
@Suite("JPEG forward DCT")
struct JPEGForwardDCTTests {
    /// Whether this processor takes the AVX2 build (it needs nothing else of the library).
    static let available = (try? JPEGCodec.forwardDCTMismatches(quality: 85, seed: 1, blocks: 0, randomTables: false)) != nil

    /// Every bundled sample and corpus JPEG, decoded at 3/8 and encoded at the variants'
    /// qualities, and seeded noise at qualities from 1 to 100 (tables of 255s to tables of 1s) and
    /// sizes that end within a block: each encode the same bytes both ways.
    @Test("an encode with the AVX2 forward DCT is byte for byte the library's")
    func wholeEncodes() throws {
        var rasters: [(name: String, raster: Raster)] = []
        for photo in try JPEGInverseDCTTests.photos() {
            guard let (_, decoded) = try? JPEGCodec.decode(photo.bytes, scaleNumerator: 3, pixelLimit: 100_000_000) else { continue }
            rasters.append((photo.name, decoded.raster))
        }
        #expect(rasters.count >= 4)
        var seed: UInt64 = 0x2545_F491_4F6C_DD1D
        for (width, height) in [(1, 1), (7, 9), (17, 13), (320, 320), (333, 250)] {
            let raster = try Raster(width: width, height: height)
            for i in 0..<(width * height * 3) {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                raster.pixels[i] = UInt8(truncatingIfNeeded: seed >> 56)
            }
            rasters.append(("noise \(width)×\(height)", raster))
        }
        for (index, item) in rasters.enumerated() {
            let qualities = item.name.hasPrefix("noise") ? [1, 10, 50, 82, 95, 100] : [80, 85]
            for quality in qualities {
                let progressive = index % 3 == 0
                let library = try JPEGCodec.withLibraryTransforms {
                    try JPEGCodec.encode(item.raster, quality: quality, iccProfile: nil, progressive: progressive, optimize: false,
                                         variant: "test")
                }
                let chosen = try JPEGCodec.encode(item.raster, quality: quality, iccProfile: nil, progressive: progressive,
                                                  optimize: false, variant: "test")
                // Compared first: on a failure, #expect would diff two encodes byte by byte.
                let same = chosen == library
                #expect(same, "\(item.name) at quality \(quality): the encodes differ (\(chosen.count) against \(library.count) bytes)")
            }
        }
    }

    /// The whole-encode test cannot tell the AVX2 build from the library's when the install's
    /// check turned it away; this one runs both over 100,000 blocks a table set, directly.
    @Test("generated blocks, the extremes among them, under the standard and random tables, come out as the library's",
          .enabled(if: available, "this processor has no AVX2: encodes use libjpeg-turbo's own method"),
          arguments: [(80, false), (100, false), (1, false), (85, true), (50, true)])
    func generatedBlocks(quality: Int, randomTables: Bool) throws {
        let mismatches = try #require(
            try JPEGCodec.forwardDCTMismatches(quality: quality, seed: UInt32(quality) &+ (randomTables ? 991 : 0),
                                               blocks: 100_000, randomTables: randomTables))
        #expect(mismatches == 0, "quality \(quality)\(randomTables ? ", random tables" : ""): \(mismatches) blocks differ")
    }
}
