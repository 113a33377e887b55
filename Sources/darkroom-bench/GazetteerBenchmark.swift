import BenchKit
import Foundation
import Gazetteer
import SeededRandom

/// `darkroom-bench gazetteer [--lookups N] [--oracle FILE]`: the gazetteer's load time, the
/// memory it adds, a nearest-city and a time-zone lookup's time; with `--oracle` (points and
/// their polygon zone, written by `tools/gazetteer/agreement.py`), how often the nearest city's
/// zone agrees, by name and by UTC offsets over the year.
enum GazetteerBenchmark {
    struct Options {
        var lookups = 100_000
        var oracle: String?

        init() {}

        init(_ arguments: BenchArguments) throws {
            try arguments.check(valueFlags: ["--lookups", "--oracle"])
            lookups = try arguments.int("--lookups", default: lookups)
            oracle = arguments.value("--oracle")
        }
    }

    static let section = "gazetteer"

    static func run(_ options: Options) throws -> [Verdict] {
        print("## Gazetteer (GeoNames cities1000: nearest city and time zone)\n")
        let before = residentKilobytes()
        let start = Machine.now()
        let gazetteer = try Gazetteer.load()
        // Touch every page a lookup can reach: the first lookups are part of loading.
        _ = gazetteer.timeZone(latitude: 0, longitude: 0)
        let loadSeconds = Machine.now() - start
        var random = SplitMix64(seed: 31)
        let points = (0..<options.lookups).map { _ in
            (Double.random(in: -60...70, using: &random), Double.random(in: -180...180, using: &random))
        }
        var found = 0
        let nearestStart = Machine.now()
        for (lat, lon) in points where gazetteer.nearest(latitude: lat, longitude: lon, within: 30_000) != nil { found += 1 }
        let nearestMicros = (Machine.now() - nearestStart) / Double(points.count) * 1e6
        let zoneStart = Machine.now()
        var zones = 0
        for (lat, lon) in points where gazetteer.timeZone(latitude: lat, longitude: lon) != nil { zones += 1 }
        let zoneMicros = (Machine.now() - zoneStart) / Double(points.count) * 1e6
        let addedKilobytes = residentKilobytes() - before
        print("\(gazetteer.cityCount) places; \(points.count) uniform random points (-60...70°): \(found) within 30 km of a place, "
              + "\(zones) with a zone\n")
        var verdicts = [
            Verdict(section: section, measure: "load (open, map, first lookup)", figure: Table.number(loadSeconds * 1000, 1) + " ms",
                    target: "< 500 ms", passed: loadSeconds < 0.5),
            Verdict(section: section, measure: "resident memory added (load and \(points.count * 2) lookups)",
                    figure: Table.megabytes(kilobytes: addedKilobytes), target: "< 32 MB", passed: addedKilobytes < 32 * 1024),
            Verdict(section: section, measure: "nearest city within 30 km, per lookup", figure: Table.number(nearestMicros, 2) + " µs",
                    target: "< 50 µs", passed: nearestMicros < 50),
            Verdict(section: section, measure: "time zone of a point, per lookup", figure: Table.number(zoneMicros, 2) + " µs",
                    target: "< 50 µs", passed: zoneMicros < 50),
        ]
        if let oracle = options.oracle {
            verdicts += try agreement(gazetteer, oracle: oracle)
        } else {
            print("(no --oracle FILE: the zone agreement needs `python3 tools/gazetteer/agreement.py`'s points; see tools/gazetteer/README.md)\n")
        }
        Verdict.printTable(verdicts)
        print("")
        return verdicts
    }

    /// Agreement with the polygon oracle's zones: same name, or the same UTC offsets on the
    /// 1st and 15th of every month of 2024 (a renamed zone such as Europe/Kiev and
    /// Europe/Kyiv, or two zones with the same rules, give the same instants).
    static func agreement(_ gazetteer: Gazetteer, oracle: String) throws -> [Verdict] {
        let text = try String(contentsOfFile: oracle, encoding: .utf8)
        var totals: [String: (points: Int, name: Int, offsets: Int)] = [:]
        var disagreements: [String] = []
        let probes: [Date] = (1...12).flatMap { month in
            [1, 15].map { day in
                var parts = DateComponents(calendar: Calendar(identifier: .gregorian), timeZone: .gmt, year: 2024, month: month, day: day, hour: 12)
                parts.minute = 0
                return parts.date ?? Date(timeIntervalSince1970: 0)
            }
        }
        var offsetsCache: [String: [Int]] = [:]
        func offsets(_ identifier: String) -> [Int]? {
            if let cached = offsetsCache[identifier] { return cached }
            guard let zone = TimeZone(identifier: identifier) else { return nil }
            let values = probes.map { zone.secondsFromGMT(for: $0) }
            offsetsCache[identifier] = values
            return values
        }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 4, let lat = Double(fields[1]), let lon = Double(fields[2]) else { continue }
            let kind = fields[0], expected = fields[3]
            let mine = gazetteer.timeZone(latitude: lat, longitude: lon) ?? "-"
            var total = totals[kind] ?? (0, 0, 0)
            total.points += 1
            if mine == expected { total.name += 1 }
            if mine == expected || (offsets(mine) != nil && offsets(mine) == offsets(expected)) {
                total.offsets += 1
            } else if kind == "photo" || disagreements.count < 10 {
                disagreements.append("\(kind) \(fields[1]), \(fields[2]): oracle \(expected), gazetteer \(mine)"
                                     + (fields.count > 4 ? " (\(fields[4]))" : ""))
            }
            totals[kind] = total
        }
        if !disagreements.isEmpty {
            print("Disagreements (every photo; the first people points):\n" + disagreements.map { "  " + $0 }.joined(separator: "\n") + "\n")
        }
        var verdicts: [Verdict] = []
        for (kind, total) in totals.sorted(by: { $0.key > $1.key }) where total.points > 0 {
            let byName = Double(total.name) / Double(total.points) * 100
            let byOffsets = Double(total.offsets) / Double(total.points) * 100
            let label = kind == "people" ? "where people live" : "the corpus' located photos"
            verdicts.append(Verdict(section: section, measure: "zone = polygon oracle's, \(label) (\(total.points) points), same name",
                                    figure: Table.number(byName, 2) + " %", target: "report", passed: nil))
            verdicts.append(Verdict(section: section, measure: "zone = polygon oracle's, \(label), same offsets all 2024",
                                    figure: Table.number(byOffsets, 2) + " %", target: kind == "photo" ? ">= 99 %" : "report",
                                    passed: kind == "photo" ? byOffsets >= 99 : nil))
        }
        return verdicts
    }

    /// VmRSS from /proc/self/status, in kB.
    private static func residentKilobytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        }
        return 0
    }
}
