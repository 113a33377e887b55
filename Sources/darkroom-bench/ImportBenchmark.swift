import BenchInputs
import BenchKit
import Foundation
import Storage

/// `darkroom-bench import`: a library tree of 12 MP photos through the real `darkroom import`,
/// set against `darkroom run --once` on a spool of the same photos; then the import's memory
/// with libraries of two sizes.
enum ImportBenchmark {
    /// The import's throughput must be at least this fraction of the spool worker's.
    static let throughputTarget = 0.90

    /// The same knobs as the spool's benchmark; `photos` defaults to 2,000.
    typealias Options = PipelineBenchmark.Options
    static let defaultPhotos = 2000

    static func run(_ options: Options) throws -> [Verdict] {
        try PipelineBenchmark.run(options, throughput: throughput, flatness: flatness)
    }

    // MARK: Throughput against the spool

    static func throughput(_ options: Options, darkroom: URL) throws -> [Verdict] {
        print("## import: \(options.photos) photos of 12 MP through `darkroom import --copy`, against `darkroom run --once` on the same photos\n")
        let scratch = try Machine.scratchDirectory("import")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let baseDirectory = scratch.appendingPathComponent("base")
        let base = try PhotoSet.generateAnnounced(count: options.base, into: baseDirectory)

        let workspace = try PipelineWorkspace(root: scratch.appendingPathComponent("run"), workers: options.workers)
        let written = try workspace.fillLibrary(count: options.photos, from: base.photos)
        print(String(format: "Library tree written: %d distinct photos, %@, 40 to a folder (synced before the runs).",
                     options.photos, Table.size(bytes: written)))

        // Spool, import, spool: the spool's figure is the mean of the runs either side, so that
        // load drifting on the machine meanwhile evens out.
        var spoolRuns: [ChildProcess.Result] = []
        var importRun: ChildProcess.Result?
        for step in ["spool", "import", "spool"] {
            try workspace.clearOutputs()
            if step == "spool" {
                let count = options.photos / 2
                _ = try workspace.fill(count: count, from: base.photos)
                print("Running darkroom run --once on \(count) of the same photos…")
                let run = try workspace.run(darkroom: darkroom, workers: options.workers)
                try workspace.verify(expected: count, run: run)
                spoolRuns.append(run)
            } else {
                print("Running darkroom import on all \(options.photos)…")
                let run = try workspace.runImport(darkroom: darkroom, workers: options.workers)
                try workspace.verify(expected: options.photos, run: run)
                importRun = run
            }
        }
        workspace.remove()
        guard let importRun else { return [] }
        let spoolPhotos = Double(options.photos / 2 * spoolRuns.count)
        let spoolWall = spoolRuns.reduce(0) { $0 + $1.wallSeconds }
        let spoolRate = spoolPhotos / spoolWall
        let importRate = Double(options.photos) / importRun.wallSeconds
        let ratio = importRate / spoolRate
        print("")
        Table.print(header: ["run", "workers", "photos", "wall s", "photos/s", "CPU s", "peak RSS"], rows: [
            ["darkroom import --copy (library tree)", "\(options.workers)", "\(options.photos)", Table.number(importRun.wallSeconds),
             Table.number(importRate, 2), Table.number(importRun.cpuSeconds), Table.megabytes(kilobytes: importRun.peakKilobytes)],
            ["darkroom run --once (spool), two runs of \(options.photos / 2)", "\(options.workers)", "\(Int(spoolPhotos))", Table.number(spoolWall),
             Table.number(spoolRate, 2), Table.number(spoolRuns.reduce(0) { $0 + $1.cpuSeconds }),
             Table.megabytes(kilobytes: spoolRuns.map(\.peakKilobytes).max() ?? 0)],
        ])
        print("")
        print("Both are the real binary with a pipeline.json of absolute paths, on a temporary library and catalog on disk")
        print("(\(scratch.path)); wall time from spawn to exit; peak RSS is the child's VmHWM polled from /proc every 20 ms.")
        print("The same photo bytes in both (each a generated photo plus unique bytes after its end marker): the import walks the")
        print("tree, copies each original into the library and journals it; the spool claims, copies and removes. Each run starts")
        print("from an empty library and catalog, and every photo is checked to be in the catalog with nothing failed.\n")
        let verdicts = [
            Verdict(section: "import", measure: "throughput, \(options.photos) × 12 MP, \(options.workers) workers",
                    figure: String(format: "%.2f photos/s (spool: %.2f)", importRate, spoolRate), target: "(reported)", passed: nil),
            Verdict(section: "import", measure: "import throughput / spool throughput",
                    figure: Table.percent(ratio), target: "≥ \(Int(throughputTarget * 100)) %", passed: ratio >= throughputTarget),
            Verdict(section: "import", measure: "peak memory of darkroom import, \(options.photos) × 12 MP",
                    figure: Table.megabytes(kilobytes: importRun.peakKilobytes), target: "(reported)", passed: nil),
        ]
        Verdict.printTable(verdicts)
        print("")
        return verdicts
    }

    // MARK: Memory flatness

    static func flatness(_ options: Options, darkroom: URL) throws -> [Verdict] {
        try PipelineBenchmark.flatness(section: "import", feed: .library, counts: options.flatCounts, base: options.base,
                                       workers: options.workers, darkroom: darkroom)
    }
}
