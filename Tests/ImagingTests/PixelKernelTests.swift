import SeededRandom
import Testing
@testable import Imaging

/// The box reduction and the transpose (CResample's reduce.c) against plain scalar Swift, byte for
/// byte, on noise of many sizes: the AVX2 build where the processor has it and the baseline one.
@Suite("PixelKernels")
struct PixelKernelTests {
    /// Sizes at the awkward edges: single pixels, odd and even sizes, and the multiples of 8, 16
    /// and 32 the vector loops step by, each with its neighbours.
    static let sides = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 47, 48, 49, 63, 64, 65]
    static let largeSizes = [(1024, 768), (1023, 767), (1, 300), (300, 1), (2, 301), (301, 2)]

    static func noise(width: Int, height: Int, seed: UInt64) throws -> Raster {
        var random = SplitMix64(seed: seed)
        let raster = try Raster(width: width, height: height)
        for i in 0..<(width * height * 3) { raster.pixels[i] = UInt8.random(in: 0...255, using: &random) }
        return raster
    }

    /// The reduction read plainly: output pixel (ox, oy) is the rounded mean of source pixels
    /// [ox × factor, + min(factor, width)) by [oy × factor, + min(factor, height)), the output
    /// (width / factor) by (height / factor), at least 1 by 1.
    static func referenceReduce(_ source: Raster, factor: Int) throws -> Raster {
        let outWidth = max(1, source.width / factor), outHeight = max(1, source.height / factor)
        let blockWidth = min(factor, source.width), blockHeight = min(factor, source.height)
        let area = blockWidth * blockHeight
        let out = try Raster(width: outWidth, height: outHeight)
        for oy in 0..<outHeight {
            for ox in 0..<outWidth {
                for c in 0..<3 {
                    var sum = 0
                    for y in (oy * factor)..<(oy * factor + blockHeight) {
                        for x in (ox * factor)..<(ox * factor + blockWidth) {
                            sum += Int(source.pixels[(y * source.width + x) * 3 + c])
                        }
                    }
                    out.pixels[(oy * outWidth + ox) * 3 + c] = UInt8((sum + area / 2) / area)
                }
            }
        }
        return out
    }

    /// The raster flipped left to right (`mirrorX`) and top to bottom (`mirrorY`), by index.
    static func referenceFlip(_ source: Raster, mirrorX: Bool, mirrorY: Bool) throws -> Raster {
        let out = try Raster(width: source.width, height: source.height)
        for y in 0..<source.height {
            for x in 0..<source.width {
                let sx = mirrorX ? source.width - 1 - x : x, sy = mirrorY ? source.height - 1 - y : y
                for c in 0..<3 { out.pixels[(y * source.width + x) * 3 + c] = source.pixels[(sy * source.width + sx) * 3 + c] }
            }
        }
        return out
    }

    /// Target pixel (x, y) is source pixel (y, x).
    static func referenceTranspose(_ source: Raster) throws -> Raster {
        let out = try Raster(width: source.height, height: source.width)
        for y in 0..<out.height {
            for x in 0..<out.width {
                for c in 0..<3 { out.pixels[(y * out.width + x) * 3 + c] = source.pixels[(x * source.width + y) * 3 + c] }
            }
        }
        return out
    }

    /// Bytes that differ between two rasters (all of them when the sizes differ): a count, never
    /// the arrays, whose printing by a failed expectation would take minutes.
    static func differing(_ a: Raster, _ b: Raster) -> Int {
        guard a.width == b.width, a.height == b.height else { return max(a.width * a.height, b.width * b.height) * 3 }
        var count = 0
        for i in 0..<(a.width * a.height * 3) where a.pixels[i] != b.pixels[i] { count += 1 }
        return count
    }

    /// `body` on the build the processor chooses, or on the baseline build.
    static func build<T>(baseline: Bool, _ body: () throws -> T) rethrows -> T {
        baseline ? try Resampler.withBaselinePasses(body) : try body()
    }

    static var smallSizes: [(Int, Int)] { sides.flatMap { w in sides.map { h in (w, h) } } }

    @Test("halving gives each pixel the rounded mean of its 2×2 block, on every size", arguments: [false, true])
    func halves(baseline: Bool) throws {
        for (index, (width, height)) in (Self.smallSizes + Self.largeSizes).enumerated() {
            let source = try Self.noise(width: width, height: height, seed: UInt64(index))
            let reduced = try Self.build(baseline: baseline) { try source.boxReduced(by: 2) }
            let count = Self.differing(reduced, try Self.referenceReduce(source, factor: 2))
            #expect(count == 0, "\(width)×\(height) halved (baseline: \(baseline)): \(count) bytes differ")
        }
    }

    @Test("reducing by 3 and 4 gives the rounded block means, on every size", arguments: [false, true])
    func otherFactors(baseline: Bool) throws {
        for factor in [3, 4] {
            for (index, (width, height)) in Self.smallSizes.enumerated() {
                let source = try Self.noise(width: width, height: height, seed: UInt64(index * 7 + factor))
                let reduced = try Self.build(baseline: baseline) { try source.boxReduced(by: factor) }
                let count = Self.differing(reduced, try Self.referenceReduce(source, factor: factor))
                #expect(count == 0, "\(width)×\(height) reduced by \(factor) (baseline: \(baseline)): \(count) bytes differ")
            }
        }
    }

    @Test("a mirrored reduction is the flipped picture's reduction, for each flip", arguments: [false, true])
    func mirrored(baseline: Bool) throws {
        let sizes = Self.smallSizes + [(1024, 768), (1023, 767), (1, 31), (31, 1)]
        for (mirrorX, mirrorY) in [(false, false), (true, false), (false, true), (true, true)] {
            for factor in [2, 3] {
                for (index, (width, height)) in sizes.enumerated() {
                    let source = try Self.noise(width: width, height: height, seed: UInt64(index * 5 + factor))
                    let reduced = try Self.build(baseline: baseline) {
                        try source.boxReduced(by: factor, mirrorX: mirrorX, mirrorY: mirrorY)
                    }
                    let flipped = try Self.referenceFlip(source, mirrorX: mirrorX, mirrorY: mirrorY)
                    let count = Self.differing(reduced, try Self.referenceReduce(flipped, factor: factor))
                    #expect(count == 0, """
                        \(width)×\(height) reduced by \(factor), mirrorX \(mirrorX), mirrorY \(mirrorY) \
                        (baseline: \(baseline)): \(count) bytes differ
                        """)
                }
            }
        }
    }

    @Test("the transpose puts source pixel (y, x) at (x, y), on every size", arguments: [false, true])
    func transposes(baseline: Bool) throws {
        for (index, (width, height)) in (Self.smallSizes + Self.largeSizes).enumerated() {
            let source = try Self.noise(width: width, height: height, seed: UInt64(1000 + index))
            let turned = try Self.build(baseline: baseline) { try source.transposed() }
            let count = Self.differing(turned, try Self.referenceTranspose(source))
            #expect(count == 0, "\(width)×\(height) transposed (baseline: \(baseline)): \(count) bytes differ")
        }
    }
}
