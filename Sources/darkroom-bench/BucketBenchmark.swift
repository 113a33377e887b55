import AsyncHTTPClient
import BenchInputs
import BenchKit
import Catalog
import Foundation
import GatewayHarness
import PostgresBench
import PostgresCatalog

/// `darkroom-bench bucket`: the library in an S3 bucket (Ceph's RADOS Gateway on loopback, a
/// one-node cluster started for the run) against the local directory.
/// 1. `darkroom run --once` on the same spooled 12 MP photos, library local and in the bucket,
///    alternated (local, bucket, bucket, local), catalog in SQLite for both: throughput, the
///    gateway's CPU per photo, and the requests and bytes per photo the gateway itself counted
///    (its usage log).
/// 2. Upload to done, idle, with no shared directory (`serve` on a PostgreSQL catalog and the
///    bucket: every upload staged in the bucket and fetched back by the worker that claims it),
///    against the photo's own processing.
enum BucketBenchmark {
    struct Options {
        var photos = 1000
        var base = 8
        var workers: Int?
        var probes = 8

        init() {}

        init(_ arguments: BenchArguments) throws {
            try arguments.check(valueFlags: ["--photos", "--base", "--workers", "--probes"])
            photos = try arguments.int("--photos", default: photos, in: 1...100_000)
            base = try arguments.int("--base", default: base, in: 1...100)
            workers = arguments.value("--workers") == nil ? nil : try arguments.int("--workers", default: 2, in: 1...64)
            probes = try arguments.int("--probes", default: probes, in: 1...1000)
        }
    }

    /// The bucket's throughput as a fraction of the local directory's.
    static let ratioTarget = 0.90
    /// Upload to done over the photo's own processing, idle.
    static let latencyTarget = 1.5

    static func run(_ options: Options) throws -> [Verdict] {
        try HTTPBenchmark.Outcome.waiting { try await measure(options) }
    }

    static func measure(_ options: Options) async throws -> [Verdict] {
        let darkroom = try PipelineBenchmark.darkroomBinary()
        let setting = options.workers.map { "`--concurrency \($0)`" } ?? "the default worker count"
        print("## bucket: \(options.photos) spooled 12 MP photos through `darkroom run --once`, library in the local directory and "
              + "in an S3 bucket (RADOS Gateway on loopback), \(setting); then upload to done with no shared directory\n")
        let scratch = try Machine.scratchDirectory("bucket")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let base = try PhotoSet.generateAnnounced(count: options.base, into: scratch.appendingPathComponent("base"))
        let meanBytes = base.photos.map(\.count).reduce(0, +) / max(1, base.photos.count)

        var rows: [[String]] = []
        var rates: [String: Double] = [:]
        /// The worker's CPU seconds per photo, mean of the two runs of each store.
        var workerCPU: [String: Double] = [:]
        var usage: [String: GatewayUsage] = [:]
        var gatewayCPU: [Double] = []
        for (round, store) in ["local", "bucket", "bucket", "local"].enumerated() {
            // A gateway of its own for each bucket run: its OSD keeps every object in memory,
            // freed when it stops.
            let gateway = store == "bucket" ? try RadosGateway.start(storeBytes: max(1 << 30, options.photos * meanBytes * 3 / 2 + (512 << 20))) : nil
            defer { gateway?.stop() }
            var extra: [String: Any] = [:]
            if let gateway {
                let bucket = try gateway.freshBucket(prefix: "bench")
                extra["library"] = ["root": scratch.appendingPathComponent("run-\(round)/library").path, "url": "s3://\(bucket)/lib",
                                    "s3": ["endpoint": gateway.endpoint.absoluteString, "path_style": true]] as [String: Any]
                setenv("AWS_ACCESS_KEY_ID", gateway.accessKey, 1)
                setenv("AWS_SECRET_ACCESS_KEY", gateway.secretKey, 1)
            }
            let workspace = try PipelineWorkspace(root: scratch.appendingPathComponent("run-\(round)"), workers: options.workers, extra: extra)
            defer { workspace.remove() }
            _ = try workspace.fill(count: options.photos, from: base.photos)
            let cpuBefore = gateway?.serverCPUSeconds()
            let run = try workspace.run(darkroom: darkroom, workers: options.workers)
            try workspace.verify(expected: options.photos, run: run)
            var serverCPU: Double?
            if let gateway, let cpuBefore {
                // The usage log is flushed every second.
                sleep(2)
                serverCPU = gateway.serverCPUSeconds() - cpuBefore
                gatewayCPU.append(serverCPU ?? 0)
                if usage.isEmpty { usage = try gateway.usage() }
            }
            let rate = Double(options.photos) / run.wallSeconds
            rates[store, default: 0] += rate / 2
            workerCPU[store, default: 0] += run.cpuSeconds / Double(options.photos) / 2
            rows.append([store, Table.number(run.wallSeconds), Table.number(rate, 2), Table.number(run.cpuSeconds),
                         serverCPU.map { String(format: "%.1f (%.1f ms/photo)", $0, 1000 * $0 / Double(options.photos)) } ?? "—",
                         Table.megabytes(kilobytes: run.peakKilobytes), Machine.loadAverage()])
        }
        Table.print(header: ["library", "wall s", "photos/s", "CPU s (darkroom)", "CPU s (gateway: mon, osd, radosgw)", "peak RSS", "load after"],
                    rows: rows)
        let local = rates["local"] ?? 0
        let bucket = rates["bucket"] ?? 0
        print("")
        print("Each row is the release binary on a fresh spool and SQLite catalog; the bucket rows store originals and variants")
        print("in a fresh RADOS Gateway (memstore OSD) on the same two cores, whose CPU is counted apart (its daemons, from /proc).")
        print(String(format: "Mean of the two runs of each: local %.2f photos/s, bucket %.2f photos/s (%.1f %%).", local, bucket,
                     100 * bucket / max(local, 0.001)))
        let n = Double(options.photos)
        // What the shared cores allow: a CPU-bound bucket run pays the gateway's CPU beside the worker's.
        let gatewayPerPhoto = gatewayCPU.reduce(0, +) / max(1, Double(gatewayCPU.count)) / n
        let localCPU = workerCPU["local"] ?? 0, bucketCPU = workerCPU["bucket"] ?? 0
        let bound = localCPU / max(bucketCPU + gatewayPerPhoto, 0.000_001)
        print(String(format: "darkroom's CPU per photo: local %.1f ms, bucket %.1f ms; with the gateway's %.1f ms on the same cores, "
                     + "a CPU-bound bucket run reaches at most %.1f ms ÷ %.1f ms = %.1f %% of local.\n",
                     1000 * localCPU, 1000 * bucketCPU, 1000 * gatewayPerPhoto, 1000 * localCPU,
                     1000 * (bucketCPU + gatewayPerPhoto), 100 * bound))
        print("What the first bucket run asked of the gateway, per photo, as the gateway's usage log counted it:")
        Table.print(header: ["category", "requests/photo", "failed", "bytes received/photo", "bytes sent/photo"],
                    rows: usage.sorted { $0.key < $1.key }.map { name, figures in
                        [name, Table.number(Double(figures.ops) / n, 2), "\(figures.ops - figures.successfulOps)",
                         Table.number(Double(figures.bytesReceived) / n, 0), Table.number(Double(figures.bytesSent) / n, 0)]
                    })
        let totalOps = usage.values.map(\.ops).reduce(0, +)
        let sentBack = usage.values.map(\.bytesSent).reduce(0, +)
        print(String(format: "\nIn all %.2f requests and %.0f bytes stored per photo (mean photo %d bytes); %.0f bytes read back per photo.\n",
                     Double(totalOps) / n, Double(usage.values.map(\.bytesReceived).reduce(0, +)) / n, meanBytes, Double(sentBack) / n))

        let probes = try await latency(options, darkroom: darkroom, scratch: scratch, photos: base.photos)
        let ratio = probes.isEmpty ? 0 : median(probes.map(\.seconds)) / max(median(probes.map(\.processingSeconds)), 0.0001)
        let setting2 = options.workers.map { "\($0) workers" } ?? "default workers"
        let verdicts = [
            Verdict(section: "bucket", measure: "`run --once` with the library in the bucket ÷ local, \(options.photos) × 12 MP, \(setting2)",
                    figure: Table.percent(bucket / max(local, 0.001)), target: "≥ \(Int(ratioTarget * 100)) %",
                    passed: options.photos >= 1000 ? bucket / max(local, 0.001) >= ratioTarget : nil),
            Verdict(section: "bucket", measure: "requests to the gateway per photo (original + variants, nothing read back)",
                    figure: String(format: "%.2f (%.0f bytes read back)", Double(totalOps) / n, Double(sentBack) / n),
                    target: "(reported)", passed: nil),
            Verdict(section: "bucket", measure: "gateway CPU per photo (mon, osd, radosgw)",
                    figure: String(format: "%.1f ms", 1000 * gatewayPerPhoto), target: "(reported)", passed: nil),
            Verdict(section: "bucket", measure: "the shared cores' bound: darkroom's CPU local ÷ (bucket + gateway's), per photo",
                    figure: Table.percent(bound), target: "(reported)", passed: nil),
            Verdict(section: "bucket", measure: "idle upload staged in the bucket: upload to done ÷ processing, p50",
                    figure: String(format: "%.2f× (%.0f ms ÷ %.0f ms)", ratio, 1000 * median(probes.map(\.seconds)),
                                   1000 * median(probes.map(\.processingSeconds))),
                    target: "≤ \(latencyTarget)×", passed: probes.isEmpty ? nil : ratio <= latencyTarget),
        ]
        print("")
        Verdict.printTable(verdicts)
        print("")
        return verdicts
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }

    /// Upload to done with no shared directory: `serve` on a fresh PostgreSQL database and a
    /// fresh bucket, uploads posted one at a time, each waited for with `?wait=60`; the
    /// processing time is the upload's own job (finished − started).
    static func latency(_ options: Options, darkroom: URL, scratch: URL, photos: [[UInt8]]) async throws -> [LatencyBenchmark.Probe] {
        print("Upload to done, idle, with no shared directory: \(options.probes) uploads one at a time to `serve` on PostgreSQL and the bucket…")
        let cluster = try BenchCluster.start(durable: true)
        defer { cluster.stop() }
        let gateway = try RadosGateway.start()
        defer { gateway.stop() }
        let bucket = try gateway.freshBucket(prefix: "latency")
        setenv("AWS_ACCESS_KEY_ID", gateway.accessKey, 1)
        setenv("AWS_SECRET_ACCESS_KEY", gateway.secretKey, 1)
        let location = try cluster.freshDatabase(prefix: "latency")
        let root = scratch.appendingPathComponent("latency")
        let workspace = try PipelineWorkspace(root: root, workers: options.workers, catalogURL: location.description, extra: [
            "server": ["host": "127.0.0.1", "port": 0],
            "library": ["root": root.appendingPathComponent("library").path, "url": "s3://\(bucket)/lib",
                        "s3": ["endpoint": gateway.endpoint.absoluteString, "path_style": true]] as [String: Any],
        ])
        let server = try HTTPBenchmark.start(darkroom, workspace: workspace, workers: true, log: workspace.log)
        defer { if server.isRunning { server.terminate() } }
        let port = try await HTTPBenchmark.listeningPort(workspace.log, server: server)
        let catalog = try PostgresCatalog(url: location.description)
        defer { catalog.close() }
        let client = HTTPClient.shared
        let load = HTTPLoad(port: port, token: HTTPBenchmark.token, photos: photos, client: client)
        var probes: [LatencyBenchmark.Probe] = []
        for index in 0..<options.probes {
            probes.append(try await LatencyBenchmark.uploadToDone(load, index: index, port: port, client: client, catalog: catalog))
            try await Task.sleep(for: .milliseconds(300))
        }
        server.terminate()
        server.waitUntilExit()
        func ms(_ values: [Double]) -> String { String(format: "%.0f", 1000 * median(values)) }
        print("  upload to done p50 \(ms(probes.map(\.seconds))) ms, the job's own processing p50 \(ms(probes.map(\.processingSeconds))) ms")
        print("  (from sending the POST to the waiting GET's answer; the staging PUT, the job, the worker's fetch of the staged photo,")
        print("  its processing, its objects' PUTs and the staging object's removal are all inside it).\n")
        return probes
    }
}
