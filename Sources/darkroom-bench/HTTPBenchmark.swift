import AsyncHTTPClient
import BenchInputs
import BenchKit
import Catalog
import Foundation
#if canImport(Glibc)
import Glibc
import Settings
#endif

/// `darkroom-bench http`: the real `darkroom serve` on a temporary spool, fed distinct ~4 MB
/// photos over loopback. It measures, in order:
/// 1. the spool's durable writes alone (no HTTP, no workers): the floor of any POST;
/// 2. a burst posted back to back by the clients to a server without workers (accepting alone);
/// 3. the same burst to a server whose workers are rendering (the 500 photos);
/// 4. uploads arriving at random at a few rates while the workers render;
/// 5. single uploads one at a time while the workers render;
/// after the multipart flood of `FloodBenchmark`, on a server of its own;
/// then waits for every upload to be `done` and reports the time from upload to done.
enum HTTPBenchmark {
    /// The ceiling of the POST latency's 99th percentile while the workers are busy: accepting
    /// an upload must never wait for processing.
    static let postP99TargetMilliseconds = 50.0
    /// The bearer token of the benchmark's server.
    static let token = "darkroom-bench"
    /// How long the server may take to say it listens.
    static let startSeconds = 30.0
    /// How long each photo may take, at most, before the wait for `done` gives up.
    static let secondsPerPhoto = 5.0
    /// The JPEG quality of the generated photos: about 4 MB at 12 MP, a phone photo's size.
    static let photoQuality = 97
    /// Uploads sent one at a time, after the paced rates, while the workers still render.
    static let probes = 20
    /// The pause between two probes.
    static let probeIntervalSeconds = 0.1
    /// Spool writes by each writer when measuring the disk alone.
    static let ceilingWritesEach = 8

    struct Options {
        var photos = 500
        var clients = 16
        var workers = 2
        /// Distinct 12 MP photos generated; the uploads cycle through them, each made distinct.
        var base = 8
        /// Photos of the burst to a server without workers; they are then the workers' backlog.
        var idlePhotos = 200
        /// Offered rates (uploads per second) of the paced phase, empty for none.
        var rates: [Int]?
        /// Seconds each paced rate lasts.
        var pacedSeconds = 10
        /// The server's `server.worker_niceness` (its default unless given).
        var workerNiceness = 10

        /// The paced rates: half, once and twice one upload a second per client unless given.
        var pacedRates: [Int] { rates ?? [max(1, clients / 2), clients, clients * 2] }
        /// The rate the target is judged at: one upload a second from each client.
        var targetRate: Int { clients }

        init() {}

        init(_ arguments: BenchArguments) throws {
            try arguments.check(valueFlags: ["--photos", "--clients", "--workers", "--base", "--idle-photos", "--rates", "--paced-seconds", "--worker-niceness"])
            photos = try arguments.int("--photos", default: photos)
            clients = try arguments.int("--clients", default: clients, in: 1...1024)
            workers = try arguments.int("--workers", default: workers, in: 1...64)
            base = try arguments.int("--base", default: base)
            idlePhotos = try arguments.int("--idle-photos", default: idlePhotos)
            if arguments.value("--rates") != nil { rates = try arguments.ints("--rates", default: []) }
            pacedSeconds = try arguments.int("--paced-seconds", default: pacedSeconds, in: 1...600)
            workerNiceness = try arguments.int("--worker-niceness", default: workerNiceness, in: 0...19)
        }
    }

    typealias Post = HTTPLoad.Post

    /// Everything measured, for the report.
    struct Measurements {
        var ceiling: SpoolWriteCeiling.Figures
        var alone: [Post]
        var busy: [Post]
        var paced: [(rate: Int, posts: [Post])]
        var probes: [Post]
        var jobs: [String: JobRecord]
        var serverStatus: Int32
        var load: (before: String, after: String)
    }

    static func run(_ options: Options) throws -> [Verdict] {
        // First the multipart flood: six hostile bodies at once, refused at once, memory bounded.
        let flood = try FloodBenchmark.run(FloodBenchmark.Options())
        return try flood + Outcome.waiting { try await measure(options) }
    }

    static func measure(_ options: Options) async throws -> [Verdict] {
        let darkroom = try PipelineBenchmark.darkroomBinary()
        print("## http: uploads of ~4 MB by \(options.clients) concurrent clients to `darkroom serve` with \(options.workers) workers\n")
        let scratch = try Machine.scratchDirectory("http")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let baseDirectory = scratch.appendingPathComponent("base")
        try FileManager.default.createDirectory(at: baseDirectory, withIntermediateDirectories: true)
        print("Generating \(options.base) distinct photos of \(PhotoSet.width)×\(PhotoSet.height)…")
        let base = try PhotoSet.generate(count: options.base, into: baseDirectory, quality: photoQuality)
        let averageBytes = base.photos.reduce(0) { $0 + $1.count } / max(1, base.photos.count)
        print("  source: \(base.origin); \(Table.size(bytes: Int64(averageBytes))) on average")
        let loadBefore = Machine.loadAverage()

        print("The spool's durable writes alone: \(options.clients) writers × \(ceilingWritesEach)…")
        let ceiling = try SpoolWriteCeiling.measure(directory: scratch.appendingPathComponent("ceiling"), writers: options.clients,
                                                    writesEach: ceilingWritesEach, photos: base.photos)

        let workspace = try PipelineWorkspace(root: scratch.appendingPathComponent("run"), workers: options.workers,
                                              extra: ["server": ["host": "127.0.0.1", "port": 0, "run_workers": true, "worker_niceness": options.workerNiceness]])
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: options.clients)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let measurements = try await measure(options, darkroom: darkroom, workspace: workspace, photos: base.photos,
                                                 client: client, ceiling: ceiling, loadBefore: loadBefore)
            try await client.shutdown()
            return report(options, measurements)
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// The phases with a server: without workers, then with them.
    static func measure(_ options: Options, darkroom: URL, workspace: PipelineWorkspace, photos: [[UInt8]], client: HTTPClient,
                        ceiling: SpoolWriteCeiling.Figures, loadBefore: String) async throws -> Measurements {
        print("\(options.idlePhotos) uploads back to back to `darkroom serve --no-workers`…")
        let acceptingLog = workspace.root.appendingPathComponent("serve-no-workers.log").path
        let accepting = try start(darkroom, workspace: workspace, workers: false, log: acceptingLog)
        defer { if accepting.isRunning { accepting.terminate() } }
        let alone = try await HTTPLoad(port: try await listeningPort(acceptingLog, server: accepting), token: token, photos: photos, client: client)
            .burst(count: options.idlePhotos, firstIndex: 0, clients: options.clients)
        accepting.terminate()
        accepting.waitUntilExit()

        print("\(options.photos) uploads back to back to `darkroom serve` while its workers render the \(options.idlePhotos) waiting…")
        let server = try start(darkroom, workspace: workspace, workers: true, log: workspace.log)
        defer { if server.isRunning { server.terminate() } }
        let load = HTTPLoad(port: try await listeningPort(workspace.log, server: server), token: token, photos: photos, client: client)
        var next = options.idlePhotos
        let busy = try await load.burst(count: options.photos, firstIndex: next, clients: options.clients)
        next += options.photos
        var paced: [(rate: Int, posts: [Post])] = []
        for rate in options.pacedRates {
            print("Uploads arriving at random, \(rate) a second for \(options.pacedSeconds) s, \(options.clients) clients…")
            let posts = try await load.paced(rate: Double(rate), seconds: Double(options.pacedSeconds), firstIndex: next, clients: options.clients)
            next += posts.count
            paced.append((rate, posts))
        }
        print("\(probes) uploads one at a time…")
        let single = try await load.oneAtATime(count: probes, firstIndex: next, pause: probeIntervalSeconds)
        let accepted = (alone + busy + paced.flatMap(\.posts) + single).filter { $0.status == 202 }
        print("Waiting for the workers to finish \(accepted.count) uploads…")
        let jobs = try await waitForJobs(accepted, workspace: workspace, server: server, timeout: Double(accepted.count) * secondsPerPhoto)
        server.terminate()
        server.waitUntilExit()
        return Measurements(ceiling: ceiling, alone: alone, busy: busy, paced: paced, probes: single, jobs: jobs,
                            serverStatus: server.terminationStatus, load: (loadBefore, Machine.loadAverage()))
    }

    /// Starts `darkroom serve` on the workspace, with or without its workers, its log in `log`.
    static func start(_ darkroom: URL, workspace: PipelineWorkspace, workers: Bool, log: String) throws -> Process {
        let process = Process()
        process.executableURL = darkroom
        process.arguments = ["serve", "--config", workspace.configuration.path] + (workers ? [] : ["--no-workers"])
        process.environment = ProcessInfo.processInfo.environment.merging(["DARKROOM_API_TOKEN": token]) { _, new in new }
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: log)
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        do {
            try process.run()
        } catch {
            throw BenchError("cannot start \(darkroom.path) serve: \(error.localizedDescription)")
        }
        return process
    }

    /// The port the server's log says it listens on.
    static func listeningPort(_ log: String, server: Process) async throws -> Int {
        let deadline = Machine.now() + startSeconds
        while Machine.now() < deadline, server.isRunning {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let match = text.firstMatch(of: #/ port=(\d+)/#), let port = Int(match.1) { return port }
            try await Task.sleep(for: .milliseconds(50))
        }
        let tail = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").suffix(3).joined(separator: " / ")
        throw BenchError("darkroom serve did not start listening within \(Int(startSeconds)) s; its log ends: \(tail)")
    }

    /// The job of every accepted upload, once the workers have finished them all.
    static func waitForJobs(_ accepted: [Post], workspace: PipelineWorkspace, server: Process, timeout: Double) async throws -> [String: JobRecord] {
        let catalog: Catalog
        do {
            catalog = try Catalog(path: workspace.catalogPath)
        } catch {
            throw BenchError("cannot open the server's catalog \(workspace.catalogPath): \(error)")
        }
        let deadline = Machine.now() + timeout
        while true {
            let counts = try catalog.counts()
            if counts.jobsAdded + counts.jobsDuplicate + counts.jobsFailed >= accepted.count { break }
            guard Machine.now() < deadline, server.isRunning else {
                throw BenchError("the workers finished \(counts.jobsAdded) of \(accepted.count) uploads in \(Int(timeout)) s")
            }
            try await Task.sleep(for: .milliseconds(250))
        }
        var jobs: [String: JobRecord] = [:]
        for post in accepted {
            guard let id = post.uploadId, let job = try catalog.latestJob(sourceNames: ["\(id).jpg"]) else { continue }
            jobs[id] = job
        }
        return jobs
    }

    /// A row of the latency table: count, uploads answered per second, median, p99 and max.
    static func row(_ measure: String, _ milliseconds: [Double], perSecond: Double?) -> [String] {
        [measure, "\(milliseconds.count)", perSecond.map { Table.number($0) } ?? "—", Table.number(percentile(milliseconds, 0.5)),
         Table.number(percentile(milliseconds, 0.99)), Table.number(milliseconds.max() ?? 0)]
    }

    /// Accepted uploads per second over a phase, from its first send to its last answer.
    static func acceptRate(_ posts: [Post]) -> Double {
        let accepted = posts.filter { $0.status == 202 }
        let first = posts.map(\.sentAt).min() ?? 0
        let last = posts.map(\.answeredAt).max() ?? 0
        return Double(accepted.count) / max(last - first, .leastNonzeroMagnitude)
    }

    static func report(_ options: Options, _ m: Measurements) -> [Verdict] {
        let all = m.alone + m.busy + m.paced.flatMap(\.posts) + m.probes
        let done = all.filter { $0.status == 202 && m.jobs[$0.uploadId ?? ""]?.outcome == .added }
        // The workers are busy from their first claim to their last commit.
        let busyFrom = m.jobs.values.map(\.startedAt).min() ?? .infinity
        let busyTo = m.jobs.values.map(\.finishedAt).max() ?? -.infinity
        func whileBusy(_ posts: [Post]) -> [Double] {
            posts.filter { $0.status == 202 && $0.sentAt >= busyFrom && $0.answeredAt <= busyTo }.map(\.milliseconds)
        }
        let alone = m.alone.filter { $0.status == 202 }.map(\.milliseconds)
        let busy = whileBusy(m.busy)
        let single = whileBusy(m.probes)
        let endToEnd = m.busy.compactMap { post in m.jobs[post.uploadId ?? ""].map { $0.finishedAt - post.sentAt } }
        let clients = options.clients
        print("")
        var rows = [
            [String(format: "spool writes alone, %d writers back to back (no HTTP, no workers)", clients), "\(m.ceiling.count)",
             Table.number(m.ceiling.writesPerSecond), Table.number(m.ceiling.medianMilliseconds), Table.number(m.ceiling.p99Milliseconds), "—"],
            row("POST, \(clients) clients back to back, no workers (accepting alone)", alone, perSecond: acceptRate(m.alone)),
            row("POST, \(clients) clients back to back, workers busy", busy, perSecond: acceptRate(m.busy)),
        ]
        for (rate, posts) in m.paced {
            rows.append(row("POST, \(rate)/s arriving at random, \(clients) clients, workers busy", whileBusy(posts), perSecond: acceptRate(posts)))
        }
        rows.append(row("POST one at a time, workers busy", single, perSecond: nil))
        Table.print(header: ["measure", "count", "per second", "median ms", "p99 ms", "max ms"], rows: rows)
        print("")
        print("| upload to done, the \(options.photos) of the busy burst (s) | \(endToEnd.count) | median \(Table.number(percentile(endToEnd, 0.5), 2)) | p99 \(Table.number(percentile(endToEnd, 0.99), 2)) | max \(Table.number(endToEnd.max() ?? 0, 2)) |")
        print("")
        let floor = Double(clients) / max(m.ceiling.writesPerSecond, .leastNonzeroMagnitude) * 1000
        print("The server is the real binary (`darkroom serve`, \(options.workers) workers in its process at server.worker_niceness")
        print("\(options.workerNiceness)) on a temporary spool, library and catalog, on loopback; the clients (AsyncHTTPClient, one")
        print("keep-alive connection each) post each photo as the raw body, one of the generated photos made distinct (no duplicates).")
        print("A POST's latency runs from when it was due to its whole answer; back to back, each client sends its next as soon")
        print("as it has an answer; at a rate, uploads are due at random times (a Poisson process, fixed seed) and one due while")
        print("all \(clients) clients are busy waits for one, which counts. \"Workers busy\" keeps the POSTs sent after the workers'")
        print("first claim and answered before their last commit. A POST answers once its photo and sidecar are fsynced in the spool,")
        print("so \(clients) clients back to back cannot see less than \(clients) ÷ the spool's own write rate ≈ \(Table.number(floor)) ms each.")
        print("Upload to done runs from sending the POST to its job's commit (jobs.finished_at), behind the uploads before it.")
        print(String(format: "Accepted: %d of %d; done: %d; server exit status on SIGTERM: %d. Load average: %@ before, %@ after.\n",
                     all.filter { $0.status == 202 }.count, all.count, done.count, m.serverStatus, m.load.before, m.load.after))

        let target = "p99 < \(Int(postP99TargetMilliseconds)) ms"
        let aloneP99 = percentile(alone, 0.99)
        let busyP99 = percentile(busy, 0.99)
        var verdicts = [
            Verdict(section: "http", measure: "uploads accepted per second, \(clients) clients back to back, workers busy",
                    figure: String(format: "%.1f uploads/s (spool alone %.1f)", acceptRate(m.busy), m.ceiling.writesPerSecond),
                    target: "(reported)", passed: nil),
            Verdict(section: "http", measure: "POST latency, \(clients) clients back to back: no workers → workers busy, p99",
                    figure: String(format: "%.1f → %.1f ms (disk floor ≈ %.0f ms)", aloneP99, busyP99, floor),
                    target: target, passed: busy.isEmpty ? nil : busyP99 < postP99TargetMilliseconds),
        ]
        for (rate, posts) in m.paced where rate == options.targetRate {
            let latencies = whileBusy(posts)
            verdicts.append(Verdict(section: "http", measure: "POST latency, \(rate)/s arriving at random from \(clients) clients, workers busy, median / p99",
                                    figure: String(format: "%.1f / %.1f ms", percentile(latencies, 0.5), percentile(latencies, 0.99)),
                                    target: target, passed: latencies.isEmpty ? nil : percentile(latencies, 0.99) < postP99TargetMilliseconds))
        }
        verdicts += [
            Verdict(section: "http", measure: "POST latency one at a time while the workers are busy, median / p99",
                    figure: String(format: "%.1f / %.1f ms", percentile(single, 0.5), percentile(single, 0.99)),
                    target: "(reported)", passed: nil),
            Verdict(section: "http", measure: "upload to done, median / p99 (\(options.photos) posted back to back behind \(options.idlePhotos))",
                    figure: String(format: "%.1f / %.1f s", percentile(endToEnd, 0.5), percentile(endToEnd, 0.99)),
                    target: "(reported)", passed: nil),
            Verdict(section: "http", measure: "uploads processed", figure: "\(done.count) of \(all.count)",
                    target: "all", passed: done.count == all.count),
        ]
        Verdict.printTable(verdicts)
        print("")
        return verdicts
    }

    /// The `fraction` percentile (nearest rank) of `values`; 0 when there are none.
    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    /// The result of the asynchronous measurement, handed to the synchronous caller.
    final class Outcome: @unchecked Sendable {
        /// Runs `body` on the concurrency pool and waits for its verdicts on this thread (the
        /// benchmarks' own, synchronous one).
        static func waiting(for body: @escaping @Sendable () async throws -> [Verdict]) throws -> [Verdict] {
            let outcome = Outcome()
            Task {
                do {
                    outcome.finish(.success(try await body()))
                } catch {
                    outcome.finish(.failure(error))
                }
            }
            return try outcome.wait()
        }

        // @unchecked: `result` is written once, before `done` is signalled, and read only after.
        private var result: Result<[Verdict], any Error>?
        private let done = DispatchSemaphore(value: 0)

        func finish(_ result: Result<[Verdict], any Error>) {
            self.result = result
            done.signal()
        }

        func wait() throws -> [Verdict] {
            done.wait()
            return try result?.get() ?? []
        }
    }
}
