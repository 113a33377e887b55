import BenchInputs
import BenchKit
import Foundation
import PhotoMetadata

/// `darkroom-bench render`: the four default variants plus the metadata read of 12 MP photos,
/// at 1 and 2 worker threads, against vipsthumbnail making the same four outputs.
enum RenderBenchmark {
    /// The ceiling of Darkroom's time per photo, as a fraction of vipsthumbnail's four runs.
    static let timeRatioTarget = 0.25
    /// The ceiling of peak memory per worker for a 12 MP photo.
    static let memoryTargetMegabytes = 200.0

    /// glibc settings that keep freed raster buffers in the heap instead of returning them to the
    /// kernel after every photo (which costs page faults and zeroing on the next): a worker-process
    /// setting, shown as separate rows.
    static let tunedMalloc = "glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=536870912"

    struct Options {
        var photos = 8
        var rounds = 2
        /// Rounds over the corpus's real photos (each photo through every tool in each round).
        var realRounds = 3
        var workerCounts = [1, 2]
        var orientation: Int?
        /// Keeps the photos here (for profiling with perf) instead of a removed temporary directory.
        var directory: String?

        init() {}

        init(_ arguments: BenchArguments) throws {
            try arguments.check(valueFlags: ["--photos", "--rounds", "--real-rounds", "--workers", "--orientation", "--dir"])
            realRounds = try arguments.int("--real-rounds", default: realRounds, in: 1...100)
            photos = try arguments.int("--photos", default: photos)
            rounds = try arguments.int("--rounds", default: rounds)
            if arguments.value("--workers") != nil { workerCounts = [try arguments.int("--workers", default: 1, in: 1...2)] }
            if arguments.value("--orientation") != nil { orientation = try arguments.int("--orientation", default: 1, in: 1...8) }
            directory = arguments.value("--dir")
        }
    }

    /// The measuring child: `render --child DIR --workers W --count C [--no-metadata] [--orientation O]`.
    static func child(_ arguments: BenchArguments, directory: String) throws {
        let settings = RenderMeasurement.Settings(
            metadata: !arguments.has("--no-metadata"),
            orientation: arguments.value("--orientation") == nil ? nil : try arguments.int("--orientation", default: 1, in: 1...8))
        let result = try RenderMeasurement.run(
            directory: URL(fileURLWithPath: directory), workers: try arguments.int("--workers", default: 1, in: 1...64),
            count: try arguments.int("--count", default: 1), settings: settings)
        print(result.line)
    }

    static func run(_ options: Options) throws -> [Verdict] {
        let work = try options.directory.map { path -> URL in
            let url = URL(fileURLWithPath: path)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            return url
        } ?? Machine.scratchDirectory("render")
        defer { if options.directory == nil { try? FileManager.default.removeItem(at: work) } }

        print("## render: four variants plus metadata, 12 MP photos\n")
        print("Generating \(options.photos) photos of \(PhotoSet.width)×\(PhotoSet.height)…")
        let photos = try PhotoSet.generate(count: options.photos, into: work)
        print("  source: \(photos.origin)")
        print("  load average before: \(Machine.loadAverage())\n")

        let count = options.photos * options.rounds
        let settings = RenderMeasurement.Settings(metadata: true, orientation: options.orientation)
        var rows: [(label: String, result: RenderMeasurement.Result)] = []
        for workers in options.workerCounts {
            rows.append(("darkroom", try RenderMeasurement.measureInChild(directory: work, workers: workers, count: count, settings: settings)))
        }
        for workers in options.workerCounts {
            rows.append(("darkroom, malloc tuned", try RenderMeasurement.measureInChild(
                directory: work, workers: workers, count: count, settings: settings, environment: ["GLIBC_TUNABLES": tunedMalloc])))
        }
        let vips = VipsComparison.run(files: photos.files, outputDirectory: work.appendingPathComponent("vips"))

        print("Per photo: read the file, `PhotoMetadata.read` (default options), `Imaging.render` of the four default")
        print("variants (thumb cover 320×320, preview contain 1024, mobile contain 2048, feed cover 1080×1350) with the")
        print("metadata's orientation. \(options.photos) photos × \(options.rounds) rounds; release build; wall clock.\n")
        var table: [[String]] = []
        for (label, row) in rows {
            table.append([label, "\(row.workers)", Table.number(row.photosPerSecond, 2), Table.number(row.millisecondsPerPhoto),
                          Table.number(row.medianMilliseconds), Table.number(row.minimumMilliseconds),
                          "\(Table.number(row.readMilliseconds)) / \(Table.number(row.metadataMilliseconds)) / \(Table.number(row.renderMilliseconds))",
                          Table.megabytes(kilobytes: row.peakKilobytes)])
        }
        if let vips {
            table.append(["vipsthumbnail, 4 runs", "1", Table.number(1000 / vips.millisecondsPerPhoto, 2), Table.number(vips.millisecondsPerPhoto),
                          Table.number(vips.medianMilliseconds), Table.number(vips.minimumMilliseconds), "", "n/a"])
        } else {
            table.append(["vipsthumbnail", "-", "not installed (make bench-deps)", "", "", "", "", ""])
        }
        Table.print(header: ["run", "workers", "photos/s", "ms/photo (per worker)", "median ms", "fastest ms",
                             "mean ms: read / metadata / render", "peak RSS (VmHWM)"], rows: table)
        print("")
        print("ms/photo = wall time × workers / photos. \"fastest\" is the quickest single photo (least disturbed by other load).")
        print("Each darkroom row ran in its own child process (each photo once untimed first), so its VmHWM is its own; the photos are")
        print("read from disk one at a time, as the worker does. vipsthumbnail: one process per output, as a thumbnailing service")
        print("runs it (attention crop for the two cover outputs). Load average after: \(Machine.loadAverage()).\n")

        var verdicts: [Verdict] = []
        let plain = rows.filter { $0.label == "darkroom" }.map(\.result)
        if let single = plain.first(where: { $0.workers == 1 }) ?? plain.first {
            if let vips {
                // Judged on the means; the fastest photos (least disturbed by other load) are shown beside.
                let ratio = single.millisecondsPerPhoto / vips.millisecondsPerPhoto
                let fastest = single.minimumMilliseconds / vips.minimumMilliseconds
                verdicts.append(Verdict(
                    section: "render", measure: "darkroom time / vipsthumbnail 4 runs (\(single.workers) worker, mean)",
                    figure: String(format: "%.2f× (%.0f ms vs %.0f ms; fastest photos: %.2f×)", ratio, single.millisecondsPerPhoto,
                                   vips.millisecondsPerPhoto, fastest),
                    target: "≤ \(timeRatioTarget)×", passed: ratio <= timeRatioTarget))
            } else {
                verdicts.append(Verdict(section: "render", measure: "darkroom time / vipsthumbnail 4 runs",
                                        figure: "vipsthumbnail not installed", target: "≤ \(timeRatioTarget)×", passed: nil))
            }
        }
        // Per worker: the whole process's peak divided by its worker threads (the worst row).
        let perWorker = plain.map { Double($0.peakKilobytes) / 1024 / Double($0.workers) }
        if let worst = perWorker.max() {
            let detail = plain.map { "\($0.workers) worker\($0.workers > 1 ? "s" : ""): \(Table.megabytes(kilobytes: $0.peakKilobytes))" }
            verdicts.append(Verdict(
                section: "render", measure: "peak memory per worker, 12 MP (process VmHWM / workers)",
                figure: String(format: "%.0f MB (%@)", worst, detail.joined(separator: ", ")),
                target: "< \(Int(memoryTargetMegabytes)) MB", passed: worst < memoryTargetMegabytes))
        }
        verdicts += try heic(options, work: work, jpeg: plain.first { $0.workers == 1 })
        Verdict.printTable(verdicts)
        print("")
        let real = try RealPhotoBenchmark.run(rounds: options.realRounds, work: work)
        verdicts += real
        Verdict.printTable(real)
        print("")
        return verdicts
    }

    /// The corpus's 12 MP phone HEICs (iPhones and a Samsung), one worker, beside the JPEG figure
    /// and vipsthumbnail's four runs on the same files (libvips reads them through libheif too).
    static func heic(_ options: Options, work: URL, jpeg: RenderMeasurement.Result?) throws -> [Verdict] {
        guard let corpus = PhotoSet.corpusDirectory() else {
            print("HEIC: the photo corpus is not here (set DARKROOM_CORPUS); no HEIC figures.\n")
            return [Verdict(section: "render", measure: "12 MP HEIC per photo", figure: "no corpus", target: "(reported)", passed: nil)]
        }
        let directory = work.appendingPathComponent("heic")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var files: [URL] = []
        for name in heicPhotos {
            let source = corpus.appendingPathComponent(name)
            let target = directory.appendingPathComponent("\(files.count)-\(source.lastPathComponent.lowercased())")
            guard (try? FileManager.default.copyItem(at: source, to: target)) != nil else { continue }
            files.append(target)
        }
        guard !files.isEmpty else { return [] }
        let settings = RenderMeasurement.Settings(metadata: true, orientation: nil)
        let darkroom = try RenderMeasurement.measureInChild(directory: directory, workers: 1, count: files.count * options.rounds, settings: settings)
        let vips = VipsComparison.run(files: files, outputDirectory: work.appendingPathComponent("vips-heic"))
        print("HEIC: \(files.count) phone photos of the corpus (\(heicPhotos.joined(separator: ", "))), \(options.rounds) rounds, 1 worker:")
        var rows = [["darkroom, HEIC", Table.number(darkroom.millisecondsPerPhoto), Table.number(darkroom.medianMilliseconds),
                     Table.number(darkroom.minimumMilliseconds), Table.megabytes(kilobytes: darkroom.peakKilobytes)]]
        if let jpeg {
            rows.append(["darkroom, 12 MP JPEG (above)", Table.number(jpeg.millisecondsPerPhoto), Table.number(jpeg.medianMilliseconds),
                         Table.number(jpeg.minimumMilliseconds), Table.megabytes(kilobytes: jpeg.peakKilobytes)])
        }
        if let vips {
            rows.append(["vipsthumbnail, HEIC, 4 runs", Table.number(vips.millisecondsPerPhoto), Table.number(vips.medianMilliseconds),
                         Table.number(vips.minimumMilliseconds), "n/a"])
        }
        Table.print(header: ["run", "ms/photo", "median ms", "fastest ms", "peak RSS"], rows: rows)
        print("")
        let ratio = vips.map { darkroom.millisecondsPerPhoto / $0.millisecondsPerPhoto }
        return [Verdict(section: "render", measure: "12 MP HEIC per photo, 1 worker (JPEG; vipsthumbnail's 4 runs on the HEICs)",
                        figure: String(format: "%.0f ms (JPEG %.0f ms; vipsthumbnail %@)", darkroom.millisecondsPerPhoto,
                                       jpeg?.millisecondsPerPhoto ?? 0, vips.map { String(format: "%.0f ms, ratio %.2f×", $0.millisecondsPerPhoto, ratio ?? 0) } ?? "not installed"),
                        target: "(reported)", passed: nil)]
    }

    /// 12 MP phone HEICs of the corpus: iPhone XS Max, iPhone 8, iPhone 11 Pro, Samsung S22.
    static let heicPhotos = ["heif/exifr/heic-iphone.heic", "heif/exifr/heic-maybebroken.HEIC",
                             "heif/metadata-extractor/IMG_2927.HEIC", "heif/immich/samsung-one-ui-6.heic"]
}
