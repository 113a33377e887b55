import Testing
@testable import Imaging

/// PNG: every colour type and bit depth, interlacing, transparency; corrupt files refused.
@Suite("PNG")
struct PNGTests {
    /// A PNG with stored (uncompressed) deflate blocks: enough to make exact test pictures.
    static func png(width: Int, height: Int, colourType: UInt8, rows: [[UInt8]]) -> [UInt8] {
        func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        func crc(_ data: [UInt8]) -> UInt32 {
            var c: UInt32 = 0xFFFF_FFFF
            for byte in data {
                c ^= UInt32(byte)
                for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            }
            return c ^ 0xFFFF_FFFF
        }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] { be(UInt32(data.count)) + Array(type.utf8) + data + be(crc(Array(type.utf8) + data)) }
        let raw: [UInt8] = rows.flatMap { [UInt8(0)] + $0 }
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in raw { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
        let length = raw.count
        let header: [UInt8] = [0x78, 0x01, 0x01, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
        let zlib = header + raw + be((b << 16) | a)
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + chunk("IHDR", be(UInt32(width)) + be(UInt32(height)) + [8, colourType, 0, 0, 0]) + chunk("IDAT", zlib) + chunk("IEND", [])
    }

    static let suite = Corpus.imageFiles().filter { $0.hasPrefix("png/pngsuite/") }

    @Test("PngSuite: every valid file decodes at its IHDR size; the x* files are refused (but xcsn0g01)",
          .enabled(if: Corpus.isAvailable, "../shared/corpus not found"), arguments: suite)
    func pngSuite(path: String) throws {
        let bytes = try Corpus.bytes(path)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        // xcsn0g01 only has a wrong IDAT CRC; its zlib stream is intact, and Pillow decodes it too.
        if name.hasPrefix("x") && name != "xcsn0g01.png" {
            #expect(throws: ImagingError.self) { try PNGCodec.decode(bytes, pixelLimit: 0, background: .white) }
            return
        }
        let (info, decoded) = try PNGCodec.decode(bytes, pixelLimit: 0, background: .white)
        #expect(decoded.raster.width == info.width && decoded.raster.height == info.height)
        if let row = Corpus.manifest[path], let width = row.width, let height = row.height {
            #expect(info.width == width && info.height == height)
        }
    }

    @Test("interlaced and non-interlaced PngSuite pairs give the same pixels", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"),
          arguments: ["0g01", "0g02", "0g04", "0g08", "0g16", "2c08", "2c16", "3p01", "3p02", "3p04", "3p08", "4a08", "4a16", "6a08", "6a16"])
    func interlacing(kind: String) throws {
        let plain = try Pixels.decode(try Corpus.bytes("png/pngsuite/basn\(kind).png"))
        let interlaced = try Pixels.decode(try Corpus.bytes("png/pngsuite/basi\(kind).png"))
        #expect(Pixels.meanAbsoluteDifference(plain, interlaced) == 0)
    }

    @Test("an IDAT CRC error alone does not lose the picture", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"))
    func idatCRC() throws {
        let damaged = try Pixels.decode(try Corpus.bytes("png/pngsuite/xcsn0g01.png"))
        let intact = try Pixels.decode(try Corpus.bytes("png/pngsuite/basn0g01.png"))
        #expect(Pixels.meanAbsoluteDifference(damaged, intact) == 0)
    }

    @Test("transparency is flattened on the background colour")
    func alphaFlattened() throws {
        // RGBA: transparent red, opaque green, half-transparent white.
        let bytes = Self.png(width: 3, height: 1, colourType: 6, rows: [[255, 0, 0, 0, 0, 255, 0, 255, 255, 255, 255, 128]])
        let background = try RGB(hex: "#0000ff")
        let raster = try PNGCodec.decode(bytes, pixelLimit: 0, background: background).1.raster
        let pixels = (0..<9).map { raster.pixels[$0] }
        #expect(Array(pixels[0..<3]) == [0, 0, 255])
        #expect(Array(pixels[3..<6]) == [0, 255, 0])
        #expect(Array(pixels[6..<9]) == [128, 128, 255])
        // Gray + alpha, on white.
        let gray = Self.png(width: 2, height: 1, colourType: 4, rows: [[0, 0, 0, 255]])
        let grayRaster = try PNGCodec.decode(gray, pixelLimit: 0, background: .white).1.raster
        #expect((0..<6).map { grayRaster.pixels[$0] } == [255, 255, 255, 0, 0, 0])
    }

    @Test("palette transparency (tRNS) is flattened too", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"))
    func paletteTransparency() throws {
        let bytes = try Corpus.bytes("png/pngsuite/tbrn2c08.png")
        let onWhite = try PNGCodec.decode(bytes, pixelLimit: 0, background: .white).1.raster
        let onBlack = try PNGCodec.decode(bytes, pixelLimit: 0, background: RGB(r: 0, g: 0, b: 0)).1.raster
        #expect(Pixels.meanAbsoluteDifference(onWhite, onBlack) > 0, "transparent pixels should take the background")
    }

    @Test("libpng crashers and eXIf files end in a picture or an ImagingError", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"),
          arguments: Corpus.imageFiles().filter { $0.hasPrefix("png/libpng-crashers/") || $0.contains("exif") || $0.contains("eXIf") })
    func crashers(path: String) throws {
        let bytes = try Corpus.bytes(path)
        do {
            let result = try Imaging.render(bytes, recipes: [VariantRecipe(name: "t", fit: .contain, width: 64, height: 64, quality: 80)], options: RenderOptions())
            #expect(result.variants.count == 1)
        } catch let error as ImagingError {
            #expect(!error.description.isEmpty)
        }
    }
}
