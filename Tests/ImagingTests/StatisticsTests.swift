import Foundation
import Testing
@testable import Imaging

/// The picture statistics the cover policy scores.
@Suite("Statistics")
struct StatisticsTests {
    static func statistics(_ colour: @escaping (Int, Int) -> (UInt8, UInt8, UInt8)) throws -> PictureStatistics {
        let bytes = try Pixels.jpeg(try Pixels.raster(width: 256, height: 192, colour), quality: 98)
        return try Imaging.render(bytes, recipes: [], options: RenderOptions()).statistics
    }

    @Test("a flat mid-grey picture is not sharp, mid-bright and unclipped")
    func flat() throws {
        let stats = try Self.statistics { _, _ in (128, 128, 128) }
        #expect(stats.sharpness < 0.01)
        #expect(abs(stats.meanLuma - 128.0 / 255) < 0.01)
        #expect(stats.clippedFraction == 0)
    }

    @Test("fine detail is sharp; the same detail blurred is less so")
    func detail() throws {
        let sharp = try Self.statistics { x, y in (x / 2 + y / 2) % 2 == 0 ? (30, 30, 30) : (220, 220, 220) }
        let soft = try Self.statistics { x, _ in
            let v = UInt8(125 + Int(90 * sin(Double(x) / 12)))
            return (v, v, v)
        }
        #expect(sharp.sharpness > 0.9)
        #expect(soft.sharpness < sharp.sharpness - 0.3, "\(soft.sharpness) vs \(sharp.sharpness)")
    }

    @Test("black and white pixels count as clipped; mean luma follows brightness")
    func clipping() throws {
        let halfBlack = try Self.statistics { x, _ in x < 128 ? (0, 0, 0) : (120, 120, 120) }
        #expect(abs(halfBlack.clippedFraction - 0.5) < 0.05)
        let white = try Self.statistics { _, _ in (255, 255, 255) }
        #expect(white.clippedFraction > 0.99 && white.meanLuma > 0.99)
    }
}
