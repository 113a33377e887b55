import Failures
import Testing
@testable import Imaging

/// anything else ends in one clear line that says what is wrong.
@Suite("Errors")
struct ErrorTests {
    static func renderError(_ bytes: [UInt8]) -> ImagingError? {
        do {
            _ = try Imaging.render(bytes, recipes: VariantRecipe.defaults, options: RenderOptions())
            return nil
        } catch {
            return error as? ImagingError
        }
    }

    @Test("not-an-image inputs say what the bytes look like")
    func notImages() throws {
        #expect(Self.renderError([]) == .emptyFile)
        let cases: [([UInt8], String)] = [
            (Array("GIF89a\u{1}\u{0}\u{1}\u{0}".utf8), "GIF"),
            (Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8), "WebP"),
            (Array("hello, this is not a photo\n".utf8), "plain text"),
            ([0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0], "TIFF"),
            ([0x13, 0x37, 0xBE, 0xEF, 0x00, 0x01], "13 37 be ef"),
            ([0x89, 0x51, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0], "damaged PNG signature"),
        ]
        for (bytes, expected) in cases {
            let error = try #require(Self.renderError(bytes))
            #expect(error.description.contains(expected), "\(error)")
            #expect(error.description.contains("re-export"))
            #expect(Imaging.sniff(bytes) == nil)
        }
    }

    @Test("a HEIC's brand with nothing behind it is a HEIC that fails as corrupt, naming its format")
    func brokenHEIC() throws {
        let bytes: [UInt8] = [0, 0, 0, 0x18] + Array("ftypheic".utf8) + [0, 0, 0, 0]
        #expect(Imaging.sniff(bytes) == .heic)
        let error = try #require(Self.renderError(bytes))
        guard case .corrupt(let format, _) = error else {
            Issue.record("expected corrupt, got \(error)")
            return
        }
        #expect(format == .heic)
        #expect(error.category == .badInput)
        #expect(error.description.hasPrefix("HEIC data is corrupt"), "\(error)")
        // A MP4 video's brand is not taken for a photo.
        #expect(Imaging.sniff([0, 0, 0, 0x18] + Array("ftypmp42".utf8) + [0, 0, 0, 0]) == nil)
    }

    @Test("sniffing is by magic bytes only")
    func sniffing() {
        #expect(Imaging.sniff([0xFF, 0xD8, 0xFF, 0xE0]) == .jpeg)
        #expect(Imaging.sniff([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) == .png)
        #expect(Imaging.sniff([0x89, 0x50, 0x4E, 0x47]) == nil)
        #expect(ImageFormat.jpeg.mimeType == "image/jpeg" && ImageFormat.png.mimeType == "image/png")
    }

    @Test("a truncated JPEG is refused as truncated, not rendered grey", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"),
          arguments: ["jpeg/pillow/truncated_jpeg.jpg", "jpeg/pillow/ultrahdr.jpg", "jpeg/exifr/32d08f4a5eb10332506ebedbb9bc7257.jpg"])
    func truncatedJPEG(path: String) throws {
        let error = try #require(Self.renderError(try Corpus.bytes(path)))
        #expect(error == .truncated(format: .jpeg, detail: "premature end of JPEG data"))
        #expect(error.description.contains("truncated (premature end of JPEG data)"))
    }

    @Test("a JPEG cut anywhere in its scan data is truncated", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"))
    func cutJPEG() throws {
        let bytes = try Corpus.bytes("jpeg/pillow/hopper.jpg")
        for fraction in [0.3, 0.6, 0.95] {
            let cut = Array(bytes.prefix(Int(Double(bytes.count) * fraction)))
            #expect(Self.renderError(cut) == .truncated(format: .jpeg, detail: "premature end of JPEG data"))
        }
    }

    @Test("a truncated PNG is refused as truncated", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"))
    func truncatedPNG() throws {
        #expect(Self.renderError(try Corpus.bytes("png/pillow/truncated_image.png")) == .truncated(format: .png, detail: "premature end of PNG data"))
    }

    @Test("12-bit JPEG is refused with a clear reason", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"))
    func twelveBit() throws {
        let error = try #require(Self.renderError(try Corpus.bytes("jpeg/libjpeg-turbo/monkey12.jpg")))
        #expect(error == .unsupportedPrecision(bits: 12))
        #expect(error.description.hasPrefix("12-bit JPEG is not supported"))
    }

    @Test("every error description is one line")
    func oneLine() {
        let errors: [ImagingError] = [
            .emptyFile, .notAnImage(looksLike: "a GIF image"), .truncated(format: .png, detail: "x"), .corrupt(format: .jpeg, detail: "y"),
            .tooManyPixels(width: 1, height: 2, limit: 3), .zeroSize(width: 0, height: 1), .unsupportedPrecision(bits: 12),
            .invalidRecipe(name: "a", reason: "b"), .invalidColour("c"), .outOfMemory(width: 1, height: 1), .encodeFailed(variant: "v", detail: "d"),
        ]
        for error in errors { #expect(!error.description.contains("\n") && !error.description.isEmpty) }
    }

    @Test("invalid recipes and colours are refused")
    func invalidInputs() throws {
        let bytes = try Pixels.jpeg(try Pixels.raster(width: 8, height: 8) { _, _ in (1, 2, 3) })
        for recipe in [
            VariantRecipe(name: "", fit: .contain, width: 10, height: 10, quality: 80),
            VariantRecipe(name: "a", fit: .cover, width: 0, height: 10, quality: 80),
            VariantRecipe(name: "a", fit: .cover, width: 10, height: 10, quality: 101),
        ] {
            #expect(throws: ImagingError.self) { try Imaging.render(bytes, recipes: [recipe], options: RenderOptions()) }
        }
        #expect(throws: ImagingError.invalidColour("#12345")) { try RGB(hex: "#12345") }
        #expect(throws: ImagingError.invalidColour("zzzzzz")) { try RGB(hex: "zzzzzz") }
        #expect(try RGB(hex: "#a0B1c2") == RGB(r: 0xA0, g: 0xB1, b: 0xC2))
        #expect(RGB(r: 1, g: 2, b: 255).hex == "#0102ff")
    }
}
