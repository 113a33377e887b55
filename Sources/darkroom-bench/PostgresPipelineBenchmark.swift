import BenchInputs
import BenchKit
import Foundation
import PostgresBench
import PostgresHarness
import Settings

/// `darkroom-bench pipeline-postgres`: `darkroom run --once` on the same spooled 12 MP photos
/// with the catalog in SQLite and in PostgreSQL, side by side in one sitting.
enum PostgresPipelineBenchmark {
    /// PostgreSQL's throughput as a fraction of SQLite's.
    static let ratioTarget = 0.95

    static func run(_ options: PipelineBenchmark.Options) throws -> [Verdict] {
        // Each catalog at darkroom's default worker count (one per core; one more with
        // PostgreSQL), as a user runs it; `--workers N` runs both with N.
        let workers: Int? = options.workersGiven ? options.workers : nil
        var shared = Configuration.defaults
        shared.catalogURL = "postgres://"
        let described = workers.map { "`--concurrency \($0)` for both" }
            ?? "each at its default worker count: SQLite \(Configuration.defaults.effectiveConcurrency), PostgreSQL \(shared.effectiveConcurrency)"
        print("## pipeline-postgres: \(options.photos) spooled 12 MP photos through `darkroom run --once`, "
              + "catalog in SQLite and in PostgreSQL, \(described)\n")
        let darkroom = try PipelineBenchmark.darkroomBinary()
        let scratch = try Machine.scratchDirectory("pipeline-postgres")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let base = try PhotoSet.generateAnnounced(count: options.base, into: scratch.appendingPathComponent("base"))
        // fsync on: the server makes each commit durable, as SQLite's FULL synchronous mode does.
        let cluster = try BenchCluster.start(durable: true)
        defer { cluster.stop() }

        var rows: [[String]] = []
        var rates: [String: Double] = [:]
        var activity: DatabaseActivity?
        var footprint: [(String, Int64)] = []
        // SQLite, PostgreSQL, then each again, so that drifting load from other work evens out.
        for (round, store) in ["SQLite", "PostgreSQL", "PostgreSQL", "SQLite"].enumerated() {
            let location = store == "PostgreSQL" ? try cluster.freshDatabase(prefix: "pipeline") : nil
            let workspace = try PipelineWorkspace(root: scratch.appendingPathComponent("run-\(round)"), workers: workers,
                                                  catalogURL: location?.description)
            defer { workspace.remove() }
            _ = try workspace.fill(count: options.photos, from: base.photos)
            let before = try location.map { try DatabaseActivity.read($0) }
            let serverBefore = cluster.serverCPUSeconds()
            let run = try workspace.run(darkroom: darkroom, workers: workers)
            // The run's backends end as it exits; the postmaster then counts them as reaped.
            usleep(300_000)
            let serverCPU = location == nil ? nil : cluster.serverCPUSeconds().flatMap { after in serverBefore.map { after - $0 } }
            try workspace.verify(expected: options.photos, run: run)
            if let location, let before, activity == nil {
                activity = (try DatabaseActivity.read(location)).minus(before)
                footprint = try DatabaseActivity.footprint(location)
            }
            let rate = Double(options.photos) / run.wallSeconds
            rates[store, default: 0] += rate / 2
            rows.append([store, Table.number(run.wallSeconds), Table.number(rate, 2), Table.number(run.cpuSeconds),
                         serverCPU.map { String(format: "%.1f (%.1f ms/photo)", $0, 1000 * $0 / Double(options.photos)) } ?? "—",
                         Table.megabytes(kilobytes: run.peakKilobytes), Machine.loadAverage()])
        }
        Table.print(header: ["catalog", "wall s", "photos/s", "CPU s (darkroom)", "CPU s (PostgreSQL server)", "peak RSS", "load after"], rows: rows)
        let sqlite = rates["SQLite"] ?? 0
        let postgres = rates["PostgreSQL"] ?? 0
        print("")
        print("Each row is the real binary on a fresh spool, library and catalog (PostgreSQL: a fresh database in a temporary cluster")
        print("on loopback, fsync on, on the same two cores); darkroom's CPU and the server's (its processes, from /proc) apart.")
        print("Mean of the two runs of each:")
        print(String(format: "SQLite %.2f photos/s, PostgreSQL %.2f photos/s (%.1f %%).\n", sqlite, postgres, 100 * postgres / max(sqlite, 0.001)))
        if let activity {
            let n = Double(options.photos)
            print(String(format: "What the first PostgreSQL run asked of the server, per photo: %.1f transactions committed (%.1f rolled back), "
                         + "%.1f rows inserted, %.1f updated, %.1f deleted, %.0f bytes of WAL.", Double(activity.commits) / n,
                         Double(activity.rollbacks) / n, Double(activity.inserted) / n, Double(activity.updated) / n,
                         Double(activity.deleted) / n, Double(activity.walBytes) / n))
            print("Its tables and their indexes after \(options.photos) photos, per picture: "
                  + footprint.map { "\($0.0) \($0.1 / Int64(options.photos)) B" }.joined(separator: ", ") + ".\n")
        }
        let setting = workers.map { "\($0) workers each" } ?? "default workers"
        return [Verdict(section: "pipeline-postgres", measure: "`run --once` with the catalog in PostgreSQL ÷ in SQLite, \(options.photos) × 12 MP, \(setting)",
                        figure: Table.percent(postgres / max(sqlite, 0.001)), target: "≥ \(Int(ratioTarget * 100)) %",
                        passed: options.photos >= 1000 ? postgres / max(sqlite, 0.001) >= ratioTarget : nil)]
    }
}
