import Testing
@testable import Imaging

/// Every variant is upright, whatever EXIF orientation the file was stored with.
@Suite("Orientation")
struct OrientationTests {
    /// Mean absolute difference (0...255 levels a channel) below which two renders show the same
    /// picture. Measured: the same orientation differs by at most ~4.4 levels (the hopper files were
    /// re-encoded by Pillow, the recurser files by their author; these are JPEG losses), while any
    /// wrong flip or quarter turn differs by 39 levels or more. 8 sits between, with room both ways.
    static let sameThreshold = 8.0
    /// A wrong orientation must differ by more than this, so a broken transform fails the test.
    static let wrongThreshold = 20.0

    /// A small contain variant: enough pixels to see orientation, cheap to decode (scaled).
    static let probeRecipe = VariantRecipe(name: "probe", fit: .contain, width: 240, height: 240, quality: 95)

    /// The orientation that is wrong by one flip or quarter turn but gives the same displayed size.
    static func wrong(_ orientation: Int) -> Int { orientation <= 4 ? orientation % 4 + 1 : (orientation - 4) % 4 + 5 }

    /// Mean absolute difference per channel between the upright renders of two files.
    static func difference(_ path: String, orientation: Int, reference: String, referenceOrientation: Int = 1) throws -> Double {
        let a = try Imaging.render(try Corpus.bytes(path), recipes: [probeRecipe], options: RenderOptions(orientation: orientation))
        let b = try Imaging.render(try Corpus.bytes(reference), recipes: [probeRecipe], options: RenderOptions(orientation: referenceOrientation))
        let left = try Pixels.decode(try #require(a.variants.first).bytes)
        let right = try Pixels.decode(try #require(b.variants.first).bytes)
        try #require(left.width == right.width && left.height == right.height, "\(path): \(left.width)×\(left.height) vs \(right.width)×\(right.height)")
        return Pixels.meanAbsoluteDifference(left, right)
    }

    static let recurserFiles = (1...8).flatMap { ["jpeg/orientation-recurser/Landscape_\($0).jpg", "jpeg/orientation-recurser/Portrait_\($0).jpg"] }

    @Test("orientation-recurser photos look like their _1 file", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"),
          arguments: recurserFiles)
    func recurser(path: String) throws {
        let orientation = try #require(Corpus.manifest[path]?.orientation)
        let reference = path.replacingOccurrences(of: "_\(orientation).jpg", with: "_1.jpg")
        let right = try Self.difference(path, orientation: orientation, reference: reference)
        let wrong = try Self.difference(path, orientation: Self.wrong(orientation), reference: reference)
        #expect(right < Self.sameThreshold, "\(path): \(right)")
        #expect(wrong > Self.wrongThreshold, "\(path) rendered with orientation \(Self.wrong(orientation)): \(wrong)")
    }

    static let exifrFiles = (1...8).map { "jpeg/exifr/orientation/f\($0)t.jpg" }

    @Test("exifr f1t…f8t look like f1t", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"), arguments: exifrFiles)
    func exifr(path: String) throws {
        let orientation = try #require(Corpus.manifest[path]?.orientation)
        let right = try Self.difference(path, orientation: orientation, reference: "jpeg/exifr/orientation/f1t.jpg")
        let wrong = try Self.difference(path, orientation: Self.wrong(orientation), reference: "jpeg/exifr/orientation/f1t.jpg")
        #expect(right < Self.sameThreshold, "\(path): \(right)")
        #expect(wrong > Self.wrongThreshold, "\(path) rendered with orientation \(Self.wrong(orientation)): \(wrong)")
    }

    static let hopperFiles = (2...8).map { "jpeg/pillow/hopper_orientation_\($0).jpg" }

    @Test("Pillow's hopper_orientation_N look like hopper.jpg", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"), arguments: hopperFiles)
    func hopper(path: String) throws {
        let orientation = try #require(Corpus.manifest[path]?.orientation)
        let right = try Self.difference(path, orientation: orientation, reference: "jpeg/pillow/hopper.jpg")
        let wrong = try Self.difference(path, orientation: Self.wrong(orientation), reference: "jpeg/pillow/hopper.jpg")
        #expect(right < Self.sameThreshold, "\(path): \(right)")
        #expect(wrong > Self.wrongThreshold, "\(path) rendered with orientation \(Self.wrong(orientation)): \(wrong)")
    }
}
