import AsyncHTTPClient
import Catalog
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `darkroom-bench http`: the real `darkroom serve` with its workers on a temporary spool, fed
/// distinct ~4 MB photos by concurrent clients: how fast uploads are accepted, how long a POST
/// takes while the workers are busy rendering, and how long from upload to `done`.
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
    /// Uploads sent one at a time, after the burst, while the workers still work through it.
    static let probes = 20
    /// The pause between two probes.
    static let probeIntervalSeconds = 0.1

    struct Options {
        var photos = 500
        var clients = 16
        var workers = 2
        /// Distinct 12 MP photos generated; the uploads cycle through them, each made distinct.
        var base = 8

        init() {}

        init(_ arguments: BenchArguments) throws {
            try arguments.check(valueFlags: ["--photos", "--clients", "--workers", "--base"])
            photos = try arguments.int("--photos", default: photos)
            clients = try arguments.int("--clients", default: clients, in: 1...1024)
            workers = try arguments.int("--workers", default: workers, in: 1...64)
            base = try arguments.int("--base", default: base)
        }
    }

    /// One POST as the client saw it.
    struct Post: Sendable {
        let index: Int
        let status: Int
        let uploadId: String?
        /// Wall-clock time it was sent (comparable with the catalog's job times).
        let sentAt: Double
        let seconds: Double
    }

    static func run(_ options: Options) throws -> [Verdict] {
        let outcome = Outcome()
        Task {
            do {
                outcome.finish(.success(try await measure(options)))
            } catch {
                outcome.finish(.failure(error))
            }
        }
        return try outcome.wait()
    }

    static func measure(_ options: Options) async throws -> [Verdict] {
        let darkroom = try PipelineBenchmark.darkroomBinary()
        print("## http: \(options.photos) uploads of ~4 MB by \(options.clients) concurrent clients to `darkroom serve` with \(options.workers) workers\n")
        let scratch = try Machine.scratchDirectory("http")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let baseDirectory = scratch.appendingPathComponent("base")
        try FileManager.default.createDirectory(at: baseDirectory, withIntermediateDirectories: true)
        print("Generating \(options.base) distinct photos of \(PhotoSet.width)×\(PhotoSet.height)…")
        let base = try PhotoSet.generate(count: options.base, into: baseDirectory, quality: photoQuality)
        let averageBytes = base.photos.reduce(0) { $0 + $1.count } / max(1, base.photos.count)
        print("  source: \(base.origin); \(Table.size(bytes: Int64(averageBytes))) on average")

        let workspace = try PipelineWorkspace(root: scratch.appendingPathComponent("run"), workers: options.workers,
                                              extra: ["server": ["host": "127.0.0.1", "port": 0, "run_workers": true]])
        let server = try start(darkroom, workspace: workspace)
        defer { if server.isRunning { server.terminate() } }
        let port = try await listeningPort(workspace.log, server: server)
        let loadBefore = Machine.loadAverage()

        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: options.clients)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let posts: [Post]
        let probes: [Post]
        do {
            posts = try await upload(options, photos: base.photos, port: port, client: client)
            probes = try await probe(options, photos: base.photos, port: port, client: client)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        let accepted = posts.filter { $0.status == 202 }
        let firstSent = posts.map(\.sentAt).min() ?? 0
        let lastAnswered = posts.map { $0.sentAt + $0.seconds }.max() ?? 0
        print("Uploads answered: \(accepted.count) of \(posts.count) accepted (202) in \(Table.number(lastAnswered - firstSent)) s; waiting for the workers…")

        let jobs = try await waitForJobs(accepted + probes.filter { $0.status == 202 }, workspace: workspace, server: server,
                                         timeout: Double(options.photos) * secondsPerPhoto)
        server.terminate()
        server.waitUntilExit()
        let loadAfter = Machine.loadAverage()
        return report(options, posts: posts, probes: probes, jobs: jobs, serverStatus: server.terminationStatus, load: (loadBefore, loadAfter))
    }

    /// Starts `darkroom serve` on the workspace, its log in `darkroom.log`.
    static func start(_ darkroom: URL, workspace: PipelineWorkspace) throws -> Process {
        let process = Process()
        process.executableURL = darkroom
        process.arguments = ["serve", "--config", workspace.configuration.path]
        process.environment = ProcessInfo.processInfo.environment.merging(["DARKROOM_API_TOKEN": token]) { _, new in new }
        _ = FileManager.default.createFile(atPath: workspace.log, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: workspace.log)
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

    /// Posts every photo, `options.clients` at a time, each client taking the next index.
    static func upload(_ options: Options, photos: [[UInt8]], port: Int, client: HTTPClient) async throws -> [Post] {
        let counter = Counter(limit: options.photos)
        return try await withThrowingTaskGroup(of: [Post].self) { group in
            for _ in 0..<options.clients {
                group.addTask {
                    var posts: [Post] = []
                    while let index = await counter.next() {
                        posts.append(try await post(photos[index % photos.count], index: index, port: port, client: client))
                    }
                    return posts
                }
            }
            var all: [Post] = []
            for try await posts in group { all += posts }
            return all.sorted { $0.index < $1.index }
        }
    }

    /// Posts `probes` more photos one at a time while the workers work through the burst: the
    /// latency of an upload that does not queue behind other uploads.
    static func probe(_ options: Options, photos: [[UInt8]], port: Int, client: HTTPClient) async throws -> [Post] {
        var posts: [Post] = []
        for number in 0..<probes {
            let index = options.photos + number
            posts.append(try await post(photos[index % photos.count], index: index, port: port, client: client))
            try await Task.sleep(for: .seconds(probeIntervalSeconds))
        }
        return posts
    }

    /// One upload, timed from sending to the whole answer.
    static func post(_ photo: [UInt8], index: Int, port: Int, client: HTTPClient) async throws -> Post {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/uploads?author_id=bench")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "image/jpeg")
        request.body = .bytes(PhotoSet.distinct(photo, index: index))
        let sentAt = Date().timeIntervalSince1970
        let start = Machine.now()
        let response = try await client.execute(request, timeout: .seconds(120))
        let body = try await response.body.collect(upTo: 1 << 20)
        let seconds = Machine.now() - start
        let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        return Post(index: index, status: Int(response.status.code), uploadId: object?["id"] as? String, sentAt: sentAt, seconds: seconds)
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

    static func report(_ options: Options, posts: [Post], probes: [Post], jobs: [String: JobRecord], serverStatus: Int32,
                       load: (before: String, after: String)) -> [Verdict] {
        let accepted = posts.filter { $0.status == 202 }
        let done = accepted.filter { jobs[$0.uploadId ?? ""]?.outcome == .added }
        let firstSent = posts.map(\.sentAt).min() ?? 0
        let lastAnswered = posts.map { $0.sentAt + $0.seconds }.max() ?? 0
        let acceptRate = Double(accepted.count) / max(lastAnswered - firstSent, .leastNonzeroMagnitude)
        // The workers are busy from the first claim to the last commit.
        let busyFrom = jobs.values.map(\.startedAt).min() ?? .infinity
        let busyTo = jobs.values.map(\.finishedAt).max() ?? -.infinity
        let busy = accepted.filter { $0.sentAt >= busyFrom && $0.sentAt + $0.seconds <= busyTo }.map { $0.seconds * 1000 }
        let endToEnd = done.compactMap { post in jobs[post.uploadId ?? ""].map { $0.finishedAt - post.sentAt } }
        let p99 = percentile(busy, 0.99)
        let alone = probes.filter { $0.status == 202 && $0.sentAt >= busyFrom && $0.sentAt + $0.seconds <= busyTo }.map { $0.seconds * 1000 }
        print("")
        Table.print(header: ["measure", "count", "median", "p99", "max"], rows: [
            ["POST /v1/uploads, all (ms)", "\(posts.count)", Table.number(percentile(posts.map { $0.seconds * 1000 }, 0.5)),
             Table.number(percentile(posts.map { $0.seconds * 1000 }, 0.99)), Table.number((posts.map(\.seconds).max() ?? 0) * 1000)],
            ["POST /v1/uploads, while the workers were busy (ms)", "\(busy.count)", Table.number(percentile(busy, 0.5)),
             Table.number(p99), Table.number(busy.max() ?? 0)],
            ["POST /v1/uploads one at a time after the burst, workers busy (ms)", "\(alone.count)", Table.number(percentile(alone, 0.5)),
             Table.number(percentile(alone, 0.99)), Table.number(alone.max() ?? 0)],
            ["upload to done (s)", "\(endToEnd.count)", Table.number(percentile(endToEnd, 0.5), 2),
             Table.number(percentile(endToEnd, 0.99), 2), Table.number(endToEnd.max() ?? 0, 2)],
        ])
        print("")
        print("The server is the real binary (`darkroom serve`, \(options.workers) workers in its process) on a temporary spool, library")
        print("and catalog, listening on loopback; \(options.clients) clients (AsyncHTTPClient, one keep-alive connection each) post the")
        print("photos as raw bodies, each one of the generated photos plus unique bytes after its end marker (no duplicates).")
        print("A POST's latency runs from sending the request to its whole answer; \"while busy\" keeps the POSTs sent after the")
        print("first claim and answered before the last commit: with \(options.clients) clients posting back to back, a POST waits for the")
        print("uploads ahead of it (latency ≈ clients / uploads accepted per second). The one-at-a-time row is \(HTTPBenchmark.probes) more uploads")
        print("sent by one client \(Int(probeIntervalSeconds * 1000)) ms apart once the burst is accepted, while the workers still render it.")
        print("Upload to done runs from sending the POST to the commit of its job")
        print("in the catalog (jobs.finished_at), which includes the wait in the spool behind the uploads before it.")
        print(String(format: "Accepted: %d of %d (%.1f uploads/s); done: %d; server exit status on SIGTERM: %d. Load average: %@ before, %@ after.\n",
                     accepted.count, posts.count, acceptRate, done.count, serverStatus, load.before, load.after))
        let verdicts = [
            Verdict(section: "http", measure: "uploads accepted per second, \(options.clients) clients, ~4 MB",
                    figure: String(format: "%.1f uploads/s", acceptRate), target: "(reported)", passed: nil),
            Verdict(section: "http", measure: "POST latency while the workers are busy, median / p99",
                    figure: String(format: "%.1f / %.1f ms", percentile(busy, 0.5), p99),
                    target: "p99 < \(Int(postP99TargetMilliseconds)) ms", passed: busy.isEmpty ? nil : p99 < postP99TargetMilliseconds),
            Verdict(section: "http", measure: "POST latency one at a time while the workers are busy, median / p99",
                    figure: String(format: "%.1f / %.1f ms", percentile(alone, 0.5), percentile(alone, 0.99)),
                    target: "(reported)", passed: nil),
            Verdict(section: "http", measure: "upload to done, median / p99 (\(options.photos) queued at once)",
                    figure: String(format: "%.1f / %.1f s", percentile(endToEnd, 0.5), percentile(endToEnd, 0.99)),
                    target: "(reported)", passed: nil),
            Verdict(section: "http", measure: "uploads processed", figure: "\(done.count) of \(posts.count)",
                    target: "all", passed: done.count == posts.count),
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

    /// Hands out the indexes of the photos to post, each once.
    actor Counter {
        private var next_ = 0
        let limit: Int

        init(limit: Int) { self.limit = limit }

        func next() -> Int? {
            guard next_ < limit else { return nil }
            defer { next_ += 1 }
            return next_
        }
    }

    /// The result of the asynchronous measurement, handed to the synchronous caller.
    final class Outcome: @unchecked Sendable {
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
