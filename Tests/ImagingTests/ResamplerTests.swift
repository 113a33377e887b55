import Foundation
import SeededRandom
import Testing
@testable import Imaging

/// The vectorised passes (CResample) against a plain reading of the same taps in Double.
@Suite("Resampler")
struct ResamplerTests {
    /// The separable filter done the obvious way: horizontal then vertical, in Double, every
    /// tap read with bounds checks (a read past the edge meets a zero weight and counts nothing).
    static func reference(_ source: Raster, windowX: Double, windowY: Double, windowWidth: Double, windowHeight: Double,
                          width: Int, height: Int) throws -> Raster {
        let h = ResampleAxis(sourceSize: source.width, windowStart: windowX, windowLength: windowWidth, outputSize: width)
        let v = ResampleAxis(sourceSize: source.height, windowStart: windowY, windowLength: windowHeight, outputSize: height)
        var rows = [Double](repeating: 0, count: source.height * width * 3)
        for y in 0..<source.height {
            for ox in 0..<width {
                for k in 0..<h.taps where Int(h.starts[ox]) + k < source.width {
                    let weight = Double(h.weights[ox * h.taps + k])
                    let p = (y * source.width + Int(h.starts[ox]) + k) * 3
                    for c in 0..<3 { rows[(y * width + ox) * 3 + c] += weight * Double(source.pixels[p + c]) }
                }
            }
        }
        let out = try Raster(width: width, height: height)
        for oy in 0..<height {
            for ox in 0..<width {
                for c in 0..<3 {
                    var sum = 0.0
                    for k in 0..<v.taps where Int(v.starts[oy]) + k < source.height {
                        sum += Double(v.weights[oy * v.taps + k]) * rows[((Int(v.starts[oy]) + k) * width + ox) * 3 + c]
                    }
                    out.pixels[(oy * width + ox) * 3 + c] = UInt8(max(0, min(255, sum.rounded())))
                }
            }
        }
        return out
    }

    /// A raster of smooth gradients with hard edges and noise: every kind of detail a filter meets.
    static func picture(width: Int, height: Int, seed: UInt64) throws -> Raster {
        var random = SplitMix64(seed: seed)
        let raster = try Raster(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                let edge = (x / 7 + y / 5) % 2 == 0 ? 200 : 30
                let p = (y * width + x) * 3
                raster.pixels[p] = UInt8(truncatingIfNeeded: (x * 255) / max(width, 1))
                raster.pixels[p + 1] = UInt8(truncatingIfNeeded: edge)
                raster.pixels[p + 2] = UInt8.random(in: 0...255, using: &random)
            }
        }
        return raster
    }

    static func largestDifference(_ a: Raster, _ b: Raster) -> Int {
        var largest = 0
        for i in 0..<(a.width * a.height * 3) { largest = max(largest, abs(Int(a.pixels[i]) - Int(b.pixels[i]))) }
        return largest
    }

    /// The implementations of the passes: the one this processor chooses (fixed point where it
    /// has AVX2, its vertical pass on VNNI where it has that too), the AVX2 one without VNNI, and
    /// the baseline float one.
    enum Path: String, CaseIterable, Sendable { case chosen, plainAVX2, baseline }

    static func passes<T>(_ path: Path, _ body: () throws -> T) rethrows -> T {
        switch path {
        case .chosen: try body()
        case .plainAVX2: try Resampler.withPlainAVX2Passes(body)
        case .baseline: try Resampler.withBaselinePasses(body)
        }
    }

    @Test("an axis from the table of recent ones is the axis made afresh, also once the table has started again")
    func cachedAxesAreFresh() {
        var mismatches: [String] = []
        for round in 0..<2 {
            // More keys than the table holds, so that it starts again during the rounds.
            for index in 0..<(ResampleAxis.recentLimit + 9) {
                let sourceSize = 300 + index * 7, outputSize = 40 + index * 3
                let start = Double(index) * 0.37, length = Double(sourceSize) - Double(index) * 1.1
                let mirrored = index % 3 == 0
                let cached = ResampleAxis.cached(sourceSize: sourceSize, windowStart: start, windowLength: length,
                                                 outputSize: outputSize, mirrored: mirrored)
                let fresh = ResampleAxis(sourceSize: sourceSize, windowStart: start, windowLength: length, outputSize: outputSize,
                                         mirrored: mirrored)
                if cached.taps != fresh.taps || cached.starts != fresh.starts || cached.weights != fresh.weights
                    || cached.fixedWeights != fresh.fixedWeights || cached.fixedBits != fresh.fixedBits || fresh.fixedBits != 15 {
                    mismatches.append("round \(round), axis \(index)")
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    @Test("the vectorised passes agree with a plain Double filter within one level, shrinking, enlarging and cropping",
          arguments: Path.allCases)
    func matchesReference(path: Path) throws {
        var random = SplitMix64(seed: 15)
        // Sizes at the awkward edges: one pixel, odd widths, more taps than the source has pixels.
        let cases: [(Int, Int, Int, Int)] = [(1, 1, 1, 1), (1, 9, 3, 2), (9, 1, 2, 5), (3, 3, 7, 7), (17, 13, 5, 4),
                                             (64, 48, 31, 23), (101, 67, 100, 66), (40, 30, 120, 90), (257, 129, 16, 8)]
        for (index, (sw, sh, ow, oh)) in cases.enumerated() {
            let source = try Self.picture(width: sw, height: sh, seed: UInt64(index))
            let fast = try Self.passes(path) {
                try Resampler.resample(source, windowX: 0, windowY: 0, windowWidth: Double(sw), windowHeight: Double(sh),
                                       width: ow, height: oh)
            }
            let slow = try Self.reference(source, windowX: 0, windowY: 0, windowWidth: Double(sw), windowHeight: Double(sh),
                                          width: ow, height: oh)
            #expect(Self.largestDifference(fast, slow) <= 1, "\(sw)×\(sh) → \(ow)×\(oh)")
        }
        for trial in 0..<12 {
            let sw = Int.random(in: 8...200, using: &random), sh = Int.random(in: 8...200, using: &random)
            let source = try Self.picture(width: sw, height: sh, seed: UInt64(100 + trial))
            let wx = Double.random(in: 0..<Double(sw) / 2, using: &random), wy = Double.random(in: 0..<Double(sh) / 2, using: &random)
            let ww = Double.random(in: 1...(Double(sw) - wx), using: &random), wh = Double.random(in: 1...(Double(sh) - wy), using: &random)
            let ow = Int.random(in: 1...120, using: &random), oh = Int.random(in: 1...120, using: &random)
            let fast = try Self.passes(path) {
                try Resampler.resample(source, windowX: wx, windowY: wy, windowWidth: ww, windowHeight: wh, width: ow, height: oh)
            }
            let slow = try Self.reference(source, windowX: wx, windowY: wy, windowWidth: ww, windowHeight: wh, width: ow, height: oh)
            #expect(Self.largestDifference(fast, slow) <= 1, "trial \(trial): \(sw)×\(sh) window \(wx),\(wy) \(ww)×\(wh) → \(ow)×\(oh)")
        }
    }

    @Test("the fixed-point passes, with and without VNNI, and the float ones agree within a level on a photo-sized picture, cropped and mirrored")
    func implementationsAgree() throws {
        let source = try Self.picture(width: 1203, height: 811, seed: 77)
        for (wx, wy, ww, wh, ow, oh, mirrorX, mirrorY) in [
            (0.0, 0.0, 1203.0, 811.0, 613, 413, false, false), (101.5, 37.25, 640.0, 700.0, 321, 350, true, false),
            (0.0, 0.0, 1203.0, 811.0, 97, 65, false, true), (10.0, 20.0, 300.0, 200.0, 517, 345, true, true),
        ] {
            func run() throws -> Raster {
                try Resampler.resample(source, windowX: wx, windowY: wy, windowWidth: ww, windowHeight: wh, width: ow, height: oh,
                                       mirrorX: mirrorX, mirrorY: mirrorY)
            }
            let chosen = try run(), plain = try Resampler.withPlainAVX2Passes(run), baseline = try Resampler.withBaselinePasses(run)
            #expect(Self.largestDifference(chosen, baseline) <= 1, "\(ww)×\(wh) → \(ow)×\(oh)")
            #expect(Self.largestDifference(plain, baseline) <= 1, "without VNNI: \(ww)×\(wh) → \(ow)×\(oh)")
            #expect(Self.largestDifference(chosen, plain) <= 1, "VNNI against AVX2: \(ww)×\(wh) → \(ow)×\(oh)")
        }
    }

    @Test("the tabulated kernel is within 2e-6 of Lanczos-3 everywhere, and zero from 3 on")
    func tableMatchesKernel() {
        var worst = 0.0
        for i in -40_000...40_000 {
            let x = Double(i) / 10_000 + 0.000_037
            worst = max(worst, abs(ResampleAxis.kernel(x) - ResampleAxis.lanczos(x)))
        }
        #expect(worst < 2e-6, "largest difference \(worst)")
        #expect(ResampleAxis.kernel(3) == 0 && ResampleAxis.kernel(-3.5) == 0 && ResampleAxis.kernel(0) == 1)
    }

    @Test("an axis's weights are Lanczos-3 at each source pixel's distance from the output's centre, normalised, and its reads stay in the source")
    func axisWeightsAreTheNormalisedKernel() {
        // Shrinking, enlarging, a window off centre, one past the far edge, and a degenerate one.
        let cases: [(source: Int, start: Double, length: Double, output: Int)] = [
            (2520, 0, 2520, 2048), (1024, 128.4, 768, 320), (300, 0, 300, 777), (97, 5.5, 58.2, 20), (40, 30, 20, 9),
            (12, 0, 12, 3), (500, -400, 50, 5),
        ]
        var problems: [String] = []
        for (source, start, length, output) in cases {
            let axis = ResampleAxis(sourceSize: source, windowStart: start, windowLength: length, outputSize: output)
            let scale = length / Double(output), filterScale = max(scale, 1)
            for i in 0..<output {
                let first = Int(axis.starts[i])
                if first < 0 || first + axis.taps > source + source % 2 { problems.append("\(source) \(start) \(i): reads from \(first)") }
                let row = (0..<axis.taps).map { Double(axis.weights[i * axis.taps + $0]) }
                let sum = row.reduce(0, +)
                if abs(sum - 1) > 1e-5 { problems.append("\(source) \(start) \(i): weights sum to \(sum)") }
                // Where the window reaches the source, each weight is the kernel at its pixel's
                // distance from the centre over the (normalising) sum of those in reach.
                let centre = start + (Double(i) + 0.5) * scale
                let exact = (0..<axis.taps).map { k -> Double in
                    let j = first + k
                    guard j < source else { return 0 }
                    return ResampleAxis.lanczos((Double(j) + 0.5 - centre) / filterScale)
                }
                let total = exact.reduce(0, +)
                guard abs(total) > 1e-3 else { continue }
                for k in 0..<axis.taps where abs(row[k] - exact[k] / total) > 1e-5 {
                    problems.append("\(source) \(start) \(i) tap \(k): \(row[k]) against \(exact[k] / total)")
                }
            }
        }
        let count = problems.count, first = problems.prefix(3).joined(separator: "; ")
        #expect(count == 0, "\(count) problems, first: \(first)")
    }

    @Test("the box reduction is each block's rounded mean, partial blocks at the right and bottom dropped")
    func boxReductionMatchesBlockMeans() throws {
        for (index, (width, height, factor)) in [(10, 7, 2), (17, 13, 5), (64, 48, 8), (3, 20, 6), (7, 2, 9)].enumerated() {
            let source = try Self.picture(width: width, height: height, seed: UInt64(200 + index))
            let reduced = try source.boxReduced(by: factor)
            let outWidth = max(1, width / factor), outHeight = max(1, height / factor)
            #expect(reduced.width == outWidth && reduced.height == outHeight)
            let blockWidth = min(factor, width), blockHeight = min(factor, height)
            for oy in 0..<outHeight {
                for ox in 0..<outWidth {
                    for c in 0..<3 {
                        var sum = 0
                        for y in 0..<blockHeight {
                            for x in 0..<blockWidth { sum += Int(source.pixels[((oy * factor + y) * width + ox * blockWidth + x) * 3 + c]) }
                        }
                        let area = blockWidth * blockHeight
                        #expect(Int(reduced.pixels[(oy * outWidth + ox) * 3 + c]) == (sum + area / 2) / area,
                                "\(width)×\(height) by \(factor), pixel \(ox),\(oy)")
                    }
                }
            }
        }
    }

    @Test("a flat picture stays flat and a one-pixel edge stays where it was: no ringing or shift on uniform areas",
          arguments: Path.allCases)
    func flatAndEdges(path: Path) throws {
        let flat = try Raster(width: 90, height: 60)
        for level: Int32 in [0, 1, 173, 254, 255] {
            memset(flat.pixels, level, 90 * 60 * 3)
            for (width, height) in [(37, 23), (90, 60), (200, 130)] {
                let resized = try Self.passes(path) {
                    try Resampler.resample(flat, windowX: 0, windowY: 0, windowWidth: 90, windowHeight: 60, width: width, height: height)
                }
                #expect((0..<(width * height * 3)).allSatisfy { resized.pixels[$0] == UInt8(level) }, "\(level) at \(width)×\(height)")
            }
        }
        // Left half black, right half white, halved: the edge lands mid-picture and is symmetric.
        let edge = try Raster(width: 80, height: 4)
        for y in 0..<4 { for x in 0..<80 { for c in 0..<3 { edge.pixels[(y * 80 + x) * 3 + c] = x < 40 ? 0 : 255 } } }
        let half = try Self.passes(path) {
            try Resampler.resample(edge, windowX: 0, windowY: 0, windowWidth: 80, windowHeight: 4, width: 40, height: 2)
        }
        let row = (0..<40).map { Int(half.pixels[$0 * 3]) }
        #expect(row[0..<17].allSatisfy { $0 <= 1 } && row[23..<40].allSatisfy { $0 >= 254 }, "\(row)")
        for x in 0..<20 { #expect(abs(row[x] + row[39 - x] - 255) <= 1, "\(row)") }
    }
}
