import BenchInputs
import BenchKit
import Catalog
import Foundation
import Moments
import PhotoMetadata
import PostgresBench
import PostgresCatalog
import PostgresHarness

/// `darkroom-bench moments`: moment assignment at library scale. Synthetic pictures (metadata
/// only) go one by one, in random order, through `Catalog.commitPicture`, the call the worker
/// makes, which files each picture into its moment in the same transaction.
enum MomentsBenchmark {
    /// The ceiling of the per-photo time.
    static let millisecondsTarget = 1.0
    /// The largest growth of the per-photo time from the first block to the last that counts as flat.
    static let growthTarget = 1.5

    struct Options {
        var pictures = 100_000
        var block = 10_000
        var authors = 300
        var seed: UInt64 = 2024
        /// Where the catalog goes; tmpfs by default (see `run`).
        var directory: String?
        /// Pictures committed to a catalog on disk as well, to show the cost of the commit's fsync.
        var diskSample = 300
        /// Keeps the catalog (for profiling its queries) instead of removing it.
        var keep = false
        /// Stops the ingest at the end of the first block past this many seconds (`all` sets it,
        /// so that a slow catalog cannot stretch the whole run without bound).
        var maxSeconds: Int?
        /// The catalog in PostgreSQL (a temporary cluster of the run's own) instead of SQLite.
        var postgres = false

        init() {}

        init(_ arguments: BenchArguments) throws {
            try arguments.check(valueFlags: ["--pictures", "--block", "--authors", "--seed", "--dir", "--disk-sample", "--max-seconds"],
                                bareFlags: ["--keep", "--postgres"])
            pictures = try arguments.int("--pictures", default: pictures)
            block = try arguments.int("--block", default: min(block, pictures))
            authors = try arguments.int("--authors", default: authors)
            seed = UInt64(try arguments.int("--seed", default: Int(seed), in: 0...Int.max))
            directory = arguments.value("--dir")
            diskSample = try arguments.int("--disk-sample", default: diskSample, in: 0...Int.max)
            keep = arguments.has("--keep")
            postgres = arguments.has("--postgres")
            if arguments.value("--max-seconds") != nil { maxSeconds = try arguments.int("--max-seconds", default: 0) }
        }
    }

    /// Commit times of one block of pictures.
    struct Block {
        var located: [Double] = []
        var unlocated: [Double] = []
        /// The same commits in CPU time of the committing thread: less disturbed by other work on the machine.
        var locatedCPU: [Double] = []
        var unlocatedCPU: [Double] = []

        static func mean(_ values: [Double]) -> Double { values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count) }
        var meanLocated: Double { Self.mean(located) }
        var meanUnlocated: Double { Self.mean(unlocated) }
        var meanAll: Double { Self.mean(located + unlocated) }
        var meanLocatedCPU: Double { Self.mean(locatedCPU) }
        var meanUnlocatedCPU: Double { Self.mean(unlocatedCPU) }
        var p99Located: Double {
            let sorted = located.sorted()
            return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
        }
    }

    static func run(_ options: Options) throws -> [Verdict] {
        print("## moments: assignment of \(options.pictures) pictures through commitPicture, catalog in \(options.postgres ? "PostgreSQL" : "SQLite")\n")
        let generationStart = Machine.now()
        let library = SyntheticLibrary.make(pictures: options.pictures, authors: options.authors, seed: options.seed)
        let located = library.pictures.filter(\.isLocated).count
        let early = library.events.filter { !$0.declaredLate }
        let late = library.events.filter(\.declaredLate)
        print(String(format: "Synthetic library (seed %llu, made in %.1f s): %d pictures (%d with trusted time and location), %d authors in %d cities,",
                     options.seed, Machine.now() - generationStart, options.pictures, located, options.authors, SyntheticLibrary.cities.count))
        print("outings of one author (walks of ~40 photos, 3 % with a pause of hours), \(library.events.count) declared moments "
              + "(\(library.festivals) festivals of \(options.pictures * 3 / 100) photos over 3 days, 30 % of the others private, some photos asking for theirs);")
        print("\(early.count) declared before the ingest, \(late.count) after half of it. Random arrival order.")

        let memory = Machine.memoryDirectory()
        let scratch = try Machine.scratchDirectory("moments", under: options.directory.map { URL(fileURLWithPath: $0) } ?? memory)
        defer { if !options.keep { try? FileManager.default.removeItem(at: scratch) } }
        let catalog: any CatalogStore
        var cluster: TemporaryCluster?
        defer { cluster?.stop() }
        if options.postgres {
            // fsync off, as the SQLite run's tmpfs: the queries are measured, not the disk.
            let started = try BenchCluster.start(durable: false)
            cluster = started
            let location = try started.freshDatabase(prefix: "moments")
            catalog = try PostgresCatalog(location: location)
            print("Catalog: PostgreSQL \(location), a temporary cluster with fsync off (as the SQLite run's tmpfs)")
            print(String(format: "A statement that waits for its answer (SELECT 1, one connection) takes %.3f ms here: the floor of each of a commit's waits.\n",
                         try RoundTrip.milliseconds(at: location)))
        } else {
            catalog = try open(scratch.appendingPathComponent("catalog.sqlite").path)
            print("Catalog: \(scratch.path)/catalog.sqlite "
                  + (options.directory == nil && memory != nil ? "(tmpfs: the commit's fsync is measured apart, below)" : "") + "\n")
        }

        for event in early { try declare(event, in: catalog) }
        let loadBefore = Machine.loadAverage()

        var blocks: [Block] = []
        var current = Block()
        var lateTimes: [Double] = []
        var firstTimes: [Double] = []
        var pulledIn = 0
        let ingestStart = Machine.now()
        var ingested = 0
        for (index, picture) in library.pictures.enumerated() {
            if index == options.pictures / 2 {
                for event in late {
                    let start = Machine.now()
                    pulledIn += try declare(event, in: catalog)
                    lateTimes.append((Machine.now() - start) * 1000)
                }
            }
            let (milliseconds, cpu) = try commit(picture, index: index, to: catalog)
            if index < options.diskSample { firstTimes.append(milliseconds) }
            if picture.isLocated {
                current.located.append(milliseconds)
                current.locatedCPU.append(cpu)
            } else {
                current.unlocated.append(milliseconds)
                current.unlocatedCPU.append(cpu)
            }
            ingested = index + 1
            if ingested % options.block == 0 || ingested == options.pictures {
                blocks.append(current)
                current = Block()
                let elapsed = Machine.now() - ingestStart
                if blocks.count % 2 == 0 { print(String(format: "  … %d pictures, %.0f s", ingested, elapsed)) }
                if let limit = options.maxSeconds, elapsed > Double(limit), ingested < options.pictures {
                    print("  stopped after \(ingested) pictures: past the time limit of \(limit) s (run `darkroom-bench moments` alone for all of them)")
                    break
                }
            }
        }
        let ingestSeconds = Machine.now() - ingestStart

        var rows: [[String]] = []
        for (number, block) in blocks.enumerated() {
            let upTo = min(ingested, (number + 1) * options.block)
            rows.append([Table.count(upTo), Table.number(block.meanLocated, 3), Table.number(block.p99Located, 2),
                         Table.number(block.meanUnlocated, 3), Table.number(block.meanLocated - block.meanUnlocated, 3),
                         Table.number(block.meanLocatedCPU, 3), Table.number(block.meanLocatedCPU - block.meanUnlocatedCPU, 3),
                         "\(block.located.count + block.unlocated.count)"])
        }
        print("")
        Table.print(header: ["pictures in catalog", "ms/photo, with time+place", "p99 ms", "ms/photo, no time or place",
                             "≈ assignment ms (difference)", "CPU ms/photo, with time+place", "≈ assignment CPU ms", "photos in block"], rows: rows)
        print("")
        print("Each figure is the wall time of one `Catalog.commitPicture` (an immediate write transaction: picture row, job row,")
        print("moment engine, outbox events, commit), averaged over the block of \(options.block) pictures ending at that size.")
        print("Pictures without a trusted time or a location skip the moment search, so the difference of the two means")
        print("approximates the assignment itself. The CPU columns are the committing thread's CPU time (CLOCK_THREAD_CPUTIME_ID)")
        print("over the same calls: what the work costs when other processes compete for the cores. Total ingest: \(String(format: "%.1f", ingestSeconds)) s; "
              + "load average \(loadBefore) before, \(Machine.loadAverage()) after.")
        if !lateTimes.isEmpty {
            print(String(format: "Declaring %d moments after %d pictures: %.1f ms each on average (%.1f ms at most), pulling in %d pictures.",
                         lateTimes.count, options.pictures / 2, Block.mean(lateTimes), lateTimes.max() ?? 0, pulledIn))
        }

        let counts = try catalog.counts(now: Date())
        let sizes = try catalog.pictureCounts()
        let moments = try catalog.moments(atPlace: nil)
        let declared = moments.filter { $0.kind == .declared }.count
        print("Result: \(counts.pictures) pictures, \(moments.count) moments (\(declared) declared, \(moments.count - declared) automatic), "
              + "\(counts.places) places; the largest moment holds \(sizes.values.max() ?? 0) pictures.")

        let rebuildStart = Machine.now()
        let differences: [MomentEvent]
        do {
            differences = try catalog.rebuildMoments(apply: false)
        } catch {
            throw BenchError("rebuildMoments failed: \(error)")
        }
        let rebuildSeconds = Machine.now() - rebuildStart
        print(String(format: "rebuildMoments(apply: false): %.1f s, %d differences from the incremental state.",
                     rebuildSeconds, differences.count))
        if !differences.isEmpty { print("  first differences: \(differences.prefix(5).map { "\($0)" }.joined(separator: "; "))") }

        if options.diskSample > 0 && !options.postgres {
            let sample = Array(library.pictures.prefix(min(options.diskSample, options.pictures)))
            let onDisk = try diskCommit(sample, events: early)
            print(String(format: "On disk (%@, synchronous = FULL), the same first %d pictures commit in %.2f ms each on average, against %.2f ms",
                         FileManager.default.temporaryDirectory.path, sample.count, onDisk, Block.mean(firstTimes)))
            print("in the run above: the difference is the commit's fsync, which the worker pays once per photo beside the assignment.")
        }
        print("")

        guard let first = blocks.first, let last = blocks.last else { return [] }
        let growth = last.meanLocated / first.meanLocated
        let assignment = last.meanLocated - last.meanUnlocated
        // On SQLite the whole commit is held to the target, assignment and all. On PostgreSQL
        // every commit, located or not, also waits for the server on its own rows (the picture,
        // its job, the outbox, the COMMIT: the "no time or place" column): the target is the
        // assignment's share, what a located picture costs beyond that.
        let timed = options.postgres
            ? Verdict(section: "moments", measure: "assignment (with time+place less without), PostgreSQL, at \(Table.count(ingested))",
                      figure: String(format: "%.3f ms (the whole commit %.3f ms, without time or place %.3f ms; CPU %.3f ms, assignment ≈ %.3f ms)",
                                     assignment, last.meanLocated, last.meanUnlocated, last.meanLocatedCPU,
                                     last.meanLocatedCPU - last.meanUnlocatedCPU),
                      target: "< \(Table.number(millisecondsTarget, 0)) ms", passed: assignment < millisecondsTarget)
            : Verdict(section: "moments", measure: "commitPicture incl. assignment, with time+place, at \(Table.count(ingested))",
                      figure: String(format: "%.3f ms (assignment ≈ %.3f ms; CPU %.3f ms, assignment ≈ %.3f ms)", last.meanLocated,
                                     assignment, last.meanLocatedCPU, last.meanLocatedCPU - last.meanUnlocatedCPU),
                      target: "< \(Table.number(millisecondsTarget, 0)) ms", passed: last.meanLocated < millisecondsTarget)
        let verdicts = [
            timed,
            Verdict(section: "moments", measure: "growth, last block / first block (\(Table.count(ingested)) vs \(Table.count(min(options.block, ingested))))",
                    figure: String(format: "%.2f×", growth)
                        + (options.postgres ? String(format: " (the assignment %.2f×)", assignment / (first.meanLocated - first.meanUnlocated)) : ""),
                    target: "flat: ≤ \(growthTarget)×", passed: growth <= growthTarget),
            Verdict(section: "moments", measure: "rebuildMoments(apply: false) agrees with incremental",
                    figure: String(format: "%d differences, %.1f s", differences.count, rebuildSeconds), target: "0 differences",
                    passed: differences.isEmpty),
        ]
        Verdict.printTable(verdicts)
        print("")
        return verdicts
    }

    static func open(_ path: String) throws -> Catalog {
        do {
            return try Catalog(path: path)
        } catch {
            throw BenchError("cannot open the catalog \(path): \(error)")
        }
    }

    /// Declares an event's place and moment; returns how many pictures it pulled in.
    @discardableResult
    static func declare(_ event: SyntheticLibrary.Event, in catalog: any CatalogStore) throws -> Int {
        do {
            _ = try catalog.declarePlace(id: event.id, name: event.name, center: event.center, radiusMetres: event.radiusMetres)
            let (_, events) = try catalog.declareMoment(event.moment, id: event.id, as: .create)
            return events.filter {
                if case .pictureAdded = $0 { return true }
                return false
            }.count
        } catch {
            throw BenchError("cannot declare \(event.name): \(error)")
        }
    }

    /// Commits one synthetic picture as the worker would (no variants); returns the milliseconds
    /// it took, in wall time and in this thread's CPU time.
    static func commit(_ picture: SyntheticLibrary.Picture, index: Int, to catalog: any CatalogStore) throws -> (wall: Double, cpu: Double) {
        let now = Date().timeIntervalSince1970
        var record = PictureRecord(
            sha256: picture.key, sourceName: "synthetic-\(index).jpg", originalPath: "originals/\(picture.key.prefix(2))/\(picture.key).jpg",
            mimeType: "image/jpeg", byteSize: 3_500_000, width: 4000, height: 3000, displayWidth: 4000, displayHeight: 3000,
            orientation: 1, locationSource: (picture.location == nil ? LocationSource.none : .exif).rawValue,
            metadataJson: "{}", createdAt: now)
        record.capturedAt = picture.time
        record.timeTrusted = picture.time != nil
        record.momentTime = picture.time
        record.latitude = picture.location?.latitude
        record.longitude = picture.location?.longitude
        record.authorId = SyntheticLibrary.user(picture.author)
        record.coverScore = picture.coverScore
        record.requestedMomentId = picture.requestedMomentId
        let job = JobRecord(sourceName: record.sourceName, claimPath: "/bench/processing/\(record.sourceName)", sha256: picture.key,
                            outcome: .added, pictureId: nil, attempts: 1, error: nil, sidecarJson: nil, worker: "darkroom-bench",
                            startedAt: now, finishedAt: now)
        let start = Machine.now()
        let cpuStart = Machine.threadCPUSeconds()
        do {
            let outcome = try catalog.commitPicture(record, variants: [], job: job)
            guard case .added = outcome else { throw BenchError("picture \(index) was recorded as a duplicate") }
        } catch let error as BenchError {
            throw error
        } catch {
            throw BenchError("commitPicture failed at picture \(index): \(error)")
        }
        return ((Machine.now() - start) * 1000, (Machine.threadCPUSeconds() - cpuStart) * 1000)
    }

    /// Mean commit time of `pictures` into a fresh catalog in the temporary directory (on disk).
    static func diskCommit(_ pictures: [SyntheticLibrary.Picture], events: [SyntheticLibrary.Event]) throws -> Double {
        let scratch = try Machine.scratchDirectory("moments-disk")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let catalog = try open(scratch.appendingPathComponent("catalog.sqlite").path)
        for event in events { try declare(event, in: catalog) }
        var total = 0.0
        for (index, picture) in pictures.enumerated() { total += try commit(picture, index: index, to: catalog).wall }
        return total / Double(max(1, pictures.count))
    }
}
