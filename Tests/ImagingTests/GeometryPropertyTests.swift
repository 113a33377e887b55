import Testing
@testable import Imaging
import SeededRandom

/// Laws of the fits and crops, over many seeded random sizes.
@Suite("Geometry properties")
struct GeometryPropertyTests {
    static let cases = 2_000

    @Test("contain never upscales, fits the box and keeps the aspect within a pixel")
    func containLaws() {
        var random = SplitMix64(seed: 0xC0_47A1)
        for _ in 0..<Self.cases {
            let w = Int.random(in: 1...8000, using: &random), h = Int.random(in: 1...8000, using: &random)
            let bw = Int.random(in: 1...3000, using: &random), bh = Int.random(in: 1...3000, using: &random)
            let size = FitGeometry.containSize(sourceWidth: w, sourceHeight: h, boxWidth: bw, boxHeight: bh)
            #expect(size.width >= 1 && size.height >= 1)
            #expect(size.width <= w && size.height <= h, "upscaled \(w)×\(h) into \(size)")
            #expect(size.width <= bw && size.height <= bh, "\(size) outside \(bw)×\(bh)")
            // Aspect kept: the other side is the exact one rounded, so within a pixel.
            let expectedHeight = Double(size.width) * Double(h) / Double(w)
            let expectedWidth = Double(size.height) * Double(w) / Double(h)
            #expect(abs(expectedHeight - Double(size.height)) <= 1 || abs(expectedWidth - Double(size.width)) <= 1,
                    "\(w)×\(h) → \(size)")
            // And it is the largest such size: one side touches the box or the source.
            #expect(size.width >= min(bw, w) - 1 || size.height >= min(bh, h) - 1, "\(w)×\(h) in \(bw)×\(bh) → \(size)")
        }
    }

    @Test("cover is exact when the source holds the box, else the largest window of the box's aspect, never enlarged")
    func coverLaws() {
        var random = SplitMix64(seed: 0xC0_7E12)
        for _ in 0..<Self.cases {
            let w = Int.random(in: 1...8000, using: &random), h = Int.random(in: 1...8000, using: &random)
            let bw = Int.random(in: 1...3000, using: &random), bh = Int.random(in: 1...3000, using: &random)
            let window = FitGeometry.coverWindow(sourceWidth: w, sourceHeight: h, boxWidth: bw, boxHeight: bh)
            #expect(window.width <= w && window.height <= h)
            #expect(window.width == w || window.height == h, "not the largest window: \(w)×\(h) → \(window)")
            // The window has the box's aspect: its rounded side is within a pixel of exact (unless
            // clamped to 1 pixel).
            let widthError = abs(Double(window.width) - Double(window.height) * Double(bw) / Double(bh))
            let heightError = abs(Double(window.height) - Double(window.width) * Double(bh) / Double(bw))
            #expect(widthError <= 1 || heightError <= 1 || window.width == 1 || window.height == 1, "\(window) vs \(bw)×\(bh)")
            let output = FitGeometry.coverOutput(windowWidth: window.width, windowHeight: window.height, boxWidth: bw, boxHeight: bh)
            if window.width >= bw && window.height >= bh {
                #expect(output.width == bw && output.height == bh)
            } else {
                #expect(output.width <= window.width && output.height <= window.height, "enlarged \(window) → \(output)")
                #expect(output.width <= bw && output.height <= bh)
            }
        }
    }

    @Test("a window centred on a focal point lies inside the picture and contains the point")
    func focalWindowLaws() {
        var random = SplitMix64(seed: 0xF0_CA1)
        for _ in 0..<Self.cases {
            let w = Int.random(in: 1...8000, using: &random), h = Int.random(in: 1...8000, using: &random)
            let ww = Int.random(in: 1...w, using: &random), wh = Int.random(in: 1...h, using: &random)
            let point = (x: Double.random(in: 0...1, using: &random) * Double(w), y: Double.random(in: 0...1, using: &random) * Double(h))
            let rect = FitGeometry.window(width: ww, height: wh, centredOn: point, sourceWidth: w, sourceHeight: h)
            #expect(FitGeometry.isInside(rect, sourceWidth: w, sourceHeight: h), "\(rect) outside \(w)×\(h)")
            #expect(Double(rect.x) <= point.x + 0.5 && point.x - 0.5 <= Double(rect.x + rect.width), "\(point) not in \(rect)")
            #expect(Double(rect.y) <= point.y + 0.5 && point.y - 0.5 <= Double(rect.y + rect.height), "\(point) not in \(rect)")
        }
    }

    @Test("rendered crops lie inside the displayed picture and contain the focal point, for random pictures and recipes")
    func renderedCropLaws() throws {
        var random = SplitMix64(seed: 0x5EED)
        for _ in 0..<40 {
            let width = Int.random(in: 1...160, using: &random), height = Int.random(in: 1...160, using: &random)
            let source = try Pixels.raster(width: width, height: height) { x, y in
                (UInt8((x * 7) % 256), UInt8((y * 5) % 256), UInt8((x * y) % 256))
            }
            let bytes = try Pixels.jpeg(source)
            let orientation = Int.random(in: 1...8, using: &random)
            let focal = Bool.random(using: &random)
                ? FocalPoint(x: Double.random(in: 0...1, using: &random), y: Double.random(in: 0...1, using: &random)) : nil
            let recipes = (0..<3).map { index in
                VariantRecipe(
                    name: "v\(index)", fit: Bool.random(using: &random) ? .cover : .contain,
                    width: Int.random(in: 1...200, using: &random), height: Int.random(in: 1...200, using: &random), quality: 80)
            }
            let options = RenderOptions(
                orientation: orientation, focalPoint: focal, crop: Bool.random(using: &random) ? .attention : .centre)
            let result = try Imaging.render(bytes, recipes: recipes, options: options)
            let transposed = orientation >= 5
            #expect(result.displayWidth == (transposed ? height : width) && result.displayHeight == (transposed ? width : height))
            for (variant, recipe) in zip(result.variants, recipes) {
                #expect(variant.width <= result.displayWidth && variant.height <= result.displayHeight, "upscaled \(variant.name)")
                #expect(variant.width <= recipe.width && variant.height <= recipe.height)
                guard recipe.fit == .cover else {
                    #expect(variant.crop == nil && variant.cropSource == CropSource.none)
                    continue
                }
                let crop = try #require(variant.crop)
                #expect(FitGeometry.isInside(crop, sourceWidth: result.displayWidth, sourceHeight: result.displayHeight), "\(crop)")
                if let focal {
                    #expect(variant.cropSource == .focalPoint)
                    let px = focal.x * Double(result.displayWidth), py = focal.y * Double(result.displayHeight)
                    #expect(Double(crop.x) <= px + 0.5 && px - 0.5 <= Double(crop.x + crop.width), "\(focal) \(crop)")
                    #expect(Double(crop.y) <= py + 0.5 && py - 0.5 <= Double(crop.y + crop.height), "\(focal) \(crop)")
                }
                // Both sides of the encoded variant agree with what the result says.
                let info = try Imaging.probe(variant.bytes)
                #expect(info.width == variant.width && info.height == variant.height)
            }
        }
    }
}
