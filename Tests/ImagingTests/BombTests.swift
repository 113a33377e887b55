import Testing
@testable import Imaging

/// Lying headers are refused before any raster is allocated.
@Suite("Decompression bombs")
struct BombTests {
    /// A minimal JPEG: SOI, a baseline SOF0 claiming width × height, then EOI.
    static func jpegHeader(width: Int, height: Int) -> [UInt8] {
        [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x11, 0x08, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF),
         0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01, 0xFF, 0xD9]
    }

    /// A PNG signature and an IHDR claiming width × height (8-bit RGB), nothing else.
    static func pngHeader(width: UInt32, height: UInt32) -> [UInt8] {
        func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + be(13) + Array("IHDR".utf8) + be(width) + be(height) + [8, 2, 0, 0, 0]
            + [0, 0, 0, 0]
    }

    static func isTooManyPixels(_ error: any Error) -> Bool {
        if case ImagingError.tooManyPixels = error { return true }
        return false
    }

    @Test("the corpus's huge-dimension headers fail with the pixel-limit error", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"),
          arguments: ["jpeg/huge-dimension-headers/754664a12e36abff7950e796c906ae39.jpg",
                      "png/huge-dimension-headers/817f96555e2d683e7b12f778c4e38022.png"])
    func corpusBombs(path: String) throws {
        let bytes = try Corpus.bytes(path)
        let error = #expect(throws: ImagingError.self) {
            try Imaging.render(bytes, recipes: VariantRecipe.defaults, options: RenderOptions())
        }
        #expect(error.map(Self.isTooManyPixels) == true, "\(path): \(String(describing: error))")
    }

    @Test("a 613-byte file claiming 193×31237 is refused under a lower limit and decodes under the default",
          .enabled(if: Corpus.isAvailable, "../shared/corpus not found"))
    func tallProgressive() throws {
        // 6.0 megapixels: below the default 100 MP, and Pillow decodes it; a tighter limit refuses it.
        let bytes = try Corpus.bytes("jpeg/huge-dimension-headers/8e5e74dbf9b68a322fbb9512db837329.jpg")
        #expect(throws: ImagingError.tooManyPixels(width: 193, height: 31237, limit: 5_000_000)) {
            try Imaging.render(bytes, recipes: VariantRecipe.defaults, options: RenderOptions(pixelLimit: 5_000_000))
        }
        let result = try Imaging.render(bytes, recipes: VariantRecipe.defaults, options: RenderOptions())
        #expect(result.displayWidth == 193 && result.displayHeight == 31237)
    }

    @Test("synthetic headers above the limit are refused, naming the claimed size")
    func syntheticBombs() throws {
        #expect(throws: ImagingError.tooManyPixels(width: 60000, height: 60000, limit: RenderOptions.defaultPixelLimit)) {
            try Imaging.render(Self.jpegHeader(width: 60000, height: 60000), recipes: VariantRecipe.defaults, options: RenderOptions())
        }
        #expect(throws: ImagingError.tooManyPixels(width: 100_000, height: 100_000, limit: RenderOptions.defaultPixelLimit)) {
            try Imaging.render(Self.pngHeader(width: 100_000, height: 100_000), recipes: VariantRecipe.defaults, options: RenderOptions())
        }
        // The limit is configurable: 2000×2000 passes the header check by default, fails under 1 MP.
        #expect(throws: ImagingError.tooManyPixels(width: 2000, height: 2000, limit: 1_000_000)) {
            try Imaging.render(Self.jpegHeader(width: 2000, height: 2000), recipes: VariantRecipe.defaults, options: RenderOptions(pixelLimit: 1_000_000))
        }
        #expect(throws: ImagingError.tooManyPixels(width: 100_000, height: 100_000, limit: 1_000)) {
            try Imaging.probe(Self.pngHeader(width: 100_000, height: 100_000), pixelLimit: 1_000)
        }
    }

    @Test("zero dimensions are an error of their own")
    func zeroSize() throws {
        #expect(throws: ImagingError.zeroSize(width: 0, height: 5)) {
            try Imaging.render(Self.pngHeader(width: 0, height: 5), recipes: VariantRecipe.defaults, options: RenderOptions())
        }
        #expect(throws: ImagingError.zeroSize(width: 200, height: 0)) {
            try Imaging.render(Self.jpegHeader(width: 200, height: 0), recipes: VariantRecipe.defaults, options: RenderOptions())
        }
    }

    @Test("a zTXt decompression bomb is never inflated", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"))
    func textBomb() throws {
        // Text chunks are skipped unread, so the 1×1 picture renders and the bomb stays compressed.
        let result = try Imaging.render(try Corpus.bytes("png/pillow/png_decompression_dos.png"), recipes: VariantRecipe.defaults, options: RenderOptions())
        #expect(result.displayWidth == 1 && result.displayHeight == 1)
    }
}
