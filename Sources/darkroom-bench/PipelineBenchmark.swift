import BenchInputs
import BenchKit
import Foundation
import Storage

/// `darkroom-bench pipeline`: spooled 12 MP photos through the real `darkroom run --once`, set
/// against rendering alone; then the run's memory with a spool of 1,000 and of 5,000 photos.
enum PipelineBenchmark {
    /// The ceiling of the time beyond rendering, as a fraction of the pipeline's time.
    static let overheadTarget = 0.15
    /// The floor of `run --once` on 1,000 12 MP photos with 2 workers, in photos a second (judged
    /// at that size only: a smaller run is dominated by start-up and the last photos' tail).
    static let throughputTarget = 16.0
    /// Peak memory counts as flat when the larger spool's is within this fraction…
    static let flatFraction = 0.10
    /// …or within this many megabytes of the smaller one's.
    static let flatMegabytes = 5.0

    struct Options {
        var photos = 1000
        /// Distinct 12 MP photos generated; the spool cycles through them.
        var base = 8
        var workers = 2
        /// Whether `--workers` was given (pipeline-postgres otherwise runs each catalog at its default).
        var workersGiven = false
        /// Spool sizes of the memory-flatness runs (small photos).
        var flatCounts = [1000, 5000]
        var throughput = true
        var flatness = true

        /// The defaults, with `photos` photos for the throughput run (the import's is 2,000).
        init(photos: Int = 1000) {
            self.photos = photos
        }

        init(_ arguments: BenchArguments, photos defaultPhotos: Int = 1000) throws {
            try arguments.check(valueFlags: ["--photos", "--base", "--workers", "--flat-counts"],
                                bareFlags: ["--no-throughput", "--no-flatness"])
            photos = try arguments.int("--photos", default: defaultPhotos)
            base = try arguments.int("--base", default: base)
            workers = try arguments.int("--workers", default: workers, in: 1...64)
            workersGiven = arguments.has("--workers")
            flatCounts = try arguments.ints("--flat-counts", default: flatCounts)
            throughput = !arguments.has("--no-throughput")
            flatness = !arguments.has("--no-flatness")
        }
    }

    /// The `darkroom` binary built beside this one.
    static func darkroomBinary() throws -> URL {
        let binary = Machine.executableDirectory().appendingPathComponent("darkroom")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw BenchError("\(binary.path) is missing; build it with `swift build -c release --product darkroom` "
                             + "(swift build keeps only the last of several --product flags)")
        }
        return binary
    }

    static func run(_ options: Options) throws -> [Verdict] {
        try run(options, throughput: throughput, flatness: flatness)
    }

    /// Runs the sections `options` asks for, with the `darkroom` binary built beside this one.
    static func run(_ options: Options, throughput: (Options, URL) throws -> [Verdict],
                    flatness: (Options, URL) throws -> [Verdict]) throws -> [Verdict] {
        let darkroom = try darkroomBinary()
        var verdicts: [Verdict] = []
        if options.throughput { verdicts += try throughput(options, darkroom) }
        if options.flatness { verdicts += try flatness(options, darkroom) }
        return verdicts
    }

    // MARK: Throughput and overhead

    static func throughput(_ options: Options, darkroom: URL) throws -> [Verdict] {
        print("## pipeline: \(options.photos) spooled 12 MP photos through `darkroom run --once --concurrency \(options.workers)`\n")
        let scratch = try Machine.scratchDirectory("pipeline")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let baseDirectory = scratch.appendingPathComponent("base")
        let base = try PhotoSet.generateAnnounced(count: options.base, into: baseDirectory)

        // Rendering alone, on the same pixels: the spool's copies differ from these only in
        // bytes after the JPEG end marker, which the decoder never reads. Half before the run and
        // half after, so that load from other work on the machine drifting meanwhile evens out.
        let settings = RenderMeasurement.Settings(metadata: false, orientation: nil)
        let firstHalf = options.photos / 2
        print("Rendering the same photos alone (\(options.workers) worker threads, no metadata, no storage): \(firstHalf) now, "
              + "\(options.photos - firstHalf) after the run…")
        let loadBefore = Machine.loadAverage()
        let before = firstHalf == 0 ? nil : try RenderMeasurement.measureInChild(
            directory: baseDirectory, workers: options.workers, count: firstHalf, settings: settings)

        let workspace = try PipelineWorkspace(root: scratch.appendingPathComponent("run"), workers: options.workers)
        let fillStart = Machine.now()
        let written = try workspace.fill(count: options.photos, from: base.photos)
        print(String(format: "Spool filled: %d distinct photos, %@ in %.1f s (written and synced before the run).",
                     options.photos, Table.size(bytes: written), Machine.now() - fillStart))
        print("Running darkroom…")
        let run = try workspace.run(darkroom: darkroom, workers: options.workers)
        try workspace.verify(expected: options.photos, run: run)
        let libraryBytes = Machine.diskUsage(workspace.library)
        workspace.remove()
        let after = try RenderMeasurement.measureInChild(
            directory: baseDirectory, workers: options.workers, count: options.photos - firstHalf, settings: settings)
        let loadAfter = Machine.loadAverage()

        let halves = [before, after].compactMap { $0 }
        let renderWall = halves.reduce(0) { $0 + $1.wallSeconds }
        // CPU time of the children, each one's warm-up photos taken out.
        let renderCPU = halves.reduce(0) { $0 + ($1.childCPUSeconds ?? 0) * Double($1.photos) / Double($1.photos + $1.warmUps) }
        let renderPeak = halves.map(\.peakKilobytes).max() ?? 0
        let overhead = 1 - renderWall / run.wallSeconds
        // The same in CPU time, less disturbed by other work on the machine.
        let cpuOverhead = 1 - renderCPU / run.cpuSeconds
        let extraMilliseconds = (run.wallSeconds - renderWall) * 1000 * Double(options.workers) / Double(options.photos)
        print("")
        Table.print(header: ["run", "workers", "photos", "wall s", "photos/s", "ms/photo (per worker)", "CPU s", "peak RSS"], rows: [
            ["darkroom run --once (spool → library + catalog)", "\(options.workers)", "\(options.photos)", Table.number(run.wallSeconds),
             Table.number(Double(options.photos) / run.wallSeconds, 2),
             Table.number(run.wallSeconds * 1000 * Double(options.workers) / Double(options.photos)), Table.number(run.cpuSeconds),
             Table.megabytes(kilobytes: run.peakKilobytes)],
            ["Imaging.render alone (same pixels, two halves)", "\(options.workers)", "\(options.photos)", Table.number(renderWall),
             Table.number(Double(options.photos) / renderWall, 2),
             Table.number(renderWall * 1000 * Double(options.workers) / Double(options.photos)), Table.number(renderCPU),
             Table.megabytes(kilobytes: renderPeak)],
        ])
        print("")
        print("The pipeline row is the real binary on a temporary spool, library and catalog on disk (\(scratch.path)), with a")
        print("pipeline.json of absolute paths and settle_seconds 0; wall time from spawn to exit (startup, scans, claims, metadata,")
        print("SHA-256, render, durable library writes with fsync, SQLite commits, spool cleanup); peak RSS is the child's VmHWM,")
        print("read from /proc/PID/status every 20 ms until it exits. Each spooled photo is one of the \(options.base) generated photos")
        print("plus unique bytes after its end marker, so none is a duplicate (checked: the catalog holds \(options.photos) pictures,")
        print("nothing failed, the spool is empty). The render-alone row is two child processes of `render --child --no-metadata`.")
        print(String(format: "The library took %@. Overhead = 1 − render-alone wall / pipeline wall = %@ (%.1f ms per photo per worker).",
                     Table.size(bytes: libraryBytes), Table.percent(overhead), extraMilliseconds))
        print(String(format: "Cross-check in CPU time (user + system of each child, less sensitive to other load): 1 − %.1f s / %.1f s = %@.",
                     renderCPU, run.cpuSeconds, Table.percent(cpuOverhead)))
        print("Load average: \(loadBefore) before, \(loadAfter) after.\n")

        let verdicts = [
            Verdict(section: "pipeline", measure: "`darkroom run --once` throughput, \(options.photos) × 12 MP, \(options.workers) workers",
                    figure: String(format: "%.2f photos/s", Double(options.photos) / run.wallSeconds),
                    target: options.photos >= 1000 && options.workers == 2 ? "≥ \(Int(throughputTarget)) photos/s" : "(reported)",
                    passed: options.photos >= 1000 && options.workers == 2 ? Double(options.photos) / run.wallSeconds >= throughputTarget : nil),
            Verdict(section: "pipeline", measure: "overhead beyond rendering (1 − render alone / pipeline, wall)",
                    figure: Table.percent(overhead) + " (CPU time: " + Table.percent(cpuOverhead) + ")", target: "< \(Int(overheadTarget * 100)) %", passed: overhead < overheadTarget),
            Verdict(section: "pipeline", measure: "peak memory of darkroom run, \(options.photos) × 12 MP",
                    figure: Table.megabytes(kilobytes: run.peakKilobytes), target: "(reported)", passed: nil),
        ]
        Verdict.printTable(verdicts)
        print("")
        return verdicts
    }

    // MARK: Memory flatness

    static func flatness(_ options: Options, darkroom: URL) throws -> [Verdict] {
        try flatness(section: "pipeline", feed: .spool, counts: options.flatCounts, base: options.base, workers: options.workers, darkroom: darkroom)
    }

    /// How the photos of a flatness run reach darkroom.
    enum Feed {
        /// Spooled, then `darkroom run --once`.
        case spool
        /// A library tree, then `darkroom import --copy`.
        case library
    }

    /// Peak memory of darkroom on `counts` small photos each, fed one way; the verdict says
    /// whether it stays flat.
    static func flatness(section: String, feed: Feed, counts: [Int], base baseCount: Int, workers: Int, darkroom: URL) throws -> [Verdict] {
        let memory = Machine.memoryDirectory()
        let command = feed == .spool ? "darkroom run --once" : "darkroom import --copy"
        let what = feed == .spool ? "spooled photos" : "photos imported"
        print("## \(section): memory of `\(command)` with \(counts.map(String.init).joined(separator: " and ")) \(what)\n")
        let scratch = try Machine.scratchDirectory(section + "-flatness", under: memory)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let baseDirectory = scratch.appendingPathComponent("base")
        try FileManager.default.createDirectory(at: baseDirectory, withIntermediateDirectories: true)
        let base = try PhotoSet.generate(count: baseCount, into: baseDirectory, width: 640, height: 480)
        print("Small photos, to keep the run short: \(baseCount) of 640×480 (0.3 MP), made distinct per copy.")
        print("  source: \(base.origin)")

        var rows: [[String]] = []
        var peaks: [Int] = []
        for count in counts {
            let workspace = try PipelineWorkspace(root: scratch.appendingPathComponent("run-\(count)"), workers: workers)
            defer { workspace.remove() }
            let run: ChildProcess.Result
            switch feed {
            case .spool:
                _ = try workspace.fill(count: count, from: base.photos)
                run = try workspace.run(darkroom: darkroom, workers: workers)
            case .library:
                _ = try workspace.fillLibrary(count: count, from: base.photos)
                run = try workspace.runImport(darkroom: darkroom, workers: workers)
            }
            try workspace.verify(expected: count, run: run)
            peaks.append(run.peakKilobytes)
            rows.append(flatnessRow(count: count, run: run))
        }
        print("")
        Table.print(header: ["\(what) (640×480)", "wall s", "photos/s", "CPU ms/photo", "peak RSS (VmHWM)"], rows: rows)
        print("")
        print("Each run: a fresh \(feed == .spool ? "spool" : "library tree"), library and catalog \(memory == nil ? "in the temporary directory" : "on tmpfs (/dev/shm)"),")
        print("so that disk latency does not stretch the run (page-cache and tmpfs pages are not counted in a process's RSS);")
        print("`\(command) --concurrency \(workers)`; peak RSS is the child's VmHWM, read from /proc/PID/status every")
        print("20 ms until it exits (not wait4's ru_maxrss, which Linux seeds with the spawning process's own peak: see ChildProcess).\n")
        return flatnessVerdict(section: section, measure: "memory flatness, \(counts.first ?? 0) → \(counts.last ?? 0) \(what)", peaks: peaks)
    }

    /// A table row of one flatness run: count, wall, rate, CPU per photo, peak.
    static func flatnessRow(count: Int, run: ChildProcess.Result) -> [String] {
        ["\(count)", Table.number(run.wallSeconds), Table.number(Double(count) / run.wallSeconds, 1),
         Table.number(run.cpuSeconds * 1000 / Double(count)),
         Table.megabytes(kilobytes: run.peakKilobytes) + String(format: " (%d kB)", run.peakKilobytes)]
    }

    /// The verdict on peaks measured at growing sizes: flat when the last is within
    /// `flatFraction` or `flatMegabytes` of the first. Printed, and returned.
    static func flatnessVerdict(section: String, measure: String, peaks: [Int]) -> [Verdict] {
        guard let smallest = peaks.first, let largest = peaks.last, peaks.count >= 2 else { return [] }
        let growth = Double(largest - smallest) / 1024
        let fraction = Double(largest - smallest) / Double(smallest)
        let flat = fraction <= flatFraction || growth <= flatMegabytes
        let verdicts = [Verdict(
            section: section, measure: measure,
            figure: String(format: "%@ → %@ (%+.1f MB, %+.1f %%)", Table.megabytes(kilobytes: smallest), Table.megabytes(kilobytes: largest),
                           growth, fraction * 100),
            target: "within \(Int(flatFraction * 100)) % or \(Int(flatMegabytes)) MB", passed: flat)]
        Verdict.printTable(verdicts)
        print("")
        return verdicts
    }
}
