import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What the benchmark reads about the machine and its own process.
public enum Machine {
    /// CPU time of the calling thread, in seconds.
    public static func threadCPUSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// CPU time of this whole process (every thread, user and system), in seconds.
    public static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(0), &usage)  // RUSAGE_SELF
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// Seconds on a monotonic clock (for intervals only).
    public static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// Minor page faults of the calling thread so far (getrusage RUSAGE_THREAD): each is a page
    /// touched for the first time (zeroed by the kernel) or mapped again.
    public static func threadPageFaults() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD (a GNU extension Swift does not import)
        return usage.ru_minflt
    }

    /// The processor's model and which of the instruction sets the worker's hot paths choose
    /// between it has (from /proc/cpuinfo): the resampler's AVX2, AVX-512 VNNI and VBMI passes,
    /// and SHA-256's SHA extensions. The same build's figures differ by machine on these, so a
    /// figure is printed with them.
    public static func processor() -> String {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "processor unknown" }
        var model = "processor unknown", flags: Set<Substring> = []
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let key = parts[0].trimmingCharacters(in: .whitespaces), value = parts[1].trimmingCharacters(in: .whitespaces)
            if key == "model name" { model = value }
            if key == "flags" { flags = Set(value.split(separator: " ")) }
            if model != "processor unknown" && !flags.isEmpty { break }
        }
        let features = [("avx2", "AVX2"), ("avx512_vnni", "AVX-512 VNNI"), ("avx512vbmi", "AVX-512 VBMI"), ("sha_ni", "SHA")]
            .map { flags.contains(Substring($0.0)) ? $0.1 : "no " + $0.1 }
        return model + " (" + features.joined(separator: ", ") + ")"
    }

    /// The 1-minute load average: other work on a shared machine shows up here.
    public static func loadAverage() -> String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "?" }
        return String(text.split(separator: " ").first ?? "?")
    }

    /// The directory of the running executable, where `swift build` puts `darkroom` too.
    public static func executableDirectory() -> URL {
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: link).deletingLastPathComponent()
    }

    /// The running executable itself (for measuring children).
    public static func executable() -> URL {
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: link)
    }

    /// VmHWM from /proc/self/status: this process's peak resident memory, in kB.
    public static func peakKilobytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        }
        return 0
    }

    /// A new empty directory under `parent` (the system's temporary directory by default).
    public static func scratchDirectory(_ name: String, under parent: URL? = nil) throws -> URL {
        let base = parent ?? FileManager.default.temporaryDirectory
        let directory = base.appendingPathComponent("darkroom-bench-\(getpid())-\(name)")
        try? FileManager.default.removeItem(at: directory)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw BenchError("cannot create \(directory.path): \(error.localizedDescription)")
        }
        return directory
    }

    /// A RAM-backed directory (tmpfs) when the machine has one, for runs whose disk cost is not
    /// the point.
    public static func memoryDirectory() -> URL? {
        let shm = URL(fileURLWithPath: "/dev/shm")
        return access(shm.path, W_OK) == 0 ? shm : nil
    }

    /// Bytes used by the files under `directory`.
    public static func diskUsage(_ directory: URL) -> Int64 {
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.fileSizeKey]) else { return 0 }
        var total: Int64 = 0
        for case let url as URL in walker {
            total += Int64((try? url.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0)
        }
        return total
    }
}
