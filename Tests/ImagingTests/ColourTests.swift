import ChildProcesses
import Foundation
import Testing
@testable import Imaging

/// Photos in a wider space than sRGB come out in sRGB, as lcms2's own converter has them.
@Suite("Colour", .serialized)
struct ColourTests {
    static let transicc = "/usr/bin/transicc"
    /// An iPhone XS Max HEIC whose profile is Display P3 (HEIF_MANIFEST.tsv's notes).
    static let p3Photo = "heif/exifr/heic-iphone.heic"

    static var ready: Bool {
        Corpus.isAvailable && FileManager.default.isExecutableFile(atPath: transicc)
    }

    /// Each RGB triple converted by lcms2's `transicc` (floating point, clipped, rounded) from
    /// the space of `profile` to its built-in sRGB.
    static func transicc(_ pixels: [(UInt8, UInt8, UInt8)], profile: [UInt8]) throws -> [(Double, Double, Double)] {
        let file = NSTemporaryDirectory() + "darkroom-profile-\(UUID().uuidString).icc"
        try Data(profile).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: transicc)
        process.arguments = ["-i\(file)", "-o*sRGB", "-t0", "-s", "-n"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        let text = pixels.map { "\($0.0) \($0.1) \($0.2)\n" }.joined()
        let writer = Thread { input.fileHandleForWriting.write(Data(text.utf8)); try? input.fileHandleForWriting.close() }
        writer.start()
        let answer = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitForExit()
        return answer.split(separator: "\n").compactMap { line in
            let values = line.split(separator: " ").compactMap { Double($0) }
            return values.count == 3 ? (values[0], values[1], values[2]) : nil
        }
    }

    /// An iPhone 6 Plus JPEG carrying the common version 2 "sRGB IEC61966-2.1" profile (D65 in its
    /// media white point, where lcms2's built-in version 4 sRGB has D50).
    static let v2SRGBPhoto = "jpeg/metadata-extractor/Apple_iPhone_6_plus.jpg"

    @Test("the version 2 sRGB IEC61966-2.1 profile is sRGB: no conversion, and converting through it would change nothing",
          .enabled(if: Corpus.isAvailable, "../shared/corpus not found"))
    func version2SRGBIsSRGB() throws {
        let (_, decoded) = try JPEGCodec.decode(try Corpus.bytes(Self.v2SRGBPhoto), scaleNumerator: 1, pixelLimit: 0)
        let profile = try #require(decoded.iccProfile)
        #expect(ColourConversion.isSRGB(profile))
        let source = decoded.raster
        let copy = try Pixels.raster(width: source.width, height: source.height) { x, y in
            let p = (y * source.width + x) * 3
            return (source.pixels[p], source.pixels[p + 1], source.pixels[p + 2])
        }
        #expect(ColourConversion.toSRGB(copy, from: profile))
        var worst = 0
        for i in 0..<(source.width * source.height * 3) { worst = max(worst, abs(Int(copy.pixels[i]) - Int(source.pixels[i]))) }
        #expect(worst <= 1, "converting through the profile moved a level by \(worst)")
    }

    @Test("Display P3 pixels converted here match lcms2's transicc within a level",
          .enabled(if: ready, "../shared/corpus or lcms2's transicc (liblcms2-utils) not found"))
    func p3PixelsMatchTransicc() throws {
        let (_, decoded) = try HEIFCodec.decode(try Corpus.bytes(Self.p3Photo), format: .heic, pixelLimit: 0)
        let profile = try #require(decoded.iccProfile)
        #expect(!ColourConversion.isSRGB(profile), "Display P3 is not sRGB")
        let source = decoded.raster
        var samples: [(UInt8, UInt8, UInt8)] = []
        for i in 0..<2000 {
            let x = (i * 7919) % source.width, y = (i * 104_729) % source.height
            let p = (y * source.width + x) * 3
            samples.append((source.pixels[p], source.pixels[p + 1], source.pixels[p + 2]))
        }
        let row = try Pixels.raster(width: samples.count, height: 1) { x, _ in samples[x] }
        #expect(ColourConversion.toSRGB(row, from: profile))
        let expected = try Self.transicc(samples, profile: profile)
        #expect(expected.count == samples.count)
        var total = 0.0, worst = 0.0
        for (i, want) in expected.enumerated() {
            let got = (Double(row.pixels[i * 3]), Double(row.pixels[i * 3 + 1]), Double(row.pixels[i * 3 + 2]))
            let d = max(abs(got.0 - want.0), abs(got.1 - want.1), abs(got.2 - want.2))
            total += d
            worst = max(worst, d)
        }
        #expect(total / Double(expected.count) <= 1, "mean \(total / Double(expected.count)) levels")
        #expect(worst <= 3, "worst \(worst) levels")
        // The conversion did something: P3's saturated colours move inside sRGB.
        #expect(zip(samples.indices, samples).contains { i, s in Int(row.pixels[i * 3]) != Int(s.0) || Int(row.pixels[i * 3 + 1]) != Int(s.1) })
    }

    /// Adobe RGB (1998) as Ghostscript ships it: another matrix-shaper, with a pure gamma curve
    /// where Display P3 has sRGB's.
    static let adobeRGB = "/usr/share/color/icc/ghostscript/a98.icc"

    @Test("the matrix-shaper path gives lcms2's pipeline's result within a level, over every red and green level and 64 of blue",
          .enabled(if: Corpus.isAvailable, "../shared/corpus not found"))
    func matrixShaperPathMatchesLCMS() throws {
        var profiles = [("Display P3", try #require(try HEIFCodec.decode(try Corpus.bytes(Self.p3Photo), format: .heic, pixelLimit: 0).1.iccProfile))]
        if let adobe = FileManager.default.contents(atPath: Self.adobeRGB) { profiles.append(("Adobe RGB", [UInt8](adobe))) }
        // Every red and green level beside 64 blue ones (0, 5, 10, 15, 16, ... 255: every low bit pattern).
        let count = 256 * 256 * 64
        let colours = [UInt8](unsafeUninitializedCapacity: count * 3) { buffer, initialised in
            for n in 0..<count {
                let blue = n >> 16
                buffer[n * 3] = UInt8(n & 255)
                buffer[n * 3 + 1] = UInt8((n >> 8) & 255)
                buffer[n * 3 + 2] = UInt8(blue * 4 + blue % 4)
            }
            initialised = count * 3
        }
        for (name, profile) in profiles {
            let fast = try Raster(width: 4096, height: count / 4096), reference = try Raster(width: 4096, height: count / 4096)
            colours.withUnsafeBufferPointer { source in
                fast.pixels.update(from: source.baseAddress!, count: count * 3)
                reference.pixels.update(from: source.baseAddress!, count: count * 3)
            }
            #expect(ColourConversion.toSRGB(fast, from: profile), "\(name)")
            #expect(ColourConversion.toSRGBThroughLCMS(reference, from: profile), "\(name)")
            var worst = 0, moved = 0
            for i in 0..<(count * 3) {
                worst = max(worst, abs(Int(fast.pixels[i]) - Int(reference.pixels[i])))
                if reference.pixels[i] != colours[i] { moved += 1 }
            }
            #expect(worst <= 1, "\(name): a level moved by \(worst) from lcms2's")
            #expect(moved > count, "\(name): the conversion changed \(moved) samples; a wider space moves most")
        }
    }

    @Test("a Display P3 photo's variant, decoded, is the photo converted to sRGB, within 2 levels on average",
          .enabled(if: ready, "../shared/corpus or lcms2's transicc (liblcms2-utils) not found"))
    func p3VariantIsSRGB() throws {
        let bytes = try Corpus.bytes(Self.p3Photo)
        let (_, decoded) = try HEIFCodec.decode(bytes, format: .heic, pixelLimit: 0)
        let profile = try #require(decoded.iccProfile)
        // A variant at the full size: no resampling, so the pixels line up with the source's.
        let full = VariantRecipe(name: "full", fit: .contain, width: 8192, height: 8192, quality: 95)
        let variant = try #require(try Imaging.render(bytes, recipes: [full], options: RenderOptions()).variants.first)
        let out = try JPEGCodec.decode(variant.bytes, scaleNumerator: 8, pixelLimit: 0).1
        #expect(out.iccProfile == nil, "an sRGB variant carries no profile")
        #expect(out.raster.width == decoded.raster.width && out.raster.height == decoded.raster.height)
        // Block means of 8×8 pixels, which the JPEG's chroma subsampling cannot shift.
        var sources: [(UInt8, UInt8, UInt8)] = []
        var blocks: [(x: Int, y: Int)] = []
        for i in 0..<60 {
            let bx = ((i * 7919) % (decoded.raster.width / 8)) * 8, by = ((i * 104_729) % (decoded.raster.height / 8)) * 8
            blocks.append((bx, by))
            for dy in 0..<8 {
                for dx in 0..<8 {
                    let p = ((by + dy) * decoded.raster.width + bx + dx) * 3
                    sources.append((decoded.raster.pixels[p], decoded.raster.pixels[p + 1], decoded.raster.pixels[p + 2]))
                }
            }
        }
        let converted = try Self.transicc(sources, profile: profile)
        #expect(converted.count == sources.count)
        var total = 0.0
        for (n, block) in blocks.enumerated() {
            var want = [0.0, 0.0, 0.0], got = [0.0, 0.0, 0.0]
            for dy in 0..<8 {
                for dx in 0..<8 {
                    let c = converted[n * 64 + dy * 8 + dx]
                    want[0] += c.0; want[1] += c.1; want[2] += c.2
                    let p = ((block.y + dy) * out.raster.width + block.x + dx) * 3
                    for k in 0..<3 { got[k] += Double(out.raster.pixels[p + k]) }
                }
            }
            total += (0..<3).map { abs(got[$0] - want[$0]) / 64 }.reduce(0, +) / 3
        }
        #expect(total / Double(blocks.count) <= 2, "mean \(total / Double(blocks.count)) levels per channel")
    }

    @Test("a CMYK JPEG goes through its CMYK profile, as lcms2's jpgicc converts it",
          .enabled(if: Corpus.isAvailable && FileManager.default.isExecutableFile(atPath: "/usr/bin/jpgicc"),
                   "../shared/corpus or lcms2's jpgicc (liblcms2-utils) not found"))
    func cmykThroughItsProfile() throws {
        let path = try #require(Corpus.root).appendingPathComponent("jpeg/metadata-extractor/Multiple_ICC_segments.jpg").path
        let bytes = try Corpus.bytes("jpeg/metadata-extractor/Multiple_ICC_segments.jpg")
        let target = NSTemporaryDirectory() + "darkroom-jpgicc-\(UUID().uuidString).jpg"
        defer { try? FileManager.default.removeItem(atPath: target) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/jpgicc")
        process.arguments = ["-q100", path, target]
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        process.waitForExit()
        #expect(process.terminationStatus == 0)
        let reference = try JPEGCodec.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: target))), scaleNumerator: 8, pixelLimit: 0).1.raster
        let full = VariantRecipe(name: "full", fit: .contain, width: 8192, height: 8192, quality: 100)
        func meanDifference(_ options: RenderOptions) throws -> Double {
            let variant = try #require(try Imaging.render(bytes, recipes: [full], options: options).variants.first)
            let ours = try JPEGCodec.decode(variant.bytes, scaleNumerator: 8, pixelLimit: 0).1.raster
            #expect(ours.width == reference.width && ours.height == reference.height)
            var total = 0.0
            for i in 0..<(ours.width * ours.height * 3) { total += abs(Double(ours.pixels[i]) - Double(reference.pixels[i])) }
            return total / Double(ours.width * ours.height * 3)
        }
        let converted = try meanDifference(RenderOptions())
        let naive = try meanDifference(RenderOptions(colour: .keep))
        #expect(converted <= 2, "mean \(converted) levels from jpgicc's")
        #expect(converted < naive, "the profile's conversion (\(converted)) is closer than the decoder's formula (\(naive))")
    }

    @Test("with imaging.colour keep, the P3 pixels and profile stay as they are",
          .enabled(if: Corpus.isAvailable, "../shared/corpus not found"))
    func keepLeavesTheProfile() throws {
        let bytes = try Corpus.bytes(Self.p3Photo)
        let thumb = VariantRecipe(name: "thumb", fit: .contain, width: 256, height: 256, quality: 90)
        let kept = try #require(try Imaging.render(bytes, recipes: [thumb], options: RenderOptions(colour: .keep)).variants.first)
        let profile = try JPEGCodec.decode(kept.bytes, scaleNumerator: 8, pixelLimit: 0).1.iccProfile
        #expect(profile != nil && !ColourConversion.isSRGB(profile ?? []))
    }
}
