import Testing
@testable import Imaging

/// WebP variants: the recipe's size, smaller than the JPEG, the source's profile kept.
@Suite("WebP variants")
struct WebPTests {
    @Test("a WebP recipe gives a WebP of the recipe's size, smaller than the same JPEG")
    func webpVariant() throws {
        let photo = try JPEGCodec.encode(try Pixels.raster(width: 640, height: 480) { x, y in
            (UInt8((x * 7 + y) & 255), UInt8((y * 3) & 255), UInt8(((x ^ y) * 2) & 255))
        }, quality: 95, iccProfile: nil, progressive: false, optimize: false, variant: "source")
        let jpeg = VariantRecipe(name: "preview", fit: .contain, width: 320, height: 320, quality: 80)
        var webp = jpeg
        webp.name = "preview-webp"
        webp.format = .webp
        let result = try Imaging.render(photo, recipes: [jpeg, webp], options: RenderOptions())
        let encoded = try #require(result.variants.first { $0.name == "preview-webp" })
        #expect(encoded.format == .webp)
        #expect(Array(encoded.bytes.prefix(4)) == Array("RIFF".utf8))
        let size = try #require(WebPCodec.size(encoded.bytes))
        #expect(size.width == 320 && size.height == 240)
        #expect(encoded.width == 320 && encoded.height == 240)
        let sameJPEG = try #require(result.variants.first { $0.name == "preview" })
        #expect(encoded.bytes.count < sameJPEG.bytes.count, "\(encoded.bytes.count) vs \(sameJPEG.bytes.count)")
    }

    @Test("the source's ICC profile travels into a WebP variant's ICCP chunk")
    func profileKept() throws {
        let profile = Array("a stand-in ICC profile of some bytes".utf8)
        let raster = try Pixels.raster(width: 64, height: 48) { x, y in (UInt8(x * 4), UInt8(y * 5), 90) }
        let bytes = try WebPCodec.encode(raster, quality: 80, iccProfile: profile, variant: "thumb")
        #expect(Array(bytes[12..<16]) == Array("VP8X".utf8), "an extended file, to hold the profile")
        let iccp = try #require(bytes.indices.dropLast(4).first { Array(bytes[$0..<$0 + 4]) == Array("ICCP".utf8) })
        #expect(Array(bytes[(iccp + 8)..<(iccp + 8 + profile.count)]) == profile)
        let plain = try WebPCodec.encode(raster, quality: 80, iccProfile: nil, variant: "thumb")
        #expect(Array(plain[12..<16]) != Array("VP8X".utf8))
        #expect(WebPCodec.size(plain)?.width == 64)
    }
}
