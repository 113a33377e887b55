import AsyncHTTPClient
import BenchInputs
import BenchKit
import Catalog
import Foundation

/// `darkroom-bench latency`: how long an upload takes to be `done`, against the photo's own
/// processing time, with the real `darkroom serve` (its workers in its process) on loopback:
/// 1. idle: uploads posted one at a time, each followed by `GET /v1/uploads/{id}?wait=60`;
/// 2. behind a backlog: the same with thousands of photos queued in `incoming/` first (a drop
///    folder's or a bulk `enqueue`'s);
/// 3. beside an import: the same while `darkroom import` runs on the same catalog.
/// Upload to done runs from sending the POST to the answer of the waiting GET; the processing
/// time is the upload's own job (jobs.finished_at − started_at).
enum LatencyBenchmark {
    struct Options {
        /// Uploads measured in each phase.
        var probes = 8
        /// Photos queued before the second phase.
        var backlog = 10_000
        /// Photos of the library imported during the third phase.
        var importPhotos = 240
        var workers = 2
        /// Distinct 12 MP photos generated; uploads and imports cycle through them.
        var base = 4

        init() {}

        init(_ arguments: BenchArguments) throws {
            try arguments.check(valueFlags: ["--probes", "--backlog", "--import-photos", "--workers", "--base"])
            probes = try arguments.int("--probes", default: probes, in: 1...1000)
            backlog = try arguments.int("--backlog", default: backlog, in: 0...1_000_000)
            importPhotos = try arguments.int("--import-photos", default: importPhotos, in: 0...100_000)
            workers = try arguments.int("--workers", default: workers, in: 1...64)
            base = try arguments.int("--base", default: base, in: 1...100)
        }
    }

    /// One upload: from POST to `done`, and its own processing.
    struct Probe {
        let seconds: Double
        let processingSeconds: Double
    }

    /// The backlog's photos: 1 MP, so that ten thousand of them (about 2.5 GB) fit on a small
    /// disk, each still a photo a worker spends real time on.
    static let backlogSize = (width: 1200, height: 900)

    static func run(_ options: Options) throws -> [Verdict] {
        try HTTPBenchmark.Outcome.waiting { try await measure(options) }
    }

    static func measure(_ options: Options) async throws -> [Verdict] {
        let darkroom = try PipelineBenchmark.darkroomBinary()
        print("## latency: upload to done with `darkroom serve` (\(options.workers) workers): idle, behind \(options.backlog) queued photos, beside an import of \(options.importPhotos)\n")
        let scratch = try Machine.scratchDirectory("latency")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let uploads = try PhotoSet.generateAnnounced(count: options.base, into: scratch.appendingPathComponent("base"))
        let loadBefore = Machine.loadAverage()
        let client = HTTPClient.shared

        print("Idle: \(options.probes) uploads one at a time…")
        let idleSpace = try PipelineWorkspace(root: scratch.appendingPathComponent("idle"), workers: options.workers,
                                              extra: ["server": ["host": "127.0.0.1", "port": 0]])
        let idle = try await probe(options, darkroom: darkroom, workspace: idleSpace, photos: uploads.photos, client: client, first: 0)

        print("Writing a backlog of \(options.backlog) photos of \(backlogSize.width)×\(backlogSize.height) into incoming/…")
        let backlogSpace = try PipelineWorkspace(root: scratch.appendingPathComponent("backlog"), workers: options.workers,
                                                 extra: ["server": ["host": "127.0.0.1", "port": 0]])
        let smallDirectory = scratch.appendingPathComponent("small")
        try FileManager.default.createDirectory(at: smallDirectory, withIntermediateDirectories: true)
        let small = try PhotoSet.generate(count: options.base, into: smallDirectory,
                                          width: backlogSize.width, height: backlogSize.height)
        _ = try backlogSpace.fill(count: options.backlog, from: small.photos)
        print("Behind the backlog: \(options.probes) uploads one at a time…")
        let behind = try await probe(options, darkroom: darkroom, workspace: backlogSpace, photos: uploads.photos, client: client,
                                     first: 1000, warmUp: true)

        print("Beside `darkroom import` of \(options.importPhotos) photos: \(options.probes) uploads one at a time…")
        let importSpace = try PipelineWorkspace(root: scratch.appendingPathComponent("import"), workers: options.workers,
                                                extra: ["server": ["host": "127.0.0.1", "port": 0]])
        // Copies 0 to N−1 of the generated photos; the uploads of this phase are copies 2000 and on.
        _ = try importSpace.fillLibrary(count: options.importPhotos, from: uploads.photos)
        let importer = Process()
        importer.executableURL = darkroom
        importer.arguments = ["import", importSpace.photoLibrary.path, "--config", importSpace.configuration.path, "--progress", "none"]
        importer.standardError = FileHandle(forWritingAtPath: "/dev/null")
        importer.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        try importer.run()
        defer { if importer.isRunning { importer.terminate() } }
        let beside = try await probe(options, darkroom: darkroom, workspace: importSpace, photos: uploads.photos, client: client,
                                     first: 2000, warmUp: false)
        let importStillRunning = importer.isRunning
        importer.terminate()
        importer.waitUntilExit()
        return report(options, idle: idle, behind: behind, beside: beside, importStillRunning: importStillRunning,
                      origin: uploads.origin, load: (loadBefore, Machine.loadAverage()))
    }

    /// Starts `serve` on `workspace`, posts `options.probes` uploads one at a time (each waited
    /// for with `?wait=`), stops the server, and returns what each took. With `warmUp`, the
    /// workers are first seen at work on the spool's backlog.
    static func probe(_ options: Options, darkroom: URL, workspace: PipelineWorkspace, photos: [[UInt8]], client: HTTPClient,
                      first: Int, warmUp: Bool = false) async throws -> [Probe] {
        let server = try HTTPBenchmark.start(darkroom, workspace: workspace, workers: true, log: workspace.log)
        defer { if server.isRunning { server.terminate() } }
        let port = try await HTTPBenchmark.listeningPort(workspace.log, server: server)
        let catalog = try Catalog(path: workspace.catalogPath)
        if warmUp {
            while try catalog.counts().jobsAdded < options.workers * 2, server.isRunning {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        let load = HTTPLoad(port: port, token: HTTPBenchmark.token, photos: photos, client: client)
        var probes: [Probe] = []
        for index in first..<(first + options.probes) {
            probes.append(try await uploadToDone(load, index: index, port: port, client: client, catalog: catalog))
            try await Task.sleep(for: .milliseconds(300))
        }
        server.terminate()
        server.waitUntilExit()
        return probes
    }

    /// Posts upload `index` and waits for it with `?wait=60`: from the POST to the waiting GET's
    /// answer, and the upload's own job (finished − started) as `catalog` recorded it.
    static func uploadToDone(_ load: HTTPLoad, index: Int, port: Int, client: HTTPClient, catalog: any CatalogStore) async throws -> Probe {
        let started = Machine.now()
        let post = try await load.post(index: index, due: nil)
        guard post.status == 202, let id = post.uploadId else { throw BenchError("upload \(index) answered \(post.status)") }
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/uploads/\(id)?wait=60")
        request.headers.add(name: "Authorization", value: "Bearer \(HTTPBenchmark.token)")
        let response = try await client.execute(request, timeout: .seconds(90))
        _ = try await response.body.collect(upTo: 1 << 20)
        let seconds = Machine.now() - started
        guard let job = try catalog.latestJob(sourceNames: ["\(id).jpg"]), job.outcome == .added else {
            throw BenchError("upload \(id) was not done after the wait")
        }
        return Probe(seconds: seconds, processingSeconds: job.finishedAt - job.startedAt)
    }

    static func report(_ options: Options, idle: [Probe], behind: [Probe], beside: [Probe], importStillRunning: Bool,
                       origin: String, load: (before: String, after: String)) -> [Verdict] {
        func ms(_ values: [Double], _ fraction: Double) -> Double { HTTPBenchmark.percentile(values, fraction) * 1000 }
        func row(_ name: String, _ probes: [Probe]) -> [String] {
            [name, "\(probes.count)", Table.number(ms(probes.map(\.seconds), 0.5)), Table.number(ms(probes.map(\.seconds), 0.99)),
             Table.number(ms(probes.map(\.processingSeconds), 0.5)), Table.number(ms(probes.map(\.processingSeconds), 0.99))]
        }
        print("")
        Table.print(header: ["phase", "uploads", "to done p50 ms", "to done p99 ms", "processing p50 ms", "processing p99 ms"], rows: [
            row("idle", idle), row("behind \(options.backlog) queued photos", behind),
            row("beside an import of \(options.importPhotos)\(importStillRunning ? "" : " (it ended first)")", beside),
        ])
        print("")
        print("Uploads: \(origin), posted as raw bodies one at a time, 0.3 s apart, each followed by GET /v1/uploads/{id}?wait=60.")
        print("Upload to done runs from sending the POST to the waiting GET's answer; processing is the upload's own job")
        print("(jobs.finished_at − started_at). The release binary's `serve` with its workers in its process, on loopback, on a")
        print("temporary spool, library and catalog. Load average: \(load.before) before, \(load.after) after.\n")
        let idleLatency = idle.map(\.seconds), idleProcessing = idle.map(\.processingSeconds)
        let idleRatio50 = ms(idleLatency, 0.5) / max(ms(idleProcessing, 0.5), 0.001)
        let idleRatio99 = ms(idleLatency, 0.99) / max(ms(idleProcessing, 0.99), 0.001)
        let backlogRatio = ms(behind.map(\.seconds), 0.99) / max(ms(idleLatency, 0.99), 0.001)
        let verdicts = [
            Verdict(section: "latency", measure: "idle: upload to done ÷ processing, p50",
                    figure: String(format: "%.2f× (%.0f ms ÷ %.0f ms)", idleRatio50, ms(idleLatency, 0.5), ms(idleProcessing, 0.5)),
                    target: "≤ 1.5×", passed: idle.isEmpty ? nil : idleRatio50 <= 1.5),
            Verdict(section: "latency", measure: "idle: upload to done ÷ processing, p99",
                    figure: String(format: "%.2f×", idleRatio99), target: "≤ 2×", passed: idle.isEmpty ? nil : idleRatio99 <= 2),
            Verdict(section: "latency", measure: "behind \(options.backlog) queued photos: upload to done p99 ÷ idle p99",
                    figure: String(format: "%.2f× (%.0f ms)", backlogRatio, ms(behind.map(\.seconds), 0.99)),
                    target: "≤ 2×", passed: behind.isEmpty ? nil : backlogRatio <= 2),
            Verdict(section: "latency", measure: "beside an import: upload to done p50 / p99",
                    figure: String(format: "%.0f / %.0f ms", ms(beside.map(\.seconds), 0.5), ms(beside.map(\.seconds), 0.99)),
                    target: "(reported)", passed: nil),
        ]
        Verdict.printTable(verdicts)
        print("")
        return verdicts
    }
}
