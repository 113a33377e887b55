import Failures
import Foundation
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

    /// A progressive JPEG header (SOF2, 4:2:0) claiming width × height, its first scan's header
    /// and EOI: a few dozen bytes that ask libjpeg for whole-image coefficient buffers.
    static func progressiveHeader(width: Int, height: Int) -> [UInt8] {
        [0xFF, 0xD8, 0xFF, 0xC2, 0x00, 0x11, 0x08, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF),
         0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01,
         0xFF, 0xDA, 0x00, 0x0C, 0x03, 0x01, 0x00, 0x02, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xD9]
    }

    /// A 16×16 black PNG whose image data goes on inflating to about `inflatedGiB` GiB of zeros
    /// after its last row: one fixed-Huffman deflate block of a literal zero and then matches of
    /// 258 bytes at distance 1, 13 bits each (8 of them repeat every 13 bytes). Its IDAT CRC is
    /// left zero, which the decoder only warns about.
    static func zlibBombPNG(inflatedGiB: Double) -> [UInt8] {
        func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        // The bits, least significant first: block header (not final, fixed codes), the literal
        // 0 (00110000), then length code 285 (11000101) with distance code 0 (00000), repeated.
        var bits: [UInt8] = [0, 1, 0]
        func code(_ value: UInt32, _ count: Int) { for i in stride(from: count - 1, through: 0, by: -1) { bits.append(UInt8((value >> UInt32(i)) & 1)) } }
        code(0b0011_0000, 8)
        for _ in 0..<9 { code(0b1100_0101, 8); code(0, 5) }
        var bytes: [UInt8] = []
        for start in stride(from: 0, to: bits.count - 7, by: 8) {
            bytes.append((0..<8).reduce(0) { $0 | bits[start + $1] << UInt8($1) })
        }
        // Match 1 starts at bit 24: from byte 3 on, every 13 bytes hold 8 whole matches.
        let pattern = Array(bytes[3..<16])
        let repeats = Int(inflatedGiB * Double(1 << 30) / (8 * 258))
        var zlib: [UInt8] = [0x78, 0x01] + bytes[0..<3]
        zlib.reserveCapacity(zlib.count + repeats * pattern.count)
        for _ in 0..<repeats { zlib += pattern }
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + be(13) + Array("IHDR".utf8) + be(16) + be(16) + [8, 2, 0, 0, 0]
            + be(0x9091_6836) // IHDR's CRC for 16×16 8-bit RGB
            + be(UInt32(zlib.count)) + Array("IDAT".utf8) + zlib + be(0)
            + be(0) + Array("IEND".utf8) + be(0xAE42_6082)
    }

    @Test("a PNG whose image data inflates to gigabytes past its last row renders in bounded time")
    func zlibBomb() throws {
        let bomb = Self.zlibBombPNG(inflatedGiB: 6)
        #expect(bomb.count > 30_000_000, "a 6 GiB bomb is tens of megabytes: \(bomb.count)")
        let started = Date()
        // Reading on to the end of its data would take seconds of inflating; the decoder stops
        // a megabyte past the last row, long before this deadline.
        let result = try Deadline.during(Date().addingTimeInterval(20)) {
            try Imaging.render(bomb, recipes: VariantRecipe.defaults, options: RenderOptions())
        }
        #expect(result.displayWidth == 16 && result.displayHeight == 16)
        #expect(Date().timeIntervalSince(started) < 20)
    }

    @Test("a progressive JPEG that claims 10000×9999 pixels in a few bytes is refused above the memory ceiling")
    func progressiveCoefficientBomb() throws {
        let bytes = Self.progressiveHeader(width: 10000, height: 9999)
        #expect(bytes.count < 100)
        let error = #expect(throws: ImagingError.self) {
            try Imaging.render(bytes, recipes: VariantRecipe.defaults, options: RenderOptions())
        }
        guard case .overMemoryCeiling(let detail) = error else {
            Issue.record("expected the memory ceiling, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("10000x9999"), "\(detail)")
        #expect(error?.category == .tooLarge)
        // A baseline file of the same size is decoded a band of rows at a time: no ceiling applies
        // (it fails here only because it holds no image data).
        let baseline = #expect(throws: ImagingError.self) {
            try Imaging.render(Self.jpegHeader(width: 10000, height: 9999), recipes: VariantRecipe.defaults, options: RenderOptions())
        }
        if case .overMemoryCeiling = baseline { Issue.record("a baseline JPEG has no coefficient buffers to refuse") }
    }

    @Test("a decode past the thread's deadline stops with pastDeadline, JPEG and PNG alike")
    func deadlineStopsDecoding() throws {
        let jpeg = try JPEGCodec.encode(Raster(width: 64, height: 48), quality: 90, iccProfile: nil,
                                        progressive: false, optimize: false, variant: "test")
        let png = PNGTests.png(width: 4, height: 4, colourType: 2, rows: Array(repeating: Array(repeating: 9, count: 12), count: 4))
        for bytes in [jpeg, png] {
            #expect(throws: ImagingError.pastDeadline) {
                try Deadline.during(Date().addingTimeInterval(-1)) {
                    try Imaging.render(bytes, recipes: VariantRecipe.defaults, options: RenderOptions())
                }
            }
            // The same file with time to spare renders, and no deadline is left behind.
            _ = try Deadline.during(Date().addingTimeInterval(60)) {
                try Imaging.render(bytes, recipes: VariantRecipe.defaults, options: RenderOptions())
            }
            _ = try Imaging.render(bytes, recipes: VariantRecipe.defaults, options: RenderOptions())
        }
        #expect(ImagingError.pastDeadline.category == .timeout)
    }

    @Test("a HEIC whose ispe box claims 60000×60000 pixels is refused by the pixel limit before any decode",
          .enabled(if: Corpus.isAvailable, "../shared/corpus not found"))
    func heifClaimingHugeSize() throws {
        var bytes = try Corpus.bytes("heif/exifr/heic-single.heic")
        // ispe: size, "ispe", version and flags (4 bytes), then width and height (4 bytes each).
        let ispe = try #require(bytes.indices.dropLast(16).first { Array(bytes[$0..<$0 + 4]) == Array("ispe".utf8) })
        for offset in [ispe + 8, ispe + 12] {
            bytes.replaceSubrange(offset..<offset + 4, with: [0x00, 0x00, 0xEA, 0x60])
        }
        let started = Date()
        let error = #expect(throws: ImagingError.self) {
            try Imaging.render(bytes, recipes: VariantRecipe.defaults, options: RenderOptions())
        }
        guard case .tooManyPixels(let width, let height, _) = error else {
            Issue.record("expected the pixel limit, got \(String(describing: error))")
            return
        }
        #expect(width == 60000 && height == 60000)
        #expect(Date().timeIntervalSince(started) < 20, "refused from the header, not after a decode")
    }
}
