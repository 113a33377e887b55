import Foundation
import Imaging

/// Renders every photo of a directory with N worker threads and reports throughput and memory.
enum RenderMeasurement {
    struct Result {
        let workers: Int
        let photos: Int
        let wallSeconds: Double
        let medianMilliseconds: Double
        /// The fastest photo: the least disturbed by other processes on the machine.
        let minimumMilliseconds: Double
        let peakKilobytes: Int

        var photosPerSecond: Double { Double(photos) / wallSeconds }
        /// Wall time a worker spends per photo.
        var millisecondsPerPhoto: Double { wallSeconds * 1000 * Double(workers) / Double(photos) }

        var line: String {
            "RESULT workers=\(workers) photos=\(photos) wall=\(wallSeconds) median=\(medianMilliseconds) min=\(minimumMilliseconds) hwm=\(peakKilobytes)"
        }

        init(workers: Int, photos: Int, wallSeconds: Double, medianMilliseconds: Double, minimumMilliseconds: Double, peakKilobytes: Int) {
            self.workers = workers
            self.photos = photos
            self.wallSeconds = wallSeconds
            self.medianMilliseconds = medianMilliseconds
            self.minimumMilliseconds = minimumMilliseconds
            self.peakKilobytes = peakKilobytes
        }

        init?(line: String) {
            guard let text = line.split(separator: "\n").first(where: { $0.hasPrefix("RESULT ") }) else { return nil }
            var fields: [String: String] = [:]
            for pair in text.split(separator: " ").dropFirst() {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
            }
            guard let workers = fields["workers"].flatMap(Int.init), let photos = fields["photos"].flatMap(Int.init),
                let wall = fields["wall"].flatMap(Double.init), let median = fields["median"].flatMap(Double.init),
                let minimum = fields["min"].flatMap(Double.init), let hwm = fields["hwm"].flatMap(Int.init)
            else { return nil }
            self.init(
                workers: workers, photos: photos, wallSeconds: wall, medianMilliseconds: median, minimumMilliseconds: minimum,
                peakKilobytes: hwm)
        }
    }

    /// Shared between the worker threads; every access holds the lock.
    final class Queue: @unchecked Sendable {  // safe: all mutable state is behind `lock`
        private let lock = NSLock()
        private var next = 0
        private var latencies: [Double] = []
        private var failures: [String] = []
        let photos: [[UInt8]]

        init(photos: [[UInt8]]) { self.photos = photos }

        func take() -> Int? {
            lock.lock()
            defer { lock.unlock() }
            guard next < photos.count else { return nil }
            next += 1
            return next - 1
        }

        func record(milliseconds: Double) {
            lock.lock()
            latencies.append(milliseconds)
            lock.unlock()
        }

        func fail(_ message: String) {
            lock.lock()
            failures.append(message)
            lock.unlock()
        }

        var summary: (latencies: [Double], failures: [String]) {
            lock.lock()
            defer { lock.unlock() }
            return (latencies, failures)
        }
    }

    /// The EXIF orientation every photo is rendered with (1 unless `--orientation` says otherwise).
    nonisolated(unsafe) static var orientation = 1  // set once in main, before any worker starts

    static func renderOne(_ bytes: [UInt8]) throws {
        // Hook for the lead: the metadata read belongs here, timed with the render, e.g.
        //   let metadata = try PhotoMetadata.read(bytes)
        //   options.orientation = metadata.orientation
        let options = RenderOptions(orientation: orientation)
        let result = try Imaging.render(bytes, recipes: VariantRecipe.defaults, options: options)
        guard result.variants.count == VariantRecipe.defaults.count else { throw CocoaError(.coderInvalidValue) }
    }

    /// Renders the photos of `directory` `rounds` times over with `workers` threads.
    static func run(directory: URL, workers: Int, rounds: Int) -> Result {
        let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
        let set = files.filter { $0.pathExtension == "jpg" }.sorted { $0.path < $1.path }
            .compactMap { try? [UInt8](Data(contentsOf: $0)) }
        let photos = Array((0..<max(rounds, 1)).map { _ in set }.joined())
        // One warm-up render outside the timing (first-touch page faults, lazy symbol binding).
        if let first = photos.first { try? renderOne(first) }
        let queue = Queue(photos: photos)
        let group = DispatchGroup()
        let start = Date()
        for _ in 0..<workers {
            group.enter()
            let thread = Thread {
                while let index = queue.take() {
                    let begin = Date()
                    do { try renderOne(queue.photos[index]) } catch { queue.fail("\(error)") }
                    queue.record(milliseconds: Date().timeIntervalSince(begin) * 1000)
                }
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        let wall = Date().timeIntervalSince(start)
        let (latencies, failures) = queue.summary
        if !failures.isEmpty { FileHandle.standardError.write(Data("failures: \(failures)\n".utf8)) }
        let sorted = latencies.sorted()
        let median = sorted.isEmpty ? 0 : sorted[sorted.count / 2]
        return Result(
            workers: workers, photos: photos.count, wallSeconds: wall, medianMilliseconds: median,
            minimumMilliseconds: sorted.first ?? 0, peakKilobytes: peakKilobytes())
    }

    /// VmHWM from /proc/self/status: this process's peak resident memory, in kB.
    static func peakKilobytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        }
        return 0
    }
}
