import Testing
@testable import Imaging

/// The orientation folded into the readers: the quarter turn of 5 to 8 read in place by the
/// resampler (or a transpose copy where it cannot), the flips read in place by the resampler
/// and the analysis reduction, give what turning the whole raster first gave.
@Suite("Orientation folded into the reads")
struct OrientationFoldTests {
    /// The raster turned as the renderer now turns it: transposed for 5 to 8, flips left for the readers.
    static func turned(_ raster: Raster, _ orientation: Int) throws -> Raster {
        Raster.orientationSteps(orientation).transpose ? try raster.transposed() : raster
    }

    static func equalPixels(_ a: Raster, _ b: Raster, within tolerance: Int = 0) -> Bool {
        guard a.width == b.width, a.height == b.height else { return false }
        return (0..<(a.width * a.height * 3)).allSatisfy { abs(Int(a.pixels[$0]) - Int(b.pixels[$0])) <= tolerance }
    }

    @Test("the tiled transpose is orientation 5, at sizes around its 16-pixel blocks")
    func transposeIsOrientationFive() throws {
        for (index, (width, height)) in [(1, 1), (1, 7), (16, 16), (17, 33), (40, 5)].enumerated() {
            let source = try ResamplerTests.picture(width: width, height: height, seed: UInt64(300 + index))
            #expect(Self.equalPixels(try source.transposed(), try source.oriented(5)), "\(width)×\(height)")
        }
    }

    @Test("orientation = transpose, then the flips the steps name", arguments: 1...8)
    func stepsComposeTheOrientation(_ orientation: Int) throws {
        let source = try ResamplerTests.picture(width: 23, height: 14, seed: 17)
        let steps = Raster.orientationSteps(orientation)
        let flipped = try Self.turned(source, orientation).oriented(Raster.flipOrientation(mirrorX: steps.mirrorX, mirrorY: steps.mirrorY))
        #expect(Self.equalPixels(flipped, try source.oriented(orientation)))
    }

    @Test("resampling with the flips folded in equals resampling the turned raster, crops included", arguments: 1...8)
    func resampleWithFlipsMatchesTurned(_ orientation: Int) throws {
        let source = try ResamplerTests.picture(width: 97, height: 61, seed: UInt64(orientation))
        let upright = try source.oriented(orientation)
        let steps = Raster.orientationSteps(orientation)
        let turned = try Self.turned(source, orientation)
        // The whole picture shrunk, a crop off centre, an enlargement, odd and even output sizes.
        let windows: [(Double, Double, Double, Double, Int, Int)] = [
            (0, 0, Double(upright.width), Double(upright.height), 31, 19),
            (5.5, 3.25, Double(upright.width) * 0.6, Double(upright.height) * 0.5, 20, 11),
            (1, 2, 12, 9, 30, 21),
        ]
        for (x, y, w, h, ow, oh) in windows {
            let expected = try Resampler.resample(upright, windowX: x, windowY: y, windowWidth: w, windowHeight: h, width: ow, height: oh)
            let folded = try Resampler.resample(turned, windowX: x, windowY: y, windowWidth: w, windowHeight: h, width: ow, height: oh,
                                                mirrorX: steps.mirrorX, mirrorY: steps.mirrorY)
            #expect(Self.equalPixels(folded, expected, within: 1), "orientation \(orientation), window \(x),\(y) \(w)×\(h) → \(ow)×\(oh)")
        }
    }

    @Test("resampling the stored raster with the quarter turn and the flips folded in equals resampling the upright one",
          arguments: 5...8)
    func resampleWithTurnFoldedMatchesUpright(_ orientation: Int) throws {
        let steps = Raster.orientationSteps(orientation)
        // Whole strips of 16 rows and a partial one, shrinking, a crop off centre, an enlargement.
        for (width, height, seed) in [(97, 61, 500), (333, 214, 501)] {
            let source = try ResamplerTests.picture(width: width, height: height, seed: UInt64(seed + orientation))
            let upright = try source.oriented(orientation)
            let windows: [(Double, Double, Double, Double, Int, Int)] = [
                (0, 0, Double(upright.width), Double(upright.height), upright.width * 5 / 8, upright.height * 5 / 8 + 1),
                (5.5, 3.25, Double(upright.width) * 0.6, Double(upright.height) * 0.5, 20, 33),
                (1, 2, 12, 9, 30, 21),
            ]
            for (x, y, w, h, ow, oh) in windows {
                let expected = try Resampler.resample(upright, windowX: x, windowY: y, windowWidth: w, windowHeight: h, width: ow, height: oh)
                func folded() throws -> Raster {
                    try Resampler.resample(source, windowX: x, windowY: y, windowWidth: w, windowHeight: h, width: ow, height: oh,
                                           mirrorX: steps.mirrorX, mirrorY: steps.mirrorY, transposed: true)
                }
                let label = "orientation \(orientation), \(width)×\(height), window \(x),\(y) \(w)×\(h) → \(ow)×\(oh)"
                // In place (the passes over the stored rows, written transposed): the sums are
                // made in the other order, so a byte may be a level off.
                let inPlace = try folded()
                #expect(Self.equalPixels(inPlace, expected, within: 1), "\(label)")
                // Where the processor cannot (here the baseline passes), the transposed copy:
                // then exactly what resampling the turned raster gives.
                let copied = try Resampler.withBaselinePasses(folded)
                let turned = try Resampler.withBaselinePasses {
                    try Resampler.resample(try source.transposed(), windowX: x, windowY: y, windowWidth: w, windowHeight: h,
                                           width: ow, height: oh, mirrorX: steps.mirrorX, mirrorY: steps.mirrorY)
                }
                #expect(Self.equalPixels(copied, turned), "\(label), baseline")
            }
        }
    }

    @Test("a thread that asks for the baseline or the plain AVX2 passes gets the transposed copy")
    func turnInPlaceFollowsThePreference() {
        #expect(!Resampler.withBaselinePasses { Resampler.transposesInPlace })
        #expect(!Resampler.withPlainAVX2Passes { Resampler.transposesInPlace })
    }

    @Test("the analysis reduction with the flips folded in equals reducing the flipped raster", arguments: 1...8)
    func boxReductionWithFlipsMatches(_ orientation: Int) throws {
        for (index, (width, height, factor)) in [(37, 23, 4), (40, 30, 5), (9, 3, 4), (3, 9, 4), (50, 50, 1)].enumerated() {
            let source = try ResamplerTests.picture(width: width, height: height, seed: UInt64(400 + index))
            let steps = Raster.orientationSteps(orientation)
            let turned = try Self.turned(source, orientation)
            let expected = try source.oriented(orientation).boxReduced(by: factor)
            let folded = try turned.boxReduced(by: factor, mirrorX: steps.mirrorX, mirrorY: steps.mirrorY)
            #expect(Self.equalPixels(folded, expected), "orientation \(orientation), \(width)×\(height) by \(factor)")
        }
    }
}
