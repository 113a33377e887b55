import Foundation
import Testing
@testable import Imaging

/// Placeholders: the same bytes as the format's reference encoder, and what they decode to.
@Suite("ThumbHash")
struct ThumbHashTests {
    /// A gradient: red along x, green along y, blue along both (each wrapping at 256).
    static func gradient(width: Int, height: Int) throws -> Raster {
        try Pixels.raster(width: width, height: height) { x, y in
            (UInt8((x * 8) & 255), UInt8((y * 10) & 255), UInt8(((x + y) * 4) & 255))
        }
    }

    /// The reference JavaScript encoder's (`rgbaToThumbHash` of evanw/thumbhash, run with Node on
    /// the same gradient with an opaque alpha) bytes for each size.
    static let reference: [(width: Int, height: Int, hash: [UInt8])] = [
        (32, 24, [93, 24, 14, 13, 154, 112, 119, 135, 129, 136, 136, 135, 136, 120, 136, 135, 120, 128, 8, 247, 136]),
        (24, 32, [153, 231, 9, 45, 20, 112, 119, 114, 120, 56, 136, 167, 135, 134, 120, 136, 135, 142, 0, 183, 248]),
        (100, 75, [222, 247, 5, 21, 134, 84, 98, 0, 116, 89, 134, 116, 52, 43, 88, 118, 132, 128, 43, 245, 168]),
    ]

    /// One channel's coefficients summed one at a time, pixel by pixel: the plain definition the
    /// encoder's grouped sums must equal bit for bit.
    static func plainChannel(_ values: [Double], width w: Int, height h: Int, nx: Int, ny: Int) -> (dc: Double, ac: [Double], scale: Double) {
        var dc = 0.0, ac: [Double] = [], scale = 0.0
        for cy in 0..<ny {
            var cx = 0
            while cx * ny < nx * (ny - cy) {
                var f = 0.0
                for y in 0..<h {
                    let fy = cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5))
                    for x in 0..<w { f += values[x + y * w] * cos(Double.pi / Double(w) * Double(cx) * (Double(x) + 0.5)) * fy }
                }
                f /= Double(w * h)
                if cx > 0 || cy > 0 {
                    ac.append(f)
                    scale = max(scale, abs(f))
                } else {
                    dc = f
                }
                cx += 1
            }
        }
        if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
        return (dc, ac, scale)
    }

    @Test("a channel's coefficients equal the plain one-at-a-time sums bit for bit")
    func groupedSumsArePlainSums() {
        var state: UInt64 = 7
        var differing: [String] = []
        for (w, h, nx, ny) in [(1, 1, 3, 3), (7, 5, 3, 3), (100, 75, 7, 5), (75, 100, 5, 7), (33, 100, 3, 7), (100, 100, 7, 7)] {
            let values = (0..<(w * h)).map { _ -> Double in
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return Double(state >> 40) / Double(1 << 24) - 0.25
            }
            let grouped = ThumbHash.channel(values, width: w, height: h, nx: nx, ny: ny)
            let plain = Self.plainChannel(values, width: w, height: h, nx: nx, ny: ny)
            if grouped.dc != plain.dc || grouped.ac != plain.ac || grouped.scale != plain.scale { differing.append("\(w)×\(h)") }
        }
        #expect(differing.isEmpty, "\(differing)")
    }

    @Test("the encoder gives the reference encoder's bytes", arguments: [0, 1, 2])
    func matchesTheReference(_ index: Int) throws {
        let (width, height, expected) = Self.reference[index]
        let hash = ThumbHash.encode(try Self.gradient(width: width, height: height))
        #expect(hash.count == expected.count, "\(hash)")
        #expect(Array(hash.prefix(5)) == Array(expected.prefix(5)), "the header: \(hash)")
        // Each 4-bit coefficient the same, or one step off where it sits on a rounding boundary
        // that the two runtimes' cosines put on either side (glibc's and V8's differ in the last bit).
        var offBy: [Int] = []
        for (mine, theirs) in zip(hash.dropFirst(5), expected.dropFirst(5)) {
            let low = Int(mine & 15) - Int(theirs & 15)
            let high = Int(mine >> 4) - Int(theirs >> 4)
            offBy += [abs(low), abs(high)]
        }
        #expect(offBy.allSatisfy { $0 <= 1 }, "\(hash)")
        #expect(offBy.filter { $0 == 1 }.count <= 1, "\(hash)")
    }

    @Test("the average colour and the aspect come back out of a hash")
    func decodesAverageAndAspect() throws {
        let hash = ThumbHash.encode(try Pixels.raster(width: 60, height: 30) { _, _ in (200, 100, 50) })
        let average = try #require(ThumbHash.averageRGB(hash))
        // Within the header's quantisation (6 bits of luminance, 6 of each colour difference).
        #expect(abs(Int(average.red) - 200) <= 6 && abs(Int(average.green) - 100) <= 6 && abs(Int(average.blue) - 50) <= 6, "\(average)")
        #expect(ThumbHash.aspectRatio(hash) == 7.0 / 4, "landscape 2:1 as 7 coefficients across, 4 down")
        let portrait = ThumbHash.encode(try Pixels.raster(width: 30, height: 60) { _, _ in (10, 20, 30) })
        #expect(ThumbHash.aspectRatio(portrait) == 4.0 / 7)
        #expect(ThumbHash.averageRGB([1, 2]) == nil)
    }

    @Test("a render's placeholder is the upright picture's, and small")
    func renderCarriesIt() throws {
        let photo = try JPEGCodec.encode(try Self.gradient(width: 320, height: 160), quality: 92, iccProfile: nil,
                                         progressive: false, optimize: false, variant: "test")
        let upright = try Imaging.render(photo, recipes: VariantRecipe.defaults, options: RenderOptions())
        #expect(upright.thumbHash.count <= 25)
        #expect(ThumbHash.aspectRatio(upright.thumbHash) ?? 0 > 1, "landscape")
        // Turned a quarter by its orientation, the placeholder turns with it.
        let turned = try Imaging.render(photo, recipes: VariantRecipe.defaults, options: RenderOptions(orientation: 6))
        #expect(ThumbHash.aspectRatio(turned.thumbHash) ?? 2 < 1, "portrait")
        #expect(try Imaging.placeholder(photo, options: RenderOptions()).count == upright.thumbHash.count)
    }
}
