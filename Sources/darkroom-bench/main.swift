// darkroom-bench: how fast Darkroom renders the default variants of 12-megapixel photos.
//
//   swift run -c release darkroom-bench render [--photos N] [--workers 1|2] [--rounds R] [--orientation 1...8] [--dir DIR]
//
// Generates N 4000×3000 JPEGs (from a corpus photo, or synthetic when the corpus is absent),
// renders the four default variants of each at 1 and 2 worker threads, each configuration in a
// child process so that its peak memory (VmHWM) is its own, then runs vipsthumbnail (when
// installed) on the same files for the same four outputs, and prints a table.
import Foundation
import Imaging

let arguments = Array(CommandLine.arguments.dropFirst())

func usage() -> Never {
    print("usage: darkroom-bench render [--photos N] [--workers 1|2] [--rounds R] [--orientation 1...8] [--dir DIR]")
    exit(2)
}

func value(of flag: String) -> String? {
    guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

guard arguments.first == "render" else { usage() }

if let directory = value(of: "--child") {
    // A measuring child: render every photo of the directory, print one RESULT line.
    let workers = Int(value(of: "--workers") ?? "1") ?? 1
    let rounds = Int(value(of: "--rounds") ?? "1") ?? 1
    RenderMeasurement.orientation = Int(value(of: "--orientation") ?? "1") ?? 1
    let result = RenderMeasurement.run(directory: URL(fileURLWithPath: directory), workers: workers, rounds: rounds)
    print(result.line)
    exit(0)
}

let photoCount = Int(value(of: "--photos") ?? "8") ?? 8
guard photoCount >= 1 else { usage() }
let workerCounts: [Int]
if let text = value(of: "--workers") {
    guard let workers = Int(text), workers == 1 || workers == 2 else { usage() }
    workerCounts = [workers]
} else {
    workerCounts = [1, 2]
}

// --dir keeps the photos (for profiling with perf); otherwise a temporary directory is removed at the end.
let keptDirectory = value(of: "--dir")
let workDirectory = keptDirectory.map { URL(fileURLWithPath: $0) }
    ?? FileManager.default.temporaryDirectory.appendingPathComponent("darkroom-bench-\(getpid())")
try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
defer { if keptDirectory == nil { try? FileManager.default.removeItem(at: workDirectory) } }

print("darkroom-bench: generating \(photoCount) photos of \(PhotoSet.width)×\(PhotoSet.height) (JPEG q\(PhotoSet.quality))…")
let photos = try PhotoSet.generate(count: photoCount, into: workDirectory)
print("  source: \(photos.origin)")

/// glibc settings that keep freed raster buffers in the heap instead of returning them to the
/// kernel after every photo (which costs page faults and zeroing on the next): a worker-process
/// setting, shown as a separate row.
let tunedMalloc = "glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=536870912"

/// Runs one measuring child (its own process, so VmHWM is its own) and parses its result line.
func measure(workers: Int, rounds: Int, environment: [String: String]?) throws -> RenderMeasurement.Result {
    let child = Process()
    child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    child.arguments = [
        "render", "--child", workDirectory.path, "--workers", String(workers), "--rounds", String(rounds),
        "--orientation", value(of: "--orientation") ?? "1",
    ]
    if let environment {
        child.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    }
    let pipe = Pipe()
    child.standardOutput = pipe
    try child.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    child.waitUntilExit()
    guard let result = RenderMeasurement.Result(line: output) else {
        print("child for \(workers) worker(s) failed: \(output)")
        exit(1)
    }
    return result
}

let rounds = Int(value(of: "--rounds") ?? "2") ?? 2
var rows: [(label: String, result: RenderMeasurement.Result)] = []
for workers in workerCounts {
    rows.append(("darkroom", try measure(workers: workers, rounds: rounds, environment: nil)))
}
for workers in workerCounts {
    rows.append(("darkroom, malloc tuned", try measure(workers: workers, rounds: rounds, environment: ["GLIBC_TUNABLES": tunedMalloc])))
}

let vips = VipsComparison.run(files: photos.files, outputDirectory: workDirectory.appendingPathComponent("vips"))

print("")
print("Four default variants (thumb cover 320×320, preview contain 1024, mobile contain 2048, feed cover 1080×1350)")
print("on \(photoCount) photos of \(PhotoSet.width)×\(PhotoSet.height); release build; times are wall clock.")
print("")
print("| run | workers | photos/s | ms/photo (per worker) | median ms | fastest ms | peak RSS (VmHWM) |")
print("|---|---|---|---|---|---|---|")
for (label, row) in rows {
    print(String(
        format: "| %@ | %d | %.2f | %.1f | %.1f | %.1f | %.0f MB |", label, row.workers, row.photosPerSecond,
        row.millisecondsPerPhoto, row.medianMilliseconds, row.minimumMilliseconds, Double(row.peakKilobytes) / 1024))
}
if let vips {
    print(String(format: "| vipsthumbnail, 4 runs | 1 | %.2f | %.1f | %.1f | %.1f | n/a |", 1000 / vips.millisecondsPerPhoto,
                 vips.millisecondsPerPhoto, vips.medianMilliseconds, vips.minimumMilliseconds))
    if let single = rows.first(where: { $0.label == "darkroom" && $0.result.workers == 1 })?.result {
        print("")
        print(String(format: "darkroom / vips time ratio (1 worker): %.2f", single.millisecondsPerPhoto / vips.millisecondsPerPhoto))
    }
} else {
    print("| vipsthumbnail | - | not installed | | | | |")
}
print("")
print("ms/photo = wall time × workers / photos. \"fastest\" is the quickest single photo (least disturbed by other load).")
print("Each darkroom row ran in its own child process, so its VmHWM is its own.")
