import BenchInputs
import BenchKit
import Foundation
import Imaging
import PhotoMetadata

/// CPU per photo on real phone and camera photos of the corpus: a steady Darkroom worker (the
/// metadata read and the four default variants, in-process), `darkroom render` started anew per
/// photo, vipsthumbnail's four runs, and the codec floor (`djpeg` at the render's decode scale
/// plus `cjpeg` of the four outputs' pixels), taken in turn within each round.
enum RealPhotoBenchmark {
    /// Ceilings of the steady worker's CPU per photo: against vipsthumbnail's four runs, and
    /// against the codec floor.
    static let vipsRatioTarget = 0.15
    static let floorRatioTarget = 1.3

    /// The corpus's real JPEGs of 8 to 14 megapixels: three phones, three cameras.
    static let photos: [(path: String, label: String)] = [
        ("jpeg/metadata-extractor/Apple_iPhone_6.jpg", "iPhone 6, 8 MP"),
        ("jpeg/metadata-extractor/Apple_iPhone_6_plus.jpg", "iPhone 6 Plus, 8 MP"),
        ("jpeg/metadata-extractor/Samsung_SM-N900A_Galaxy_Note_3.jpg", "Galaxy Note 3, 9.6 MP"),
        ("jpeg/metadata-extractor/Panasonic_DMC-LX3_Lumix.jpg", "Panasonic LX3, 9.5 MP"),
        ("jpeg/digicam-corpus/Nikon_D90_DSC_0003.JPG", "Nikon D90, 12 MP"),
        ("jpeg/digicam-corpus/Nikon_D3100_DSC_0008.JPG", "Nikon D3100, 14 MP"),
    ]

    /// One photo, prepared: its copy, its decode scale and its outputs' pixels with their qualities.
    struct Prepared {
        let file: URL
        let label: String
        let megapixels: Double
        let numerator: Int
        let outputs: [(pixels: URL, quality: Int)]
    }

    /// Sums over the rounds, per photo (milliseconds of CPU).
    struct Sums {
        var process = 0.0
        var vips = 0.0
        var decode = 0.0
        var encode = 0.0
        var rounds = 0
    }

    static func run(rounds: Int, work: URL) throws -> [Verdict] {
        print("## render on real photos: CPU per photo against vipsthumbnail and the codec floor\n")
        guard let corpus = PhotoSet.corpusDirectory() else {
            print("The photo corpus is not here (set DARKROOM_CORPUS): no real-photo figures.\n")
            return [Verdict(section: "render", measure: "CPU per real photo / vipsthumbnail, / codec floor", figure: "no corpus",
                            target: "≤ \(vipsRatioTarget)×, ≤ \(floorRatioTarget)×", passed: nil)]
        }
        let directory = work.appendingPathComponent("real")
        let floorDirectory = work.appendingPathComponent("real-floor")
        for path in [directory, floorDirectory] { try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true) }
        guard let tools = CodecFloor.tools(scratch: floorDirectory) else {
            print("djpeg and cjpeg are missing (make bench-deps installs libjpeg-turbo-progs): no codec floor.\n")
            return [Verdict(section: "render", measure: "CPU per real photo / codec floor", figure: "djpeg, cjpeg missing",
                            target: "≤ \(floorRatioTarget)×", passed: nil)]
        }
        let prepared = try prepare(corpus: corpus, into: directory, floor: floorDirectory, tools: tools)
        let darkroom = Machine.executableDirectory().appendingPathComponent("darkroom")
        let hasDarkroom = FileManager.default.isExecutableFile(atPath: darkroom.path)

        var sums = [Sums](repeating: Sums(), count: prepared.count)
        var steady: [RenderMeasurement.Result] = []
        var vipsMissing = false
        for round in 0..<rounds {
            print("  round \(round + 1) of \(rounds)…")
            let settings = RenderMeasurement.Settings(metadata: true, orientation: nil)
            // With the allocator setting the worker makes (PhotoProcessor: large blocks stay in the heap).
            steady.append(try RenderMeasurement.measureInChild(
                directory: directory, workers: 1, count: prepared.count * 3, settings: settings,
                environment: ["GLIBC_TUNABLES": RenderBenchmark.tunedMalloc]))
            for (index, photo) in prepared.enumerated() {
                if hasDarkroom {
                    let out = work.appendingPathComponent("real-out")
                    let child = try ChildProcess.run(darkroom.path, ["render", photo.file.path, "--out", out.path], watchMemory: false)
                    guard child.status == 0 else { throw BenchError("darkroom render \(photo.file.lastPathComponent) exited with \(child.status)") }
                    sums[index].process += child.cpuSeconds * 1000
                }
                if let vips = VipsComparison.measure(photo.file, outputDirectory: work.appendingPathComponent("real-vips"), prefix: String(index)) {
                    sums[index].vips += vips.cpuMilliseconds
                } else {
                    vipsMissing = true
                }
                guard let decode = CodecFloor.decode(photo.file, numerator: photo.numerator, tools: tools) else {
                    throw BenchError("djpeg failed on \(photo.file.lastPathComponent)")
                }
                sums[index].decode += decode
                for output in photo.outputs {
                    guard let encode = CodecFloor.encode(output.pixels, quality: output.quality, tools: tools) else {
                        throw BenchError("cjpeg failed on \(output.pixels.lastPathComponent)")
                    }
                    sums[index].encode += encode
                }
                sums[index].rounds += 1
            }
        }
        print("")

        let steadyCPU = steady.map(\.cpuMilliseconds).reduce(0, +) / Double(max(steady.count, 1))
        let steadyFaults = steady.map(\.pageFaults).reduce(0, +) / Double(max(steady.count, 1))
        let untuned = try RenderMeasurement.measureInChild(
            directory: directory, workers: 1, count: prepared.count * rounds, settings: RenderMeasurement.Settings(metadata: true, orientation: nil))
        func mean(_ value: (Sums) -> Double) -> Double {
            sums.map { value($0) / Double(max($0.rounds, 1)) }.reduce(0, +) / Double(max(sums.count, 1))
        }
        var rows: [[String]] = []
        for (index, photo) in prepared.enumerated() {
            let s = sums[index], n = Double(max(s.rounds, 1))
            rows.append([photo.label, "\(photo.numerator)/8", hasDarkroom ? Table.number(s.process / n) : "-",
                         vipsMissing ? "-" : Table.number(s.vips / n), Table.number(s.decode / n), Table.number(s.encode / n),
                         Table.number((s.decode + s.encode) / n)])
        }
        let floor = mean { $0.decode + $0.encode }, vips = mean(\.vips), process = mean(\.process)
        rows.append(["mean", "", hasDarkroom ? Table.number(process) : "-", vipsMissing ? "-" : Table.number(vips),
                     Table.number(mean(\.decode)), Table.number(mean(\.encode)), Table.number(floor)])
        Table.print(header: ["photo", "decode scale", "darkroom render, own process", "vipsthumbnail, 4 runs",
                             "djpeg at that scale", "cjpeg of the 4 outputs", "codec floor"], rows: rows)
        print("")
        print("CPU milliseconds per photo (user + system), mean of \(rounds) rounds; in each round every photo goes through each")
        print("in turn. The floor's tools have their start-up taken off (djpeg \(Table.number(tools.djpegStartup, 2)) ms, cjpeg "
              + "\(Table.number(tools.cjpegStartup, 2)) ms, measured on an 8×8 picture).")
        print("Steady worker (one thread renders the six photos in turn, three times a round, after each once untimed, with the")
        print("allocator setting of `darkroom run`): \(Table.number(steadyCPU)) ms of CPU per photo, \(Table.number(steadyFaults, 0)) "
              + "page faults per photo (a page is 4 KiB; a photo's rasters are about 30 MB).")
        let stages = steady.map(\.stages)
        func stage(_ value: KeyPath<RenderTimings, Double>) -> Double {
            stages.map { $0[keyPath: value] }.reduce(0, +) / Double(max(stages.count, 1))
        }
        let metadata = steady.map(\.metadataMilliseconds).reduce(0, +) / Double(max(steady.count, 1))
        let read = steady.map(\.readMilliseconds).reduce(0, +) / Double(max(steady.count, 1))
        let staged = stage(\.decode) + stage(\.analysis) + stage(\.resample) + stage(\.encode)
        print("Where the steady worker's CPU goes, per photo: JPEG decode (with any conversion to sRGB) "
              + "\(Table.number(stage(\.decode))) ms, upright + analysis + placeholder + crops \(Table.number(stage(\.analysis))) ms, "
              + "resampling \(Table.number(stage(\.resample))) ms, JPEG encode \(Table.number(stage(\.encode))) ms;")
        print("reading the file \(Table.number(read)) ms and the metadata (EXIF and SHA-256) \(Table.number(metadata)) ms (wall time, "
              + "one thread); the rest \(Table.number(max(0, steadyCPU - staged - metadata - read))) ms.")
        print("Without the allocator setting (glibc's defaults): \(Table.number(untuned.cpuMilliseconds)) ms, "
              + "\(Table.number(untuned.pageFaults, 0)) page faults per photo. Resampler: "
              + (Imaging.resamplerUsesAVX2 ? "16-bit fixed point in AVX2" + (Imaging.resamplerUsesVNNI ? ", the vertical pass on AVX-512 VNNI." : ".")
                 : "float on the baseline vector unit (no AVX2)."))
        print("")

        var verdicts: [Verdict] = []
        if vipsMissing {
            verdicts.append(Verdict(section: "render", measure: "CPU per real photo, worker / vipsthumbnail 4 runs",
                                    figure: "vipsthumbnail not installed", target: "≤ \(vipsRatioTarget)×", passed: nil))
        } else {
            let ratio = steadyCPU / vips
            verdicts.append(Verdict(
                section: "render", measure: "CPU per real photo (6 phones and cameras, 8–14 MP), worker / vipsthumbnail 4 runs",
                figure: String(format: "%.3f× (%.1f ms vs %.0f ms)", ratio, steadyCPU, vips),
                target: "≤ \(vipsRatioTarget)×", passed: ratio <= vipsRatioTarget))
            if hasDarkroom {
                verdicts.append(Verdict(
                    section: "render", measure: "CPU per real photo, `darkroom render` in its own process / vipsthumbnail 4 runs",
                    figure: String(format: "%.3f× (%.1f ms, start-up included)", process / vips, process), target: "(reported)", passed: nil))
            }
        }
        let floorRatio = steadyCPU / floor
        verdicts.append(Verdict(
            section: "render", measure: "CPU per real photo, worker / codec floor (djpeg scaled + cjpeg of the outputs)",
            figure: String(format: "%.2f× (%.1f ms vs %.1f ms)", floorRatio, steadyCPU, floor),
            target: "≤ \(floorRatioTarget)×", passed: floorRatio <= floorRatioTarget))
        return verdicts
    }

    /// Copies the photos, renders each once in-process to learn its decode scale, and writes
    /// its four outputs' pixels as PPM for the encode step.
    static func prepare(corpus: URL, into directory: URL, floor: URL, tools: CodecFloor.Tools) throws -> [Prepared] {
        var prepared: [Prepared] = []
        for (index, photo) in photos.enumerated() {
            let source = corpus.appendingPathComponent(photo.path)
            let file = directory.appendingPathComponent(String(format: "%02d-", index) + source.lastPathComponent.lowercased())
            guard (try? FileManager.default.copyItem(at: source, to: file)) != nil else { continue }
            let bytes = try [UInt8](Data(contentsOf: file))
            let metadata = PhotoMetadata.read(bytes, sidecar: nil, fileTime: nil, options: MetadataOptions())
            let result = try Imaging.render(bytes, recipes: VariantRecipe.defaults, options: RenderOptions(orientation: metadata.orientation))
            let numerator = (1...8).first { (result.info.width * $0 + 7) / 8 == result.decodedWidth } ?? 8
            var outputs: [(pixels: URL, quality: Int)] = []
            for (variant, recipe) in zip(result.variants, VariantRecipe.defaults) {
                let jpeg = floor.appendingPathComponent("\(index)-\(variant.name).jpg")
                let ppm = floor.appendingPathComponent("\(index)-\(variant.name).ppm")
                try Data(variant.bytes).write(to: jpeg)
                guard CodecFloor.writePixels(of: jpeg, to: ppm, tools: tools) else { throw BenchError("djpeg could not read \(jpeg.path)") }
                outputs.append((ppm, recipe.quality))
            }
            prepared.append(Prepared(file: file, label: photo.label, megapixels: Double(result.info.width * result.info.height) / 1e6,
                                     numerator: numerator, outputs: outputs))
        }
        return prepared
    }
}
