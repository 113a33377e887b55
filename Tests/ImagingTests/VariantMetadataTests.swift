import Testing
@testable import Imaging

/// Variants keep the colour profile and carry nothing else.
@Suite("Variant metadata")
struct VariantMetadataTests {
    static let recipes = [
        VariantRecipe(name: "small", fit: .cover, width: 64, height: 64, quality: 80),
        VariantRecipe(name: "large", fit: .contain, width: 300, height: 300, quality: 85),
    ]

    /// APP1 (EXIF, XMP), APP13 (IPTC) and any "Exif"/"GPS" bytes before the scan.
    static func personalMarkers(_ jpeg: [UInt8]) -> [UInt8] {
        Pixels.markers(jpeg).map(\.marker).filter { $0 == 0xE1 || $0 == 0xED || ($0 >= 0xE3 && $0 <= 0xEF) }
    }

    @Test("with imaging.colour keep, a source's ICC profile is in every variant, byte for byte", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"),
          arguments: ["jpeg/pillow/icc_profile_big.jpg", "jpeg/metadata-extractor/Multiple_ICC_segments.jpg"])
    func iccKept(path: String) throws {
        let bytes = try Corpus.bytes(path)
        let source = try JPEGCodec.decode(bytes, scaleNumerator: 8, pixelLimit: 0).1
        let profile = try #require(source.iccProfile)
        let result = try Imaging.render(bytes, recipes: Self.recipes, options: RenderOptions(colour: .keep))
        #expect(result.info.hasICCProfile)
        for variant in result.variants {
            let decoded = try JPEGCodec.decode(variant.bytes, scaleNumerator: 8, pixelLimit: 0).1
            #expect(decoded.iccProfile == profile, "\(variant.name) lost or changed the profile")
        }
    }

    @Test("by default, an sRGB profile is kept and any other converted away or dropped", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"),
          arguments: ["jpeg/pillow/icc_profile_big.jpg", "jpeg/metadata-extractor/Multiple_ICC_segments.jpg"])
    func iccConvertedOrKept(path: String) throws {
        let bytes = try Corpus.bytes(path)
        let profile = try #require(try JPEGCodec.decode(bytes, scaleNumerator: 8, pixelLimit: 0).1.iccProfile)
        let result = try Imaging.render(bytes, recipes: Self.recipes, options: RenderOptions())
        for variant in result.variants {
            let kept = try JPEGCodec.decode(variant.bytes, scaleNumerator: 8, pixelLimit: 0).1.iccProfile
            #expect(kept == (ColourConversion.isSRGB(profile) ? profile : nil), "\(variant.name)")
        }
    }

    @Test("a source without a profile gives variants without one", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"))
    func noProfileInvented() throws {
        let result = try Imaging.render(try Corpus.bytes("jpeg/pillow/hopper.jpg"), recipes: Self.recipes, options: RenderOptions())
        for variant in result.variants {
            #expect(!Pixels.markers(variant.bytes).contains { $0.marker == 0xE2 })
        }
    }

    @Test("no variant carries EXIF, GPS, XMP or IPTC", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"),
          arguments: ["jpeg/metadata-extractor/Apple_iPhone_6.jpg", "jpeg/pillow/iptc.jpg", "jpeg/exifr/issue-exifr-41-Error_Segment_Unreachable.jpg",
                      "png/exifr/png_with_exif_and_gps.png"])
    func noPersonalMetadata(path: String) throws {
        let bytes = try Corpus.bytes(path)
        let result = try Imaging.render(bytes, recipes: Self.recipes, options: RenderOptions())
        for variant in result.variants {
            #expect(Self.personalMarkers(variant.bytes).isEmpty, "\(path) \(variant.name)")
            let header = variant.bytes.prefix(2048)
            #expect(!header.starts(with: Array("Exif".utf8)) && header.firstRange(of: Array("Exif\0".utf8)) == nil)
            #expect(header.firstRange(of: Array("GPS".utf8)) == nil)
        }
    }

    @Test("the marker check sees EXIF where it is", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"))
    func markerCheckCanFail() throws {
        // The source itself carries APP1 EXIF with GPS, so the check above is not vacuous.
        let source = try Corpus.bytes("jpeg/metadata-extractor/Apple_iPhone_6.jpg")
        #expect(Self.personalMarkers(source).contains(0xE1))
    }
}
