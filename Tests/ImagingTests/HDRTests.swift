import CHEIF
import Foundation
import Testing
@testable import Imaging

/// HDR (PQ, HLG) HEIF/AVIF tone-mapped to SDR sRGB (CHEIF's dr_hdr_to_sdr).
@Suite("HDR to SDR")
struct HDRTests {
    /// SMPTE ST 2084, written again here: luminance in cd/m2 to the PQ signal.
    static func pqSignal(_ nits: Double) -> Double {
        let m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128, c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32
        let y = pow(nits / 10000, m1)
        return pow((c1 + c2 * y) / (1 + c3 * y), m2)
    }

    static func srgbByte(_ linear: Double) -> Double {
        let v = min(max(linear, 0), 1)
        return 255 * (v <= 0.0031308 ? 12.92 * v : 1.055 * pow(v, 1 / 2.4) - 0.055)
    }

    static let displayP3: [Double] = [0.680, 0.320, 0.265, 0.690, 0.150, 0.060, 0.3127, 0.3290]

    /// One grey pixel of `nits` coded in PQ at 10 bits, through dr_hdr_to_sdr.
    static func greyPixel(nits: Double, peak: Double, primaries: [Double] = displayP3) -> [UInt8] {
        let code = UInt16((pqSignal(nits) * 1023).rounded())
        let plane: [UInt8] = (0..<3).flatMap { _ in [UInt8(code & 0xFF), UInt8(code >> 8)] }
        var out = [UInt8](repeating: 0, count: 3)
        let result = dr_hdr_to_sdr(plane, 6, 1, 1, 10, DR_HDR_PQ, primaries, peak, &out)
        #expect(result == 0)
        return out
    }

    @Test("BT.2390's EETF keeps the dark and middle tones, reaches SDR white at the source's peak and never falls")
    func eetfShape() {
        #expect(abs(dr_hdr_tone_map_luminance(0, 1000)) < 1e-6)
        #expect(abs(dr_hdr_tone_map_luminance(50, 1000) - 50) < 1e-6)
        #expect(abs(dr_hdr_tone_map_luminance(1000, 1000) - DR_HDR_SDR_WHITE) < 0.01)
        #expect(abs(dr_hdr_tone_map_luminance(4000, 1000) - DR_HDR_SDR_WHITE) < 0.01)
        var previous = -1.0
        for step in 0...1000 {
            let out = dr_hdr_tone_map_luminance(Double(step), 1000)
            #expect(out >= previous - 1e-9 && out <= DR_HDR_SDR_WHITE + 1e-6)
            previous = out
        }
        // A source no brighter than SDR white is only clipped.
        #expect(abs(dr_hdr_tone_map_luminance(150, 180) - 150) < 1e-9)
    }

    @Test("greys map to sRGB: black to 0, reference white (203 cd/m2) and above the peak to 255, 50 cd/m2 as its sRGB code")
    func greys() {
        #expect(Self.greyPixel(nits: 0, peak: 1000) == [0, 0, 0])
        #expect(Self.greyPixel(nits: 2000, peak: 1000) == [255, 255, 255])
        // 203 cd/m2 is above the knee for a 1000 cd/m2 source: mapped below white, but bright.
        let white = Self.greyPixel(nits: 203, peak: 1000)
        #expect(white[0] > 200 && white[0] == white[1] && white[1] == white[2])
        // Below the knee the light is unchanged: 50 cd/m2 is 50/203 of SDR white, within the 10-bit code's step.
        let expected = Self.srgbByte(50 / DR_HDR_SDR_WHITE)
        for channel in Self.greyPixel(nits: 50, peak: 1000) { #expect(abs(Double(channel) - expected) <= 1.5) }
    }

    @Test("the gamut matrix takes P3's white to sRGB's white and BT.2020's red outside sRGB")
    func matrices() {
        var matrix = [Double](repeating: 0, count: 9), luma = [Double](repeating: 0, count: 3)
        #expect(dr_hdr_matrix(Self.displayP3, &matrix, &luma) == 1)
        for row in 0..<3 { #expect(abs(matrix[row * 3] + matrix[row * 3 + 1] + matrix[row * 3 + 2] - 1) < 1e-4) }
        #expect(abs(luma.reduce(0, +) - 1) < 1e-4)
        #expect(abs(luma[1] - 0.6917) < 1e-3)
        let bt2020: [Double] = [0.708, 0.292, 0.170, 0.797, 0.131, 0.046, 0.3127, 0.3290]
        #expect(dr_hdr_matrix(bt2020, &matrix, &luma) == 1)
        #expect(matrix[3] < 0 && matrix[6] < 0 && matrix[0] > 1.6)
        // DCI-P3's white is not D65: adapted, its white still lands on sRGB's.
        let dci: [Double] = [0.680, 0.320, 0.265, 0.690, 0.150, 0.060, 0.314, 0.351]
        #expect(dr_hdr_matrix(dci, &matrix, &luma) == 1)
        for row in 0..<3 { #expect(abs(matrix[row * 3] + matrix[row * 3 + 1] + matrix[row * 3 + 2] - 1) < 1e-3) }
    }

    /// tools/hdr/reference.py on immich's 10bit-HDR-P3-nclx.avif (avifdec's decode, the same
    /// operator in float64, area-reduced to the preview's 674×1024): Rec.601 luma figures.
    static let reference = (mean: 128.74, min: 0.0, max: 254.7, p1: 1.17, p5: 4.7, p50: 144.37, p95: 220.85, p99: 239.16)

    static var hdrFile: String? { Corpus.imageFiles().first { $0.hasSuffix("10bit-HDR-P3-nclx.avif") } }

    @Test("the PQ P3 AVIF's preview spans the SDR range and matches the reference rendering",
          .enabled(if: HDRTests.hdrFile != nil, "10bit-HDR-P3-nclx.avif not found in ../shared/corpus (a hidden corpus file)"))
    func pqAVIFPreview() throws {
        let path = try #require(Self.hdrFile)
        let bytes = try Corpus.bytes(path)
        let info = try Imaging.probe(bytes)
        #expect(info.colorDescription.contains("PQ HDR"), "\(info.colorDescription)")
        let result = try Imaging.render(bytes, recipes: VariantRecipe.defaults, options: RenderOptions())
        let preview = try #require(result.variants.first { $0.name == "preview" })
        let raster = try Pixels.decode(preview.bytes)
        var luma = [Double]()
        luma.reserveCapacity(raster.width * raster.height)
        for i in 0..<(raster.width * raster.height) {
            let p = raster.pixels + i * 3
            luma.append(0.299 * Double(p[0]) + 0.587 * Double(p[1]) + 0.114 * Double(p[2]))
        }
        luma.sort()
        func percentile(_ p: Double) -> Double { luma[min(luma.count - 1, Int(Double(luma.count - 1) * p / 100))] }
        let mean = luma.reduce(0, +) / Double(luma.count)
        let figures = (min: luma.first ?? 0, max: luma.last ?? 0, p1: percentile(1), p5: percentile(5),
                       p50: percentile(50), p95: percentile(95), p99: percentile(99))
        let reference = Self.reference
        print(String(format: "HDR preview %dx%d luma: span %.1f to %.1f (reference %.1f to %.1f), mean %.2f (reference %.2f, difference %.2f); "
                     + "percentiles 1/5/50/95/99 %.1f/%.1f/%.1f/%.1f/%.1f (reference %.1f/%.1f/%.1f/%.1f/%.1f)",
                     raster.width, raster.height, figures.min, figures.max, reference.min, reference.max, mean, reference.mean,
                     mean - reference.mean, figures.p1, figures.p5, figures.p50, figures.p95, figures.p99,
                     reference.p1, reference.p5, reference.p50, reference.p95, reference.p99))
        #expect(figures.min <= 5 && figures.max >= 245, "span \(figures.min) to \(figures.max)")
        #expect(abs(mean - reference.mean) <= 3)
        #expect(abs(figures.min - reference.min) <= 4 && abs(figures.max - reference.max) <= 4)
        for (ours, theirs) in [(figures.p1, reference.p1), (figures.p5, reference.p5), (figures.p50, reference.p50),
                               (figures.p95, reference.p95), (figures.p99, reference.p99)] {
            #expect(abs(ours - theirs) <= 3, "percentile \(ours) vs reference \(theirs)")
        }
    }
}
