import Foundation
import Testing
@testable import Imaging

/// The analysis copy's luma and interest, computed in C (`dr_luma`, `dr_saliency`), against a
/// plain scalar Swift reference of the same definition: equal bit for bit, on both the AVX2
/// build and the baseline one.
@Suite("Saliency")
struct SaliencyTests {
    /// The definition, pixel by pixel, in Float as `PictureAnalysis` documents it.
    static func referenceLuma(_ raster: Raster) -> [Float] {
        (0..<(raster.width * raster.height)).map { i in
            let r = Float(raster.pixels[i * 3]), g = Float(raster.pixels[i * 3 + 1]), b = Float(raster.pixels[i * 3 + 2])
            return 0.299 * r + 0.587 * g + 0.114 * b
        }
    }

    /// A common YCbCr skin-tone box (Chai and Ngan): Cb 77...127 and Cr 133...173, not too dark.
    static func isSkin(r: Float, g: Float, b: Float) -> Bool {
        let y = 0.299 * r + 0.587 * g + 0.114 * b
        let cb = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b
        let cr = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b
        return y > 40 && cb >= 77 && cb <= 127 && cr >= 133 && cr <= 173
    }

    static func referenceSaliency(_ raster: Raster) -> [Float] {
        let width = raster.width, height = raster.height
        let luma = referenceLuma(raster)
        var scores = [Float](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let i = y * width + x
                let centre = luma[i]
                let left = x > 0 ? luma[i - 1] : centre, right = x + 1 < width ? luma[i + 1] : centre
                let up = y > 0 ? luma[i - width] : centre, down = y + 1 < height ? luma[i + width] : centre
                var value = abs(4 * centre - left - right - up - down)
                let r = Float(raster.pixels[i * 3]), g = Float(raster.pixels[i * 3 + 1]), b = Float(raster.pixels[i * 3 + 2])
                let saturation = max(r, g, b) - min(r, g, b)
                if saturation > PictureAnalysis.saturationFloor { value += PictureAnalysis.saturationWeight * saturation }
                if isSkin(r: r, g: g, b: b) { value += PictureAnalysis.skinScore }
                scores[i] = value
            }
        }
        return scores
    }

    /// A raster of seeded noise, with patches of skin tones and greys so every branch is taken.
    static func noise(width: Int, height: Int, seed: UInt64) throws -> Raster {
        var state = seed
        func next() -> UInt8 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        return try Pixels.raster(width: width, height: height) { x, y in
            switch (x / 5 + y / 3) % 4 {
            case 0: return (224 &- next() / 8, 172 &- next() / 8, 140 &- next() / 8)  // skin tones
            case 1: let v = next(); return (v, v, v)  // greys
            default: return (next(), next(), next())
            }
        }
    }

    static func check(_ raster: Raster, _ label: String) {
        let luma = [Float](unsafeUninitializedCapacity: raster.width * raster.height) { buffer, count in
            PictureAnalysis.fillLuma(raster, into: buffer.baseAddress!)
            count = raster.width * raster.height
        }
        // Counts, not the arrays themselves: a failed expectation over arrays of 200,000 floats
        // takes minutes to print.
        func differing(_ a: [Float], _ b: [Float]) -> Int { a.count == b.count ? zip(a, b).filter { $0 != $1 }.count : max(a.count, b.count) }
        #expect(differing(luma, referenceLuma(raster)) == 0, "luma of \(label)")
        let reference = referenceSaliency(raster)
        let chosen = PictureAnalysis.saliency(of: raster)
        let baseline = Resampler.withBaselinePasses { PictureAnalysis.saliency(of: raster) }
        #expect(differing(chosen, reference) == 0, "\(label): scores differ from the reference's \(reference.count)")
        #expect(differing(baseline, reference) == 0, "\(label): the baseline build's scores differ from the reference's")
    }

    @Test("luma and interest equal the scalar reference on noise of many sizes, edges included", arguments: [
        (1, 1), (1, 7), (9, 1), (2, 2), (3, 3), (17, 5), (37, 23), (512, 384), (333, 511),
    ])
    func noiseSizes(size: (Int, Int)) throws {
        Self.check(try Self.noise(width: size.0, height: size.1, seed: UInt64(size.0 * 1000 + size.1)), "\(size.0)×\(size.1) noise")
    }

    /// The statistics' definition, plainly: each sum in double, in four partial sums (element i
    /// of its run into sum i % 4; the Laplacian's run starts again on each row), combined as
    /// (s0 + s1) + (s2 + s3).
    static func referenceStatistics(_ raster: Raster) -> PictureStatistics {
        let width = raster.width, height = raster.height, luma = referenceLuma(raster)
        var sum = [0.0, 0.0, 0.0, 0.0], clipped = 0
        let low = Float(PictureStatistics.clipMargin), high = Float(255 - PictureStatistics.clipMargin)
        for (i, value) in luma.enumerated() {
            sum[i % 4] += Double(value)
            if value <= low || value >= high { clipped += 1 }
        }
        var lapSum = [0.0, 0.0, 0.0, 0.0], lapSquares = [0.0, 0.0, 0.0, 0.0], samples = 0
        if width >= 3 && height >= 3 {
            for y in 1..<(height - 1) {
                for x in 1..<(width - 1) {
                    let i = y * width + x
                    let value = Double(4 * luma[i] - luma[i - 1] - luma[i + 1] - luma[i - width] - luma[i + width])
                    lapSum[(x - 1) % 4] += value
                    lapSquares[(x - 1) % 4] += value * value
                    samples += 1
                }
            }
        }
        func combined(_ parts: [Double]) -> Double { (parts[0] + parts[1]) + (parts[2] + parts[3]) }
        var variance = 0.0
        if samples > 0 {
            let mean = combined(lapSum) / Double(samples)
            variance = max(0, combined(lapSquares) / Double(samples) - mean * mean)
        }
        return PictureStatistics(sharpness: variance / (variance + PictureStatistics.sharpnessHalfPoint),
                                 meanLuma: combined(sum) / Double(luma.count) / 255, clippedFraction: Double(clipped) / Double(luma.count))
    }

    @Test("the statistics and the attention map's summed-area table equal their definitions computed plainly, bit for bit", arguments: [
        (1, 1), (2, 5), (3, 3), (6, 7), (37, 23), (512, 384), (511, 383),
    ])
    func sums(size: (Int, Int)) throws {
        let raster = try Self.noise(width: size.0, height: size.1, seed: UInt64(size.0 * 7 + size.1))
        let statistics = PictureAnalysis.statistics(of: raster), reference = Self.referenceStatistics(raster)
        #expect(statistics.sharpness == reference.sharpness && statistics.meanLuma == reference.meanLuma
                && statistics.clippedFraction == reference.clippedFraction, "\(statistics) vs \(reference)")
        let scores = PictureAnalysis.saliency(of: raster)
        let crop = AttentionCrop(analysis: raster, cellWidth: 1, cellHeight: 1)
        var table = [Double](repeating: 0, count: (size.0 + 1) * (size.1 + 1))
        for y in 0..<size.1 {
            var rowSum = 0.0
            for x in 0..<size.0 {
                rowSum += Double(scores[y * size.0 + x])
                table[(y + 1) * (size.0 + 1) + x + 1] = table[y * (size.0 + 1) + x + 1] + rowSum
            }
        }
        let differing = zip(crop.integral, table).filter { $0 != $1 }.count + abs(crop.integral.count - table.count)
        #expect(differing == 0, "\(differing) entries of the summed-area table differ")
    }

    @Test("skin, saturation and edges each raise the interest")
    func components() throws {
        let flatGrey = try Pixels.raster(width: 8, height: 8) { _, _ in (100, 100, 100) }
        let skin = try Pixels.raster(width: 8, height: 8) { _, _ in (190, 160, 145) }
        let saturated = try Pixels.raster(width: 8, height: 8) { _, _ in (40, 200, 40) }
        let edge = try Pixels.raster(width: 8, height: 8) { x, _ in x < 4 ? (20, 20, 20) : (230, 230, 230) }
        // A flat area's Laplacian is zero up to Float rounding (4c - c - c - c - c, in that order).
        func near(_ scores: [Float], _ value: Float) -> Bool { scores.allSatisfy { abs($0 - value) < 0.001 } }
        #expect(near(PictureAnalysis.saliency(of: flatGrey), 0))
        #expect(near(PictureAnalysis.saliency(of: skin), PictureAnalysis.skinScore))
        #expect(near(PictureAnalysis.saliency(of: saturated), PictureAnalysis.saturationWeight * 160))
        let edgeScores = PictureAnalysis.saliency(of: edge)
        #expect(edgeScores[3] > 100 && edgeScores[4] > 100 && edgeScores[0] < 0.001 && edgeScores[7] < 0.001)
    }

    @Test("the analysis copies of the corpus's real photos score as the reference does")
    func corpusPhotos() throws {
        guard Corpus.isAvailable else {
            print("SaliencyTests: the photo corpus is absent (../shared/corpus or DARKROOM_CORPUS); corpus check skipped")
            return
        }
        let files = Corpus.imageFiles().filter { $0.lowercased().hasSuffix(".jpg") }.prefix(12)
        var checked = 0
        for file in files {
            guard let decoded = try? Pixels.decode(try Corpus.bytes(file)) else { continue }
            Self.check(try decoded.boxReduced(by: Renderer.analysisFactor(decoded)), file)
            checked += 1
        }
        #expect(checked >= 6, "only \(checked) of the corpus's first JPEGs decoded")
    }
}
