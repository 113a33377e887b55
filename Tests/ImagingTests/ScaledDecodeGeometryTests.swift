import Foundation
import Testing
@testable import Imaging

/// Variants sampled from a scaled JPEG decode keep their lines where the geometry puts them,
/// at every decode scale, on a picture whose sides are not multiples of 8 (so the decode's size
/// is fractional and rounded up).
@Suite("Scaled decode geometry")
struct ScaledDecodeGeometryTests {
    /// Odd sides: every M/8 of them is fractional; 4099 / 8 still leaves the 512-pixel analysis edge.
    static let width = 1237, height = 4099
    /// A soft horizontal line and a soft vertical one (Gaussian, sigma 24 source pixels: wide
    /// against the 8×8 blocks that a 1/8 decode averages), near the far edges where drift is largest.
    /// Each is 200 levels tall, so that the 8-bit output's rounding moves its centroid by about
    /// 0.02 px at most (at 100 levels it moved it by up to 0.055 px at some sizes, the bound's
    /// size); so that they never add up past 255, the horizontal one stops at 70 % of the width
    /// and the vertical one at 80 % of the height, each end far outside the other's window.
    static let lineY = 0.9 * Double(height) + 0.37, lineX = 0.85 * Double(width) + 0.21, sigma = 24.0
    static let amplitude = 200.0, horizontalEnd = Int(0.7 * Double(width)), verticalEnd = Int(0.8 * Double(height))

    static let source: [UInt8] = {
        let raster = try! Raster(width: width, height: height)
        let rows = (0..<height).map { amplitude * exp(-pow(Double($0) + 0.5 - lineY, 2) / (2 * sigma * sigma)) }
        let columns = (0..<width).map { amplitude * exp(-pow(Double($0) + 0.5 - lineX, 2) / (2 * sigma * sigma)) }
        for y in 0..<height {
            let row = raster.pixels + y * raster.rowBytes
            for x in 0..<width {
                let value = UInt8((40 + (x < horizontalEnd ? rows[y] : 0) + (y < verticalEnd ? columns[x] : 0)).rounded())
                row[x * 3] = value
                row[x * 3 + 1] = value
                row[x * 3 + 2] = value
            }
        }
        return try! Pixels.jpeg(raster, quality: 100)
    }()

    /// The centroid (in output pixel units, centres at i + 0.5) of `profile` above its baseline
    /// (the mean of the window's two ends), within `radius` of `around`.
    static func centroid(_ profile: [Double], around: Double, radius: Int) -> Double {
        let low = max(0, Int(around) - radius), high = min(profile.count - 1, Int(around) + radius)
        let baseline = (profile[low] + profile[high]) / 2
        var sum = 0.0, weight = 0.0
        for i in low...high {
            let v = profile[i] - baseline
            sum += (Double(i) + 0.5) * v
            weight += v
        }
        return sum / weight
    }

    @Test("each variant's lines lie within 0.05 px of their exact place at every decode scale the render uses (1/8 to 6/8, 8/8)",
          arguments: Renderer.jpegScales)
    func lineCentroids(scale: Int) throws {
        let (width, height) = (Self.width, Self.height)
        // The smallest variant height that the scale below cannot cover, so that the decode is at scale/8.
        let below = Renderer.jpegScales.last { $0 < scale }
        let decodedBelow = below.map { (height * $0 + 7) / 8 } ?? 0
        let variantHeight = below == nil ? 400 : decodedBelow + 1
        let recipe = VariantRecipe(name: "v", fit: .contain, width: 4000, height: variantHeight, quality: 100)
        let result = try Imaging.render(Self.source, recipes: [recipe], options: RenderOptions())
        #expect(result.decodedHeight == (height * scale + 7) / 8, "decoded at \(scale)/8")
        let variant = try #require(result.variants.first)
        let raster = try Pixels.decode(variant.bytes)
        // Row and column profiles, each averaged over the whole other axis.
        var rows = [Double](repeating: 0, count: raster.height), columns = [Double](repeating: 0, count: raster.width)
        for y in 0..<raster.height {
            for x in 0..<raster.width {
                let v = Double(raster.pixels[y * raster.rowBytes + x * 3 + 1])
                rows[y] += v / Double(raster.width)
                columns[x] += v / Double(raster.height)
            }
        }
        // A display point p maps to p × (variant size / display size) in the variant.
        let idealY = Self.lineY * Double(raster.height) / Double(height)
        let idealX = Self.lineX * Double(raster.width) / Double(width)
        let radiusY = Int(5 * Self.sigma * Double(raster.height) / Double(height)) + 2
        let radiusX = Int(5 * Self.sigma * Double(raster.width) / Double(width)) + 2
        let errorY = Self.centroid(rows, around: idealY, radius: radiusY) - idealY
        let errorX = Self.centroid(columns, around: idealX, radius: radiusX) - idealX
        print(String(format: "decode %d/8 (%d×%d of %.3f×%.3f) to %d×%d: line drift x %+.4f px, y %+.4f px", scale,
                     result.decodedWidth, result.decodedHeight, Double(width * scale) / 8, Double(height * scale) / 8,
                     raster.width, raster.height, errorX, errorY))
        #expect(abs(errorY) <= 0.05, "vertical drift \(errorY) px at \(scale)/8")
        #expect(abs(errorX) <= 0.05, "horizontal drift \(errorX) px at \(scale)/8")
    }
}
