import Foundation

/// This process's resources as Prometheus' client libraries name them (`process_*`), read from
/// `/proc/self` at each scrape: memory, CPU time, open files and when the process started.
/// Off Linux (no `/proc`), the figures that cannot be read are left out.
struct ProcessFigures: Equatable {
    var residentBytes: Double?
    var virtualBytes: Double?
    var cpuSeconds: Double?
    var startTime: Double?
    var openFDs: Double?
    var maxFDs: Double?

    /// The figures of the running process.
    static func current() -> ProcessFigures {
        var figures = ProcessFigures()
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let page = Double(sysconf(Int32(_SC_PAGESIZE)))
        if let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
           let fields = statFields(stat), ticks > 0 {
            figures.cpuSeconds = (fields.userTicks + fields.systemTicks) / ticks
            figures.virtualBytes = fields.virtualBytes
            figures.residentBytes = fields.residentPages * page
            if let boot = bootTime(try? String(contentsOfFile: "/proc/stat", encoding: .utf8)) {
                figures.startTime = boot + fields.startTicks / ticks
            }
        }
        if let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            // The listing's own descriptor is among them while it is read.
            figures.openFDs = Double(max(0, descriptors.count - 1))
        }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            figures.maxFDs = Double(limit.rlim_cur)
        }
        return figures
    }

    /// The fields of `/proc/self/stat` used here (proc(5)): utime (14), stime (15), starttime
    /// (22), vsize (23), rss (24). The command name (2) is in parentheses and may hold spaces and
    /// parentheses itself, so fields are counted from the last `)`.
    static func statFields(_ text: String) -> (userTicks: Double, systemTicks: Double, startTicks: Double,
                                                virtualBytes: Double, residentPages: Double)? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        // After the name: field 3 (state) is at index 0.
        let rest = text[text.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        func field(_ number: Int) -> Double? {
            let index = number - 3
            return rest.indices.contains(index) ? Double(rest[index]) : nil
        }
        guard let user = field(14), let system = field(15), let start = field(22), let virtual = field(23), let resident = field(24) else {
            return nil
        }
        return (user, system, start, virtual, resident)
    }

    /// The boot time in seconds since the epoch: `/proc/stat`'s `btime` line.
    static func bootTime(_ text: String?) -> Double? {
        guard let text else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst("btime ".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// The `process_*` families, with Prometheus' names, types and meanings.
    func render(into out: inout ServiceMetrics.Exposition) {
        let families: [(String, ServiceMetrics.Exposition.Kind, String, Double?)] = [
            ("process_cpu_seconds_total", .counter, "Total user and system CPU time spent in seconds.", cpuSeconds),
            ("process_resident_memory_bytes", .gauge, "Resident memory size in bytes.", residentBytes),
            ("process_virtual_memory_bytes", .gauge, "Virtual memory size in bytes.", virtualBytes),
            ("process_start_time_seconds", .gauge, "Start time of the process since unix epoch in seconds.", startTime),
            ("process_open_fds", .gauge, "Number of open file descriptors.", openFDs),
            ("process_max_fds", .gauge, "Maximum number of open file descriptors.", maxFDs),
        ]
        for (name, kind, help, value) in families {
            guard let value else { continue }
            out.family(name, kind, help)
            out.sample(name, [:], value)
        }
    }
}
