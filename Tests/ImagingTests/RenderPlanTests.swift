import Testing
@testable import Imaging

/// One decode, at the smallest libjpeg scale that serves every variant.
@Suite("Render plan")
struct RenderPlanTests {
    static func photo(width: Int, height: Int) throws -> [UInt8] {
        try Pixels.jpeg(try Pixels.raster(width: width, height: height) { x, y in (UInt8(x % 256), UInt8(y % 256), UInt8((x + y) % 256)) })
    }

    @Test("a render says where its CPU time went: every stage took some, and together no more than the render's wall time")
    func stageTimings() throws {
        let bytes = try Self.photo(width: 2400, height: 1600)
        let start = ContinuousClock.now
        let result = try Imaging.render(bytes, recipes: VariantRecipe.defaults, options: RenderOptions())
        let wall = ContinuousClock.now - start
        let wallMilliseconds = Double(wall.components.seconds) * 1000 + Double(wall.components.attoseconds) / 1e15
        let timings = result.timings
        #expect(timings.decode > 0 && timings.analysis > 0 && timings.resample > 0 && timings.encode > 0, "\(timings)")
        // A thread's CPU time cannot exceed the time that passed (the clocks tick in different steps: 1 ms of slack).
        #expect(timings.total <= wallMilliseconds + 1, "\(timings.total) ms of CPU in \(wallMilliseconds) ms")
    }

    @Test("the decode scale is the smallest M/8 of 1-6 and 8 that covers the largest variant, after orientation")
    func scaledDecode() throws {
        let bytes = try Self.photo(width: 1600, height: 800)
        // Orientation 6 shows it as 800×1600; contain 800 needs 400×800 displayed, so 4/8 suffices.
        let contain = VariantRecipe(name: "c", fit: .contain, width: 800, height: 800, quality: 80)
        var result = try Imaging.render(bytes, recipes: [contain], options: RenderOptions(orientation: 6))
        #expect(result.decodedWidth == 800 && result.decodedHeight == 400)
        #expect(result.displayWidth == 800 && result.displayHeight == 1600)
        #expect(result.variants.first?.width == 400 && result.variants.first?.height == 800)
        // One pixel more than what 4/8 gives forces 5/8.
        let larger = VariantRecipe(name: "c", fit: .contain, width: 801, height: 801, quality: 80)
        result = try Imaging.render(bytes, recipes: [larger], options: RenderOptions(orientation: 6))
        #expect(result.decodedWidth == 1000 && result.decodedHeight == 500)
        // A cover needs its window's pixels: 500×500 from an 800×800 window needs 5/8.
        let cover = VariantRecipe(name: "t", fit: .cover, width: 500, height: 500, quality: 80)
        result = try Imaging.render(bytes, recipes: [cover], options: RenderOptions())
        #expect(result.decodedWidth == 1000 && result.decodedHeight == 500)
        // 600×600 needs 6/8 (its 6×6 and 12×12 transforms have AVX2 builds).
        let larger600 = VariantRecipe(name: "t", fit: .cover, width: 600, height: 600, quality: 80)
        result = try Imaging.render(bytes, recipes: [larger600], options: RenderOptions())
        #expect(result.decodedWidth == 1200 && result.decodedHeight == 600)
        #expect(result.variants.first?.width == 600 && result.variants.first?.height == 600)
        // 601×601 is past it: the full decode.
        let larger601 = VariantRecipe(name: "t", fit: .cover, width: 601, height: 601, quality: 80)
        result = try Imaging.render(bytes, recipes: [larger601], options: RenderOptions())
        #expect(result.decodedWidth == 1600 && result.decodedHeight == 800)
        // Small variants still decode the analysis copy's 512 pixels (statistics must not depend on recipes).
        let thumb = VariantRecipe(name: "t", fit: .cover, width: 64, height: 64, quality: 80)
        result = try Imaging.render(bytes, recipes: [thumb], options: RenderOptions())
        #expect(result.decodedWidth == 600 && result.decodedHeight == 300)
    }

    @Test("variants come back in recipe order, whatever order they are made in")
    func recipeOrder() throws {
        let bytes = try Self.photo(width: 900, height: 600)
        let recipes = [
            VariantRecipe(name: "tiny", fit: .cover, width: 50, height: 50, quality: 80),
            VariantRecipe(name: "big", fit: .contain, width: 800, height: 800, quality: 80),
            VariantRecipe(name: "mid", fit: .contain, width: 300, height: 300, quality: 80),
        ]
        let result = try Imaging.render(bytes, recipes: recipes, options: RenderOptions())
        #expect(result.variants.map(\.name) == ["tiny", "big", "mid"])
        #expect(result.variants.map(\.width) == [50, 800, 300])
    }
}
