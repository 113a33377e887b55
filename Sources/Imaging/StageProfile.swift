import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a worker's time goes, stage by stage, when asked: with the environment variable
/// `DARKROOM_STAGE_PROFILE` set to a path, every photo's stages add their CPU time (the calling
/// thread's, CLOCK_THREAD_CPUTIME_ID) and wall time to process-wide sums, written to that path
/// when the process exits, one tab-separated line a stage: `stage cpu_ms wall_ms count`.
/// Unset (the default), each hook is one test of a constant. For `darkroom-bench steady`.
///
/// The worker marks its stages with `begin()` and `lap(_:)` (each lap is the time since the
/// thread's last mark); `render` is the whole render step on both clocks, and its four parts
/// come from `Imaging.render`'s own `RenderTimings` (CPU only: their wall column repeats it).
public enum StageProfile {
    public enum Stage: Int, CaseIterable, Sendable {
        case read, metadata, decode, analysis, resample, encode, render, library, catalog

        public var name: String {
            switch self {
            case .read: "read"
            case .metadata: "metadata"
            case .decode: "decode"
            case .analysis: "analysis"
            case .resample: "resample"
            case .encode: "encode"
            case .render: "render"
            case .library: "library"
            case .catalog: "catalog"
            }
        }
    }

    /// The environment variable naming the file the sums are written to.
    public static let variable = "DARKROOM_STAGE_PROFILE"

    /// The file to write at exit, or nil (profiling off).
    static let path: String? = getenv(variable).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }

    struct Sums {
        var cpu = [Double](repeating: 0, count: Stage.allCases.count)
        var wall = [Double](repeating: 0, count: Stage.allCases.count)
        var count = [Int](repeating: 0, count: Stage.allCases.count)
        var registered = false
        /// Each thread's last lap.
        var marks: [UInt: (cpu: Double, wall: Double)] = [:]
    }

    static let sums = Mutex(Sums())

    /// Starts the calling thread's laps (at the top of a photo).
    public static func begin() {
        guard path != nil else { return }
        let now = (cpu: Renderer.threadCPUMilliseconds(), wall: wallMilliseconds()), thread = threadKey()
        sums.withLock { $0.marks[thread] = now }
    }

    /// Adds the calling thread's CPU and wall time since its last `begin` or `lap` to `stage`.
    public static func lap(_ stage: Stage) {
        guard path != nil else { return }
        let now = (cpu: Renderer.threadCPUMilliseconds(), wall: wallMilliseconds()), thread = threadKey()
        let last = sums.withLock { sums in
            defer { sums.marks[thread] = now }
            return sums.marks[thread]
        }
        if let last { add(stage, cpu: now.cpu - last.cpu, wall: now.wall - last.wall) }
    }

    /// Adds one render's stages (CPU time, which is also their wall time on one thread).
    static func add(_ timings: RenderTimings) {
        guard path != nil else { return }
        add(.decode, cpu: timings.decode, wall: timings.decode)
        add(.analysis, cpu: timings.analysis, wall: timings.analysis)
        add(.resample, cpu: timings.resample, wall: timings.resample)
        add(.encode, cpu: timings.encode, wall: timings.encode)
    }

    static func add(_ stage: Stage, cpu: Double, wall: Double) {
        let register = sums.withLock { sums in
            sums.cpu[stage.rawValue] += cpu
            sums.wall[stage.rawValue] += wall
            sums.count[stage.rawValue] += 1
            defer { sums.registered = true }
            return !sums.registered
        }
        if register { atexit { StageProfile.write() } }
    }

    /// Writes the sums to `path` (at exit).
    static func write() {
        guard let path, let file = fopen(path, "w") else { return }
        defer { fclose(file) }
        let lines = sums.withLock { sums in
            Stage.allCases.map { stage in
                "\(stage.name)\t\(sums.cpu[stage.rawValue])\t\(sums.wall[stage.rawValue])\t\(sums.count[stage.rawValue])\n"
            }
        }
        for line in lines { fputs(line, file) }
    }

    static func threadKey() -> UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }

    static func wallMilliseconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) * 1000 + Double(spec.tv_nsec) / 1e6
    }
}
