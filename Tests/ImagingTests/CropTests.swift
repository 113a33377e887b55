import Testing
@testable import Imaging

/// The feed crop keeps what matters, and a stored crop is reused.
@Suite("Crops")
struct CropTests {
    static let thumb = VariantRecipe(name: "thumb", fit: .cover, width: 120, height: 120, quality: 90)

    /// 600×200: flat grey, with a saturated, detailed patch in the right third.
    static func pictureWithDetailOnTheRight() throws -> [UInt8] {
        let raster = try Pixels.raster(width: 600, height: 200) { x, y in
            guard x >= 420 && x < 580 && y >= 30 && y < 170 else { return (128, 128, 128) }
            return ((x / 4 + y / 4) % 2 == 0) ? (230, 40, 40) : (20, 60, 220)
        }
        return try Pixels.jpeg(raster)
    }

    @Test("attention moves the window onto the detailed, colourful part")
    func attentionFindsDetail() throws {
        let result = try Imaging.render(try Self.pictureWithDetailOnTheRight(), recipes: [Self.thumb], options: RenderOptions(crop: .attention))
        let variant = try #require(result.variants.first)
        let crop = try #require(variant.crop)
        #expect(variant.cropSource == .attention)
        #expect(crop.width == 200 && crop.height == 200)
        // The patch spans x 420..<580; the window (200 wide) must cover most of it.
        #expect(crop.x >= 380 && crop.x + crop.width <= 600, "\(crop)")
    }

    @Test("the centre strategy centres the window")
    func centreStrategy() throws {
        let result = try Imaging.render(try Self.pictureWithDetailOnTheRight(), recipes: [Self.thumb], options: RenderOptions(crop: .centre))
        let variant = try #require(result.variants.first)
        #expect(variant.crop == CropRect(x: 200, y: 0, width: 200, height: 200))
        #expect(variant.cropSource == .centre)
    }

    @Test("a focal point wins over attention and is clamped inside")
    func focalPointWins() throws {
        let options = RenderOptions(focalPoint: FocalPoint(x: 0.05, y: 0.5), crop: .attention)
        let result = try Imaging.render(try Self.pictureWithDetailOnTheRight(), recipes: [Self.thumb], options: options)
        let variant = try #require(result.variants.first)
        #expect(variant.crop == CropRect(x: 0, y: 0, width: 200, height: 200))
        #expect(variant.cropSource == .focalPoint)
    }

    @Test("a stored crop is reused as is; one of another aspect is re-centred; one outside the picture is ignored")
    func storedCropReuse() throws {
        let bytes = try Self.pictureWithDetailOnTheRight()
        let stored = CropRect(x: 37, y: 10, width: 150, height: 150)
        var result = try Imaging.render(bytes, recipes: [Self.thumb], options: RenderOptions(crops: ["thumb": stored]))
        var variant = try #require(result.variants.first)
        #expect(variant.crop == stored && variant.cropSource == .stored)
        #expect(variant.width == 120 && variant.height == 120)

        // A 4:5 crop stored for another aspect: the square window is centred on it.
        let tall = CropRect(x: 100, y: 0, width: 160, height: 200)
        result = try Imaging.render(bytes, recipes: [Self.thumb], options: RenderOptions(crops: ["thumb": tall]))
        variant = try #require(result.variants.first)
        #expect(variant.crop == CropRect(x: 80, y: 0, width: 200, height: 200) && variant.cropSource == .stored)

        let outside = CropRect(x: 500, y: 0, width: 200, height: 200)
        result = try Imaging.render(bytes, recipes: [Self.thumb], options: RenderOptions(crop: .centre, crops: ["thumb": outside]))
        variant = try #require(result.variants.first)
        #expect(variant.cropSource == .centre)
    }

    @Test("a cover larger than a small source is the largest window of its aspect, not enlarged")
    func smallSourceCover() throws {
        let raster = try Pixels.raster(width: 90, height: 60) { x, y in (UInt8(x), UInt8(y), 100) }
        let recipe = VariantRecipe(name: "feed", fit: .cover, width: 1080, height: 1350, quality: 85)
        let result = try Imaging.render(try Pixels.jpeg(raster), recipes: [recipe], options: RenderOptions(crop: .centre))
        let variant = try #require(result.variants.first)
        #expect(variant.width == 48 && variant.height == 60)
        #expect(variant.crop == CropRect(x: 21, y: 0, width: 48, height: 60))
    }
}
