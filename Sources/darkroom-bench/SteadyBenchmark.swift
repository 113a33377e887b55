import BenchInputs
import BenchKit
import Foundation
import Imaging
import PhotoMetadata

/// `darkroom-bench steady`: the whole worker as a user runs it (`darkroom run --once
/// --concurrency 1` on a spool of real phone and camera photos) against libvips used in-process
/// (pyvips, one process, `VIPS_CONCURRENCY=1`, the same four variants), alternated round by
/// round, CPU time of each child from wait4; the worker's stage profile from its own
/// `DARKROOM_STAGE_PROFILE` file; then the corpus's 12 MP HEICs rendered in-process against
/// libheif's own decode of them (`heif-convert` to Y4M, which writes the decoded planes as they
/// are: no colour conversion, no encode).
enum SteadyBenchmark {
    /// The ceilings: the worker against pyvips, the non-codec share of its CPU, HEIC against libheif.
    static let vipsRatioTarget = 0.15
    static let nonCodecTarget = 0.30
    static let heifRatioTarget = 1.15

    /// The corpus's real JPEGs of 8 to 14 megapixels (the issue's iPhone XR, Galaxy S7 Edge,
    /// Pixel, Oppo, Nexus photos are not in it): the render bench's three phones and three
    /// cameras (the Nikon D3100's stored with orientation 8), and two more 8 MP photos.
    static let photos: [(path: String, label: String)] = RealPhotoBenchmark.photos + [
        ("jpeg/digicam-corpus/Canon_Rebel_XT_350D__MG_9378.JPG", "Canon 350D, 8 MP"),
        ("jpeg/exifr/32d08f4a5eb10332506ebedbb9bc7257.jpg", "exifr sample, 8 MP"),
    ]

    /// The corpus's HEICs of about 12 MP (HEIF_MANIFEST.tsv).
    static let heics: [(path: String, label: String)] = [
        ("heif/exifr/heic-iphone.heic", "iPhone XS Max"),
        ("heif/exifr/heic-maybebroken.HEIC", "iPhone 8"),
        ("heif/exifr/heic-empty.heic", "no camera named"),
        ("heif/metadata-extractor/IMG_2927.HEIC", "iPhone 11 Pro"),
        ("heif/metadata-extractor/Issue_487.heic", "Galaxy S10+"),
        ("heif/immich/samsung-one-ui-6.heic", "Galaxy S22+"),
    ]

    struct Options {
        /// 8 photos × 19 = 152 a run: the issue's comparison ran 30 photos copied 5 times, and
        /// the worker's start-up (30–50 ms of CPU) is shared by the run's photos.
        var copies = 19
        var rounds = 3
        var heifRounds = 3
        var heif = true

        init() {}

        init(_ arguments: BenchArguments) throws {
            try arguments.check(valueFlags: ["--copies", "--rounds", "--heif-rounds"], bareFlags: ["--no-heif"])
            copies = try arguments.int("--copies", default: copies)
            rounds = try arguments.int("--rounds", default: rounds)
            heifRounds = try arguments.int("--heif-rounds", default: heifRounds)
            heif = !arguments.has("--no-heif")
        }
    }

    /// pyvips making the four default variants of every file named on its standard input: one
    /// `thumbnail` per variant (shrink-on-load, libvips' attention crop for the cover fits),
    /// JPEG at the recipe's quality with metadata stripped. Prints the versions.
    static let pyvipsScript = """
        import sys, pyvips
        out = sys.argv[1]
        variants = [("thumb", 320, 320, "attention", 80), ("preview", 1024, 1024, None, 82),
                    ("mobile", 2048, 2048, None, 85), ("feed", 1080, 1350, "attention", 85)]
        files = [line.strip() for line in open(sys.argv[2]) if line.strip()]
        for i, name in enumerate(files):
            for variant, width, height, crop, quality in variants:
                options = {"height": height}
                if crop:
                    options["crop"] = crop
                image = pyvips.Image.thumbnail(name, width, **options)
                image.write_to_file("%s/%d-%s.jpg" % (out, i, variant), Q=quality, strip=True)
        print("pyvips %s, libvips %d.%d.%d" % (pyvips.__version__, pyvips.version(0), pyvips.version(1), pyvips.version(2)))
        """

    static func run(_ options: Options) throws -> [Verdict] {
        print("## steady: the whole worker in one thread against libvips in-process (pyvips)\n")
        guard let corpus = PhotoSet.corpusDirectory() else {
            print("The photo corpus is not here (set DARKROOM_CORPUS): no figures.\n")
            return [Verdict(section: "steady", measure: "worker / pyvips CPU per photo", figure: "no corpus",
                            target: "≤ \(vipsRatioTarget)×", passed: nil)]
        }
        let darkroom = try PipelineBenchmark.darkroomBinary()
        let work = try Machine.scratchDirectory("steady")
        defer { try? FileManager.default.removeItem(at: work) }
        var verdicts = try worker(options, corpus: corpus, darkroom: darkroom, work: work)
        if options.heif { verdicts += try heif(options, corpus: corpus, work: work) }
        return verdicts
    }

    /// Sums over the rounds (CPU milliseconds, photos).
    struct Sums {
        var worker = 0.0
        var vips = 0.0
        var photos = 0
        var workerPeakKilobytes = 0
        var stages = [String: Double]()
        var stageWall = [String: Double]()
        /// Each round's CPU per photo, so that the variance between rounds shows.
        var workerRounds: [Double] = []
        var vipsRounds: [Double] = []
    }

    static func worker(_ options: Options, corpus: URL, darkroom: URL, work: URL) throws -> [Verdict] {
        var originals: [[UInt8]] = []
        var labels: [String] = []
        for photo in photos {
            guard let bytes = try? [UInt8](Data(contentsOf: corpus.appendingPathComponent(photo.path))) else { continue }
            originals.append(bytes)
            labels.append(photo.label)
        }
        guard !originals.isEmpty else { throw BenchError("none of the steady photos is in \(corpus.path)") }
        let count = originals.count * options.copies
        // The photos pyvips reads: the same distinct copies the spool gets each round.
        let files = work.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        var names: [String] = []
        var copies: [[UInt8]] = []
        for index in 0..<count {
            let bytes = PhotoSet.distinct(originals[index % originals.count], index: index)
            let file = files.appendingPathComponent(String(format: "photo-%05d.jpg", index))
            try Data(bytes).write(to: file)
            names.append(file.path)
            copies.append(bytes)
        }
        let list = work.appendingPathComponent("files.txt")
        try Data((names.joined(separator: "\n") + "\n").utf8).write(to: list)
        let script = work.appendingPathComponent("steady_pyvips.py")
        try Data(pyvipsScript.utf8).write(to: script)
        let empty = work.appendingPathComponent("none.txt")
        try Data().write(to: empty)
        let vipsOut = work.appendingPathComponent("vips-out")
        try FileManager.default.createDirectory(at: vipsOut, withIntermediateDirectories: true)
        // The python3 first on PATH, as `make bench-deps` installs pyvips for it.
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":").map(String.init)
        let python = path.map { $0 + "/python3" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        let vipsEnvironment = ["VIPS_CONCURRENCY": "1"]
        let versionFile = work.appendingPathComponent("pyvips-version.txt").path
        // pyvips's start-up (the interpreter, the import, libvips' initialisation), taken off its runs.
        var vipsStartup: Double?
        var vipsVersion = "pyvips not installed (make bench-deps)"
        if let python, let startup = try? ChildProcess.run(python, [script.path, vipsOut.path, empty.path], stdout: versionFile,
                                                           environment: vipsEnvironment, watchMemory: false), startup.status == 0 {
            vipsStartup = (0..<3).compactMap { _ in
                try? ChildProcess.run(python, [script.path, vipsOut.path, empty.path], environment: vipsEnvironment, watchMemory: false)
            }.map { $0.cpuSeconds * 1000 }.min()
            vipsVersion = ((try? String(contentsOfFile: versionFile, encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
        }

        var sums = Sums()
        for round in 0..<options.rounds {
            print("  round \(round + 1) of \(options.rounds)…")
            // Alternated: pyvips first in odd rounds.
            for side in (round % 2 == 0 ? [0, 1] : [1, 0]) {
                if side == 0 {
                    // A workspace per round, all removed at the end: removing one round's
                    // library just before the next made the next round's worker pay for it (on
                    // ext4 each new directory and file scans past the inodes freed in the last
                    // minutes), which a worker on a library that only grows does not.
                    let workspace = try PipelineWorkspace(root: work.appendingPathComponent("worker-\(round)"), workers: 1)
                    _ = try workspace.fill(count: count, from: copies)
                    let profile = work.appendingPathComponent("profile-\(round).tsv")
                    let child = try ChildProcess.run(
                        darkroom.path, ["run", "--once", "--config", workspace.configuration.path, "--no-progress", "--concurrency", "1"],
                        stderr: workspace.log, environment: [StageProfile.variable: profile.path])
                    try workspace.verify(expected: count, run: child)
                    sums.worker += child.cpuSeconds * 1000
                    sums.workerRounds.append(child.cpuSeconds * 1000 / Double(count))
                    sums.workerPeakKilobytes = max(sums.workerPeakKilobytes, child.peakKilobytes)
                    sums.photos += count
                    for (stage, cpu, wall) in readProfile(profile) {
                        sums.stages[stage, default: 0] += cpu
                        sums.stageWall[stage, default: 0] += wall
                    }
                } else if let python, let startup = vipsStartup {
                    let child = try ChildProcess.run(python, [script.path, vipsOut.path, list.path],
                                                     environment: vipsEnvironment, watchMemory: false)
                    guard child.status == 0 else { throw BenchError("pyvips exited with status \(child.status)") }
                    sums.vips += max(0, child.cpuSeconds * 1000 - startup)
                    sums.vipsRounds.append(max(0, child.cpuSeconds * 1000 - startup) / Double(count))
                }
            }
        }
        print("")
        // SHA-256 is computed inside the metadata read: its share is measured here, in this
        // process, with the same function on the same bytes, and taken off the metadata stage.
        let hashStart = Machine.threadCPUSeconds()
        for bytes in copies { _ = PhotoMetadata.sha256Hex(bytes) }
        let hash = (Machine.threadCPUSeconds() - hashStart) * 1000 / Double(copies.count)

        let photosDone = Double(max(sums.photos, 1))
        let worker = sums.worker / photosDone
        let vips = sums.vips / photosDone
        func stage(_ name: String) -> Double { (sums.stages[name] ?? 0) / photosDone }
        let rows: [(String, Double, String)] = [
            ("read", stage("read"), "reading the claimed file"),
            ("hash", hash, "SHA-256 (measured apart, same bytes)"),
            ("metadata", max(0, stage("metadata") - hash), "EXIF, XMP, sidecar, less the hash"),
            ("decode", stage("decode"), "JPEG decode at M/8 (+ sRGB conversion)"),
            ("analysis", stage("analysis"), "upright copy, analysis copy, statistics, placeholder, crops"),
            ("resample", stage("resample"), "Lanczos-3, four variants"),
            ("encode", stage("encode"), "JPEG encode, four variants"),
            ("render, rest", max(0, stage("render") - stage("decode") - stage("analysis") - stage("resample") - stage("encode")),
             "probe, pixel budget, allocations"),
            ("library", stage("library"), "original linked, variants written and synced"),
            ("catalog", stage("catalog"), "duplicate lookup, record, commit"),
        ]
        let staged = rows.map(\.1).reduce(0, +)
        var table = rows.map { [$0.0, Table.number($0.1), Table.percent($0.1 / worker), $0.2] }
        table.append(["rest of the process", Table.number(max(0, worker - staged)), Table.percent(max(0, worker - staged) / worker),
                      "start-up, spool scan, claims, other threads"])
        table.append(["whole worker", Table.number(worker), "100 %", "CPU of `darkroom run --once` (wait4)"])
        let codec = stage("decode") + stage("encode")
        let nonCodec = 1 - codec / worker

        Table.print(header: ["", "CPU ms per photo"], rows: [
            ["`darkroom run --once --concurrency 1`, whole process", Table.number(worker)],
            ["pyvips, one process, VIPS_CONCURRENCY=1, start-up (\(vipsStartup.map { Table.number($0) } ?? "-") ms) taken off",
             vipsStartup == nil ? "-" : Table.number(vips)],
            ["ratio", vipsStartup == nil ? "-" : Table.number(worker / vips, 3)],
        ])
        print("")
        if sums.workerRounds.count > 1 || sums.vipsRounds.count > 1 {
            // Each side's rounds, so that a reader sees how far one run's ratio can move.
            let rounds = zip(sums.workerRounds, sums.vipsRounds).map { "\(Table.number($0)) / \(Table.number($1)) = \(Table.number($0 / $1, 3))" }
            print("Round by round (worker / pyvips, CPU ms per photo): \(rounds.joined(separator: "; ")).\n")
        }
        print("\(labels.count) photos (\(labels.joined(separator: "; "))), each copied \(options.copies) times with a few bytes")
        print("appended: \(count) photos a run, \(options.rounds) rounds, the two sides alternated. CPU time (user + system) of each")
        print("child from wait4, not wall time (the machine may be shared). \(vipsVersion). The worker's peak memory:")
        print("\(Table.megabytes(kilobytes: sums.workerPeakKilobytes)). The binaries: \(darkroom.deletingLastPathComponent().path).")
        // The resampler and SHA-256 choose their paths by these: the share moves with them.
        print("The processor: \(Machine.processor()).\n")
        print("The worker's stages (DARKROOM_STAGE_PROFILE, the worker thread's CPU per photo; render stages from RenderTimings):\n")
        Table.print(header: ["stage", "CPU ms", "share", "what"], rows: table)
        print("")
        print("Codec (decode + encode): \(Table.number(codec)) ms, \(Table.percent(codec / worker)); the rest \(Table.percent(nonCodec)).\n")

        var verdicts: [Verdict] = []
        if vipsStartup != nil {
            verdicts.append(Verdict(
                section: "steady", measure: "CPU per photo, `run --once` (1 thread) / pyvips in-process (1 thread)",
                figure: String(format: "%.3f× (%.1f ms vs %.1f ms)", worker / vips, worker, vips),
                target: "≤ \(vipsRatioTarget)×", passed: worker / vips <= vipsRatioTarget))
        } else {
            verdicts.append(Verdict(section: "steady", measure: "CPU per photo, worker / pyvips", figure: vipsVersion,
                                    target: "≤ \(vipsRatioTarget)×", passed: nil))
        }
        verdicts.append(Verdict(
            section: "steady", measure: "non-codec share of the worker's CPU", figure: Table.percent(nonCodec),
            target: "< \(Table.percent(nonCodecTarget))", passed: nonCodec < nonCodecTarget))
        verdicts.append(Verdict(
            section: "steady", measure: "worker peak memory (1 thread)", figure: Table.megabytes(kilobytes: sums.workerPeakKilobytes),
            target: "< 200 MB", passed: sums.workerPeakKilobytes < 200 * 1024))
        return verdicts
    }

    /// The lines of a stage profile: stage, CPU ms, wall ms.
    static func readProfile(_ file: URL) -> [(String, Double, Double)] {
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t")
            guard fields.count >= 3, let cpu = Double(fields[1]), let wall = Double(fields[2]) else { return nil }
            return (String(fields[0]), cpu, wall)
        }
    }

    /// HEIC: `Imaging.render` in this thread (after one untimed render) against `heif-convert`
    /// writing Y4M, its start-up (`--list-decoders`) taken off.
    static func heif(_ options: Options, corpus: URL, work: URL) throws -> [Verdict] {
        print("### HEIC: the render against libheif's own decode\n")
        guard let tool = ["/usr/bin/heif-dec", "/usr/bin/heif-convert"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            print("heif-dec / heif-convert is missing (make bench-deps installs libheif-examples).\n")
            return [Verdict(section: "steady", measure: "HEIC render / libheif decode", figure: "libheif-examples missing",
                            target: "≤ \(heifRatioTarget)×", passed: nil)]
        }
        let output = (Machine.memoryDirectory() ?? work).appendingPathComponent("darkroom-bench-\(getpid())-heif.y4m")
        defer { try? FileManager.default.removeItem(at: output) }
        let startup = (0..<3).compactMap { _ in try? ChildProcess.run(tool, ["--list-decoders"], watchMemory: false) }
            .map { $0.cpuSeconds * 1000 }.min() ?? 0
        var rows: [[String]] = []
        var renderSum = 0.0, decodeSum = 0.0
        for heic in heics {
            guard let bytes = try? [UInt8](Data(contentsOf: corpus.appendingPathComponent(heic.path))) else { continue }
            let first = try Imaging.render(bytes, recipes: VariantRecipe.defaults, options: RenderOptions())
            var render = 0.0, decode = 0.0, libheifDecode = 0.0
            for _ in 0..<options.heifRounds {
                let start = Machine.processCPUSeconds()
                let result = try Imaging.render(bytes, recipes: VariantRecipe.defaults, options: RenderOptions())
                render += (Machine.processCPUSeconds() - start) * 1000
                decode += result.timings.decode
                let child = try ChildProcess.run(tool, ["--quiet", corpus.appendingPathComponent(heic.path).path, output.path], watchMemory: false)
                guard child.status == 0 else { throw BenchError("\(tool) failed on \(heic.path) (status \(child.status))") }
                libheifDecode += max(0, child.cpuSeconds * 1000 - startup)
            }
            let n = Double(options.heifRounds)
            renderSum += render / n
            decodeSum += libheifDecode / n
            rows.append(["\(heic.label), \(first.info.width)×\(first.info.height)", Table.number(render / n), Table.number(decode / n),
                         Table.number(libheifDecode / n), Table.number(render / libheifDecode, 2)])
        }
        let count = Double(max(rows.count, 1))
        rows.append(["mean", Table.number(renderSum / count), "", Table.number(decodeSum / count), Table.number(renderSum / decodeSum, 2)])
        Table.print(header: ["HEIC", "render, 4 variants (CPU ms)", "of which decode (render thread)", "\((tool as NSString).lastPathComponent) to Y4M (CPU ms)", "ratio"],
                    rows: rows)
        print("")
        print("The render in this process (after one untimed render; this process's CPU, so libde265's threads count too),")
        print("\(options.heifRounds) rounds; the tool's CPU from wait4 less its start-up (\(Table.number(startup)) ms).\n")
        let ratio = renderSum / decodeSum
        return [Verdict(section: "steady", measure: "HEIC (12 MP) render / libheif decode", figure: String(format: "%.2f×", ratio),
                        target: "≤ \(heifRatioTarget)×", passed: ratio <= heifRatioTarget)]
    }
}
