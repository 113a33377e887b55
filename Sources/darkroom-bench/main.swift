// darkroom-bench: Darkroom's speed and memory targets, measured (`make bench` runs `all`).
//
//   darkroom-bench render   [--photos N] [--rounds R] [--real-rounds R] [--workers 1|2] [--orientation 1...8] [--dir DIR]
//   darkroom-bench pipeline [--photos N] [--base K] [--workers W] [--flat-counts A,B] [--no-throughput] [--no-flatness]
//   darkroom-bench import   [--photos N] [--base K] [--workers W] [--flat-counts A,B] [--no-throughput] [--no-flatness]
//   darkroom-bench moments  [--pictures N] [--block B] [--authors A] [--seed S] [--dir DIR] [--disk-sample N] [--max-seconds S] [--keep]
//   darkroom-bench http     [--photos N] [--clients C] [--workers W] [--base K] [--idle-photos N] [--rates R,S] [--paced-seconds S] [--worker-niceness N]
//   darkroom-bench flood    [--clients C] [--megabytes M]   (also the first phase of `http`)
//   darkroom-bench hostile  [--connections N] [--pollers N] [--slow N] [--seconds S] [--addresses A]
//   darkroom-bench latency  [--probes N] [--backlog N] [--import-photos N] [--workers W] [--base K]
//   darkroom-bench queue    [--claimers A,B,C] [--seconds S]
//   darkroom-bench pipeline-postgres [--photos N] [--base K] [--workers W]
//   darkroom-bench bucket   [--photos N] [--base K] [--workers W] [--probes N]
//   darkroom-bench gazetteer [--lookups N] [--oracle FILE]
//   darkroom-bench all      [--quick]
//
// Every figure goes to standard output with how it was measured and its target (PASS/MISS).
// The speed targets live here, never in tests.
import BenchKit
import Foundation
import PostgresBench

let usage = """
    usage: darkroom-bench render   [--photos N=8] [--rounds R=2] [--real-rounds R=3] [--workers 1|2] [--orientation 1...8] [--dir DIR]
           darkroom-bench pipeline [--photos N=1000] [--base K=8] [--workers W=2] [--flat-counts A,B=1000,5000]
                                   [--no-throughput] [--no-flatness]
           darkroom-bench import   [--photos N=2000] [--base K=8] [--workers W=2] [--flat-counts A,B=1000,5000]
                                   [--no-throughput] [--no-flatness]
           darkroom-bench moments  [--pictures N=100000] [--block B=10000] [--authors A=300] [--seed S] [--dir DIR] [--disk-sample N=300]
                                   [--max-seconds S] [--keep] [--postgres]   (--postgres: the catalog in a temporary PostgreSQL cluster)
           darkroom-bench queue    [--claimers A,B,C=1,4,16] [--seconds S=5]   (the PostgreSQL job queue: claim, renew, complete)
           darkroom-bench pipeline-postgres [--photos N=1000] [--base K=8] [--workers W=2]   (run --once, SQLite and PostgreSQL side by side)
           darkroom-bench bucket   [--photos N=1000] [--base K=8] [--workers W] [--probes N=8]   (run --once, library local and in an
                                   S3 bucket side by side; requests per photo; upload to done with no shared directory)
           darkroom-bench http     [--photos N=500] [--clients C=16] [--workers W=2] [--base K=8] [--idle-photos N=200]
                                   [--rates R,S=C/2,C,2C] [--paced-seconds S=10] [--worker-niceness N=10]
           darkroom-bench flood    [--clients C=6] [--megabytes M=64]   (multipart floods; also the first phase of `http`)
           darkroom-bench hostile  [--connections N=1100] [--pollers N=2000] [--slow N=100] [--seconds S=20] [--addresses A=40]
                                   (issue 29's attack 1 and slow uploads: admin /healthz and a good upload's worst latency)
           darkroom-bench latency  [--probes N=8] [--backlog N=10000] [--import-photos N=240] [--workers W=2] [--base K=4]
                                   (upload to done: idle, behind a backlog, beside an import)
           darkroom-bench steady   [--copies N=19] [--rounds R=3] [--heif-rounds R=3] [--no-heif]   (the whole worker in one thread
                                   against libvips in-process through pyvips, with its stages; HEIC against heif-convert)
           darkroom-bench gazetteer [--lookups N=100000] [--oracle FILE]   (load, memory, lookups; zone agreement with
                                   tools/gazetteer/agreement.py's polygon-oracle points)
           darkroom-bench all      [--quick]   (every benchmark at its defaults, in about 40 minutes: the moments ingests
                                               stop early if time runs out; --quick: small sizes, to check the harness)
    """

/// The time `all` allows itself.
let allBudgetSeconds = 30.0 * 60
/// What `all` gives the moments ingest with the catalog in PostgreSQL (after the SQLite one).
let postgresMomentsSeconds = 300

/// Runs every benchmark and prints the summary of targets.
func runAll(_ arguments: BenchArguments) throws -> [Verdict] {
    try arguments.check(valueFlags: [], bareFlags: ["--quick"])
    var render = RenderBenchmark.Options()
    var pipeline = PipelineBenchmark.Options()
    var moments = MomentsBenchmark.Options()
    var imports = ImportBenchmark.Options(photos: ImportBenchmark.defaultPhotos)
    var http = HTTPBenchmark.Options()
    var latency = LatencyBenchmark.Options()
    var queue = QueueBenchmark.Options()
    var postgresPipeline = PipelineBenchmark.Options()
    var bucket = BucketBenchmark.Options()
    var steady = SteadyBenchmark.Options()
    if arguments.has("--quick") {
        steady.copies = 1
        steady.rounds = 1
        steady.heifRounds = 1
        queue.seconds = 1
        postgresPipeline.photos = 40
        postgresPipeline.base = 2
        bucket.photos = 40
        bucket.base = 2
        bucket.probes = 3
        latency.probes = 3
        latency.backlog = 200
        latency.importPhotos = 20
        latency.base = 2
        imports.photos = 40
        imports.base = 2
        imports.flatCounts = [100, 500]
        render.photos = 2
        render.rounds = 1
        render.realRounds = 1
        pipeline.photos = 40
        pipeline.base = 2
        pipeline.flatCounts = [100, 500]
        moments.pictures = 10_000
        moments.block = 1_000
        moments.diskSample = 50
        http.photos = 20
        http.clients = 4
        http.base = 2
        http.idlePhotos = 10
        http.pacedSeconds = 2
    }
    let start = Machine.now()
    var verdicts: [Verdict] = []
    verdicts += try GazetteerBenchmark.run(GazetteerBenchmark.Options())
    verdicts += try RenderBenchmark.run(render)
    verdicts += try SteadyBenchmark.run(steady)
    verdicts += try PipelineBenchmark.run(pipeline)
    verdicts += try ImportBenchmark.run(imports)
    verdicts += try HTTPBenchmark.run(http)
    verdicts += try LatencyBenchmark.run(latency)
    // The whole run stays under about 30 minutes: the moments ingest gets what is left (at least
    // two minutes), less a minute for the rebuild check.
    moments.maxSeconds = max(120, Int(allBudgetSeconds - (Machine.now() - start)) - 60)
    verdicts += try MomentsBenchmark.run(moments)
    // PostgreSQL, each against a temporary cluster of its own: the queue, run --once beside
    // SQLite, and the moments ingest for a bounded time.
    verdicts += try QueueBenchmark.run(queue)
    verdicts += try PostgresPipelineBenchmark.run(postgresPipeline)
    verdicts += try BucketBenchmark.run(bucket)
    var postgresMoments = moments
    postgresMoments.postgres = true
    postgresMoments.maxSeconds = postgresMomentsSeconds
    verdicts += try MomentsBenchmark.run(postgresMoments)
    return verdicts
}

/// The lines of `usage` that describe `command` (its first line and those continuing it), if any.
func usage(of command: String) -> String? {
    let lines = usage.split(separator: "\n", omittingEmptySubsequences: false)
    func names(_ line: Substring) -> Bool {
        let words = line.split(separator: " ")
        guard let at = words.firstIndex(of: "darkroom-bench"), at + 1 < words.count else { return false }
        return words[at + 1] == command
    }
    guard let first = lines.firstIndex(where: names) else { return nil }
    let rest = lines[(first + 1)...].prefix { !$0.contains("darkroom-bench ") }
    let block = [lines[first]] + rest
    return block.map { String($0).replacingOccurrences(of: "usage: ", with: "       ") }.joined(separator: "\n")
}

let arguments = BenchArguments(Array(CommandLine.arguments.dropFirst()))
if let command = arguments.command, arguments.has("--help") || arguments.has("-h") {
    // `darkroom-bench steady --help`: that section's line of the usage; every section's for an unknown one.
    print(usage(of: command).map { "usage:" + $0.dropFirst(6) } ?? usage)
    exit(0)
}
do {
    if arguments.command == "render", let directory = arguments.value("--child") {
        try RenderBenchmark.child(arguments, directory: directory)
        exit(0)
    }
    let start = Machine.now()
    let verdicts: [Verdict]
    switch arguments.command {
    case "render": verdicts = try RenderBenchmark.run(RenderBenchmark.Options(arguments))
    case "pipeline": verdicts = try PipelineBenchmark.run(PipelineBenchmark.Options(arguments))
    case "import": verdicts = try ImportBenchmark.run(ImportBenchmark.Options(arguments, photos: ImportBenchmark.defaultPhotos))
    case "moments": verdicts = try MomentsBenchmark.run(MomentsBenchmark.Options(arguments))
    case "http": verdicts = try HTTPBenchmark.run(HTTPBenchmark.Options(arguments))
    case "flood": verdicts = try FloodBenchmark.run(FloodBenchmark.Options(arguments))
    case "hostile": verdicts = try HostileBenchmark.run(HostileBenchmark.Options(arguments))
    case "latency": verdicts = try LatencyBenchmark.run(LatencyBenchmark.Options(arguments))
    case "queue": verdicts = try QueueBenchmark.run(QueueBenchmark.Options(arguments))
    case "bucket": verdicts = try BucketBenchmark.run(BucketBenchmark.Options(arguments))
    case "gazetteer": verdicts = try GazetteerBenchmark.run(GazetteerBenchmark.Options(arguments))
    case "steady": verdicts = try SteadyBenchmark.run(SteadyBenchmark.Options(arguments))
    case "pipeline-postgres": verdicts = try PostgresPipelineBenchmark.run(PipelineBenchmark.Options(arguments))
    case "all": verdicts = try runAll(arguments)
    case "help", "--help", "-h":
        print(usage)
        exit(0)
    default:
        FileHandle.standardError.write(Data((usage + "\n").utf8))
        exit(2)
    }
    print("## Summary (\(ProcessInfo.processInfo.activeProcessorCount) cores, \(String(format: "%.0f", Machine.now() - start)) s)\n")
    print("\(Machine.processor()).\n")
    Verdict.printTable(verdicts, withSection: true)
    // A missed target is a finding, not a failure of the benchmark: the exit code says only whether it ran.
    exit(0)
} catch {
    FileHandle.standardError.write(Data("darkroom-bench: \(error)\n".utf8))
    exit(1)
}
