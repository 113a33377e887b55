import Foundation
import Testing
@testable import Imaging

/// The analysis copy made from a `contain` variant already computed when one is large enough
/// (else from the decode), and the attention crops it places still mapped onto the picture as
/// displayed, whatever the EXIF orientation.
@Suite("Analysis copy source")
struct AnalysisSourceTests {
    /// The displayed picture: 1600×1208 (an odd 3/8 decode, 453 rows, so a mirrored reduction
    /// drops a partial block), faint grey gradient, with one saturated checkered block low right.
    static let displayWidth = 1600, displayHeight = 1208
    static let block = (x: 1150, y: 880, width: 200, height: 200)

    static func upright() throws -> Raster {
        try Pixels.raster(width: displayWidth, height: displayHeight) { x, y in
            let inside = x >= block.x && x < block.x + block.width && y >= block.y && y < block.y + block.height
            guard inside else { return (UInt8(120 + x / 200), UInt8(120 + y / 200), 128) }
            return ((x / 4 + y / 4) % 2 == 0) ? (235, 30, 30) : (20, 50, 230)
        }
    }

    /// The orientation that undoes `orientation` (6 and 8 undo each other; the rest undo themselves).
    static func inverse(_ orientation: Int) -> Int { orientation == 6 ? 8 : orientation == 8 ? 6 : orientation }

    /// A JPEG stored so that `orientation` displays `upright()`.
    static func stored(_ orientation: Int) throws -> [UInt8] {
        let picture = try upright()
        let stored = try picture.oriented(inverse(orientation))
        let back = try stored.oriented(orientation)
        #expect(back.width == picture.width && back.height == picture.height
                    && memcmp(back.pixels, picture.pixels, picture.width * picture.height * 3) == 0, "orientation \(orientation) round trip")
        return try Pixels.jpeg(stored)
    }

    /// A 4:1 cover whose window (1600×400) must move down to hold the block (centred, it would not).
    static let banner = VariantRecipe(name: "banner", fit: .cover, width: 800, height: 200, quality: 80)

    /// The default recipes (the analysis copy comes from the 1024-pixel preview), and small ones
    /// (no `contain` variant reaches 512 pixels: it comes from a 3/8 decode, flipped in the reads).
    static let recipeSets: [(name: String, recipes: [VariantRecipe])] = [
        ("defaults", VariantRecipe.defaults + [banner]),
        ("small", [
            VariantRecipe(name: "icon", fit: .contain, width: 200, height: 200, quality: 80),
            VariantRecipe(name: "thumb", fit: .cover, width: 320, height: 320, quality: 80),
            VariantRecipe(name: "feed", fit: .cover, width: 216, height: 270, quality: 80),
            VariantRecipe(name: "banner", fit: .cover, width: 400, height: 100, quality: 80),
        ]),
    ]

    @Test("the attention crops of a turned or mirrored photo cover its salient block", arguments: 1...8, 0..<recipeSets.count)
    func attentionFollowsTheOrientation(_ orientation: Int, _ set: Int) throws {
        let (name, recipes) = Self.recipeSets[set]
        let result = try Imaging.render(try Self.stored(orientation), recipes: recipes, options: RenderOptions(orientation: orientation))
        #expect(result.displayWidth == Self.displayWidth && result.displayHeight == Self.displayHeight)
        if name == "small" { #expect(max(result.decodedWidth, result.decodedHeight) == 600, "a 3/8 decode") }
        let block = Self.block
        // The feed window (4:5, the full height) holds the block's columns; centred it would stop at x 1120.
        let feed = try #require(result.variants.first { $0.name == "feed" })
        let feedCrop = try #require(feed.crop)
        #expect(feed.cropSource == .attention)
        #expect(feedCrop.x <= block.x && feedCrop.x + feedCrop.width >= block.x + block.width,
                "\(name), orientation \(orientation): feed \(feedCrop)")
        // The banner window (4:1, the full width) holds the block's rows; centred it would stop at y 804.
        let banner = try #require(result.variants.first { $0.name == "banner" })
        let bannerCrop = try #require(banner.crop)
        #expect(bannerCrop.y <= block.y && bannerCrop.y + bannerCrop.height >= block.y + block.height,
                "\(name), orientation \(orientation): banner \(bannerCrop)")
    }

    static func source(_ width: Int, _ height: Int) throws -> Renderer.Source {
        Renderer.Source(raster: try Raster(width: width, height: height), ratioX: Double(width) / 4032, ratioY: Double(height) / 3024)
    }

    @Test("the analysis copy comes from the smallest contain variant of at least 512 pixels, else the decode")
    func smallestLargeEnoughVariant() throws {
        let decode = try Self.source(2520, 1890)
        let mobile = try Self.source(2048, 1536), preview = try Self.source(1024, 768), icon = try Self.source(200, 150)
        var chosen = Renderer.analysisSource(among: [decode, mobile, preview, icon])
        #expect(chosen.raster.width == 1024 && Renderer.analysisFactor(chosen.raster) == 2, "the preview, halved")
        chosen = Renderer.analysisSource(among: [decode, icon])
        #expect(chosen.raster.width == 2520 && Renderer.analysisFactor(chosen.raster) == 5, "the decode")
        let edge = try Self.source(512, 384)
        #expect(Renderer.analysisSource(among: [decode, mobile, edge]).raster.width == 512)
        #expect(Renderer.analysisFactor(edge.raster) == 1)
    }

    @Test("statistics and placeholder from the preview agree with those from the decode")
    func variantSourceAgreesWithDecode() throws {
        let bytes = try Self.stored(1)
        let fromPreview = try Imaging.render(bytes, recipes: VariantRecipe.defaults, options: RenderOptions())
        let fromDecode = try Imaging.render(bytes, recipes: [], options: RenderOptions())
        #expect(abs(fromPreview.statistics.meanLuma - fromDecode.statistics.meanLuma) < 0.01)
        #expect(abs(fromPreview.statistics.clippedFraction - fromDecode.statistics.clippedFraction) < 0.01)
        #expect(fromPreview.thumbHash.count == fromDecode.thumbHash.count)
        let a = try #require(ThumbHash.averageRGB(fromPreview.thumbHash))
        let b = try #require(ThumbHash.averageRGB(fromDecode.thumbHash))
        #expect(abs(Int(a.red) - Int(b.red)) <= 2 && abs(Int(a.green) - Int(b.green)) <= 2 && abs(Int(a.blue) - Int(b.blue)) <= 2, "\(a) vs \(b)")
    }
}
