import BenchKit
import Foundation
import Imaging
import Ingest
import PhotoMetadata

/// Renders photos of a directory with N worker threads and reports throughput and memory.
/// Runs in a child process (`render --child`), so that the peak memory is this work's own.
enum RenderMeasurement {
    /// What each photo goes through.
    struct Settings: Sendable {
        /// Read the metadata (`PhotoMetadata.read`, default options) before rendering, as the
        /// worker does; false measures the render alone.
        var metadata = true
        /// The EXIF orientation to render with; nil takes the metadata's (1 without metadata).
        var orientation: Int?
    }

    struct Result {
        let workers: Int
        let photos: Int
        let wallSeconds: Double
        let medianMilliseconds: Double
        /// The fastest photo: the least disturbed by other processes on the machine.
        let minimumMilliseconds: Double
        let peakKilobytes: Int
        /// Mean per photo of each step: reading the file, the metadata read, the render.
        let readMilliseconds: Double
        let metadataMilliseconds: Double
        let renderMilliseconds: Double
        /// Mean CPU time of the worker thread per photo (CLOCK_THREAD_CPUTIME_ID), all steps.
        var cpuMilliseconds = 0.0
        /// Mean minor page faults of the worker thread per photo.
        var pageFaults = 0.0
        /// Photos rendered untimed before the timed ones (their CPU is in `childCPUSeconds`).
        var warmUps = 0
        /// Mean CPU milliseconds per photo of each stage of the render (`RenderResult.timings`).
        var stages = RenderTimings()
        /// CPU time of the measuring child (user + system, its warm-up photos included), when it ran as one.
        var childCPUSeconds: Double?

        var photosPerSecond: Double { Double(photos) / wallSeconds }
        /// Wall time a worker spends per photo.
        var millisecondsPerPhoto: Double { wallSeconds * 1000 * Double(workers) / Double(photos) }

        var line: String {
            "RESULT workers=\(workers) photos=\(photos) wall=\(wallSeconds) median=\(medianMilliseconds) min=\(minimumMilliseconds) "
                + "hwm=\(peakKilobytes) read=\(readMilliseconds) metadata=\(metadataMilliseconds) render=\(renderMilliseconds) "
                + "cpu=\(cpuMilliseconds) faults=\(pageFaults) "
                + "warmup=\(warmUps) stages=\(stages.decode),\(stages.analysis),\(stages.resample),\(stages.encode)"
        }

        init(workers: Int, photos: Int, wallSeconds: Double, medianMilliseconds: Double, minimumMilliseconds: Double,
             peakKilobytes: Int, readMilliseconds: Double, metadataMilliseconds: Double, renderMilliseconds: Double) {
            self.workers = workers
            self.photos = photos
            self.wallSeconds = wallSeconds
            self.medianMilliseconds = medianMilliseconds
            self.minimumMilliseconds = minimumMilliseconds
            self.peakKilobytes = peakKilobytes
            self.readMilliseconds = readMilliseconds
            self.metadataMilliseconds = metadataMilliseconds
            self.renderMilliseconds = renderMilliseconds
        }

        init?(line: String) {
            guard let text = line.split(separator: "\n").first(where: { $0.hasPrefix("RESULT ") }) else { return nil }
            var fields: [String: String] = [:]
            for pair in text.split(separator: " ").dropFirst() {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
            }
            func number(_ key: String) -> Double? { fields[key].flatMap(Double.init) }
            guard let workers = fields["workers"].flatMap(Int.init), let photos = fields["photos"].flatMap(Int.init),
                  let wall = number("wall"), let median = number("median"), let minimum = number("min"),
                  let hwm = fields["hwm"].flatMap(Int.init), let read = number("read"), let metadata = number("metadata"),
                  let render = number("render")
            else { return nil }
            self.init(workers: workers, photos: photos, wallSeconds: wall, medianMilliseconds: median, minimumMilliseconds: minimum,
                      peakKilobytes: hwm, readMilliseconds: read, metadataMilliseconds: metadata, renderMilliseconds: render)
            cpuMilliseconds = number("cpu") ?? 0
            pageFaults = number("faults") ?? 0
            warmUps = fields["warmup"].flatMap(Int.init) ?? 0
            let parts = (fields["stages"] ?? "").split(separator: ",").compactMap { Double($0) }
            if parts.count == 4 {
                stages.decode = parts[0]
                stages.analysis = parts[1]
                stages.resample = parts[2]
                stages.encode = parts[3]
            }
        }
    }

    /// The time one photo took, step by step, in milliseconds.
    struct Timing {
        var read = 0.0
        var metadata = 0.0
        var render = 0.0
        /// The thread's CPU time over all three.
        var cpu = 0.0
        var faults = 0.0
        var stages = RenderTimings()
        var total: Double { read + metadata + render }
    }

    /// Shared between the worker threads; every access holds the lock.
    final class Queue: @unchecked Sendable {  // safe: all mutable state is behind `lock`
        private let lock = NSLock()
        private var next = 0
        private var timings: [Timing] = []
        private var failures: [String] = []
        /// The files, taken in turn until `count` photos are done (cycling through them).
        let files: [URL]
        let count: Int

        init(files: [URL], count: Int) {
            self.files = files
            self.count = count
        }

        func take() -> URL? {
            lock.lock()
            defer { lock.unlock() }
            guard next < count else { return nil }
            next += 1
            return files[(next - 1) % files.count]
        }

        func record(_ timing: Timing) {
            lock.lock()
            timings.append(timing)
            lock.unlock()
        }

        func fail(_ message: String) {
            lock.lock()
            failures.append(message)
            lock.unlock()
        }

        var summary: (timings: [Timing], failures: [String]) {
            lock.lock()
            defer { lock.unlock() }
            return (timings, failures)
        }
    }

    /// One photo as the worker handles it before storing: read the file, read the metadata, render
    /// the four default variants (with the metadata's orientation).
    static func processOne(_ file: URL, settings: Settings) throws -> Timing {
        var timing = Timing()
        let cpuStart = Machine.threadCPUSeconds()
        let faultStart = Machine.threadPageFaults()
        var mark = Machine.now()
        func lap() -> Double {
            let now = Machine.now()
            defer { mark = now }
            return (now - mark) * 1000
        }
        let bytes = try [UInt8](Data(contentsOf: file))
        timing.read = lap()
        var orientation = settings.orientation ?? 1
        if settings.metadata {
            let metadata = PhotoMetadata.read(bytes, sidecar: nil, fileTime: nil, options: MetadataOptions())
            orientation = settings.orientation ?? metadata.orientation
            timing.metadata = lap()
        }
        let result = try Imaging.render(bytes, recipes: VariantRecipe.defaults, options: RenderOptions(orientation: orientation))
        timing.render = lap()
        timing.stages = result.timings
        guard result.variants.count == VariantRecipe.defaults.count else {
            throw BenchError("\(file.lastPathComponent): \(result.variants.count) variants rendered instead of \(VariantRecipe.defaults.count)")
        }
        timing.cpu = (Machine.threadCPUSeconds() - cpuStart) * 1000
        timing.faults = Double(Machine.threadPageFaults() - faultStart)
        return timing
    }

    /// The most photos rendered once each before the timed ones.
    static let warmUpPhotos = 8

    /// Processes `count` photos, taking the photos of `directory` (JPEG, or HEIC) in turn, with `workers` threads.
    static func run(directory: URL, workers: Int, count: Int, settings: Settings) throws -> Result {
        let listing = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
        let files = listing.filter { ["jpg", "heic"].contains($0.pathExtension.lowercased()) }.sorted { $0.path < $1.path }
        guard !files.isEmpty else { throw BenchError("no .jpg or .heic photos in \(directory.path)") }
        // The heap settings of a worker process, so that the render alone is measured as the worker runs it.
        PhotoProcessor.keepLargeAllocations()
        // Warm-up outside the timing: each photo once (up to `warmUpPhotos`), so that the timed
        // photos meet a worker that has seen their sizes (first-touch page faults, lazy binding).
        for file in files.prefix(warmUpPhotos) { _ = try processOne(file, settings: settings) }
        let queue = Queue(files: files, count: count)
        let group = DispatchGroup()
        let start = Machine.now()
        for _ in 0..<workers {
            group.enter()
            let thread = Thread {
                while let file = queue.take() {
                    do { queue.record(try processOne(file, settings: settings)) } catch { queue.fail("\(error)") }
                }
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        let wall = Machine.now() - start
        let (timings, failures) = queue.summary
        if let failure = failures.first { throw BenchError("\(failures.count) photos failed, first: \(failure)") }
        let sorted = timings.map(\.total).sorted()
        func mean(_ step: KeyPath<Timing, Double>) -> Double {
            timings.isEmpty ? 0 : timings.reduce(0) { $0 + $1[keyPath: step] } / Double(timings.count)
        }
        var result = Result(
            workers: workers, photos: timings.count, wallSeconds: wall, medianMilliseconds: sorted.isEmpty ? 0 : sorted[sorted.count / 2],
            minimumMilliseconds: sorted.first ?? 0, peakKilobytes: Machine.peakKilobytes(),
            readMilliseconds: mean(\.read), metadataMilliseconds: mean(\.metadata), renderMilliseconds: mean(\.render))
        result.cpuMilliseconds = mean(\.cpu)
        result.pageFaults = mean(\.faults)
        result.warmUps = min(files.count, warmUpPhotos)
        result.stages.decode = mean(\.stages.decode)
        result.stages.analysis = mean(\.stages.analysis)
        result.stages.resample = mean(\.stages.resample)
        result.stages.encode = mean(\.stages.encode)
        return result
    }

    /// Runs one measurement in a child process (its own process, so VmHWM is its own) and parses
    /// its result line.
    static func measureInChild(directory: URL, workers: Int, count: Int, settings: Settings,
                               environment: [String: String] = [:]) throws -> Result {
        var arguments = ["render", "--child", directory.path, "--workers", String(workers), "--count", String(count)]
        if let orientation = settings.orientation { arguments += ["--orientation", String(orientation)] }
        if !settings.metadata { arguments.append("--no-metadata") }
        let output = directory.appendingPathComponent("child-\(workers)-\(count).out").path
        let errors = directory.appendingPathComponent("child-\(workers)-\(count).err").path
        defer {
            unlink(output)
            unlink(errors)
        }
        let child = try ChildProcess.run(Machine.executable().path, arguments, stdout: output, stderr: errors, environment: environment)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard child.status == 0, var result = Result(line: text) else {
            let reason = ((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "").split(separator: "\n").last.map(String.init) ?? "no output"
            throw BenchError("the render child (\(workers) workers) exited with status \(child.status): \(reason)")
        }
        result.childCPUSeconds = child.cpuSeconds
        return result
    }
}
