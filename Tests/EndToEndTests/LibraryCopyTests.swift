import Catalog
import Foundation
import GatewayHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `darkroom library copy` and `darkroom library check`, end to end: a library made by the
/// worker (`enqueue` + `run --once`) copied into a bucket of a real S3 server (Ceph's RADOS
/// Gateway), killed part-way and run again; then checked against the catalog in the bucket and
/// in a directory, with orphans, missing and damaged files, and repaired.
@Suite("library copy and check", .serialized)
struct LibraryCopyTests {
    static let samples = Workspace.packageRoot + "/samples"

    /// Pictures the copy test makes: the issue's 2,000 on SQLite (`DARKROOM_LIBRARY_PICTURES`
    /// changes it), fewer on PostgreSQL, whose shared queue takes longer for each.
    static func pictureCount(_ store: CatalogKind) -> Int {
        if let text = ProcessInfo.processInfo.environment["DARKROOM_LIBRARY_PICTURES"], let count = Int(text) { return count }
        return store == .sqlite ? 2_000 : 300
    }

    @Test("copy into a bucket, killed part-way and run again, ends with every object verified; check finds what is wrong and repairs it",
          .enabled(if: SharedGateway.available, Comment(rawValue: SharedGateway.skipReason)),
          arguments: CatalogKind.available)
    func copyResumesAndCheckRepairs(store: CatalogKind) throws {
        let gateway = try SharedGateway.gateway.get()
        let bucket = try SharedGateway.freshBucket(prefix: "library")
        let view = BucketView(gateway: gateway, bucket: bucket)
        let space = try Workspace(concurrency: 2, store: store)
        let environment = [
            "AWS_ACCESS_KEY_ID": gateway.accessKey, "AWS_SECRET_ACCESS_KEY": gateway.secretKey,
            "AWS_ENDPOINT_URL": gateway.endpoint.absoluteString, "AWS_REGION": gateway.region,
        ]
        let clock = Stopwatch()

        // A library made by the worker, as a deployment would have it.
        let pictures = Self.pictureCount(store)
        try Self.makeLibrary(space, pictures: pictures)
        let made = clock.lap()
        // Two files no picture names: a small one, and one past the client's multipart threshold
        // (64 MiB), whose ETag is the multipart one of its parts (four of 16 MiB and one of 2).
        let strayPaths = ["originals/00/00/" + String(repeating: "0", count: 64) + ".jpg",
                          "variants/thumb/00/00/" + String(repeating: "1", count: 64) + ".jpg"]
        try Self.write(Self.pattern(count: 66 << 20, seed: 7), to: space.library + "/" + strayPaths[0])
        try Self.write(Self.pattern(count: 5_000, seed: 9), to: space.library + "/" + strayPaths[1])
        let local = space.files(under: space.library)
        #expect(local.count == 5 * pictures + 2)

        // The first copy, killed (SIGKILL) once the bucket holds some of it.
        let arguments = ["library", "copy", "--to", "s3://\(bucket)/lib", "--json"]
        let first = try space.start(arguments, environment: environment)
        let threshold = min(500, local.count / 4)
        let deadline = Date().addingTimeInterval(120)
        while first.process.isRunning, Date() < deadline, try view.firstPageCount(prefix: "lib/", atMost: threshold) < threshold {
            usleep(50_000)
        }
        #expect(first.process.isRunning, "the first copy ended before it could be killed: \(first.stderr.suffix(2000))")
        kill(first.process.processIdentifier, SIGKILL)
        first.process.waitForExit(within: 30)
        let atKill = try view.list(prefix: "lib/")
        #expect(atKill.count >= threshold && atKill.count < local.count, "\(atKill.count) objects in the bucket after the kill")
        let killedAfter = clock.lap()

        // Run again: it continues, and ends with everything there and verified.
        let second = try space.run(arguments, environment: environment)
        let secondSeconds = clock.lap()
        #expect(second.status == 0, "\(second.stdout.suffix(3000)) \(second.stderr.suffix(3000))")
        let summary = try Self.object(second.stdout)
        #expect(summary["objects"] as? Int == local.count)
        #expect(summary["verified"] as? Int == local.count)
        #expect((summary["failures"] as? [Any])?.isEmpty == true, "\(summary["failures"] ?? "")")
        #expect(summary["complete"] as? Bool == true)
        #expect(summary["not_referenced"] as? Int == 2)
        let alreadyThere = summary["already_there"] as? Int ?? 0
        let copied = summary["copied"] as? Int ?? 0
        #expect(alreadyThere >= atKill.count, "the first run's \(atKill.count) objects are already there (\(alreadyThere))")
        #expect(copied + alreadyThere == local.count)
        // Its progress log only counts up, to N/N.
        let progress = Self.progressCounts(second.stderr)
        #expect(!progress.isEmpty, "\(second.stderr.suffix(2000))")
        #expect(progress.allSatisfy { $0.total == local.count })
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.done <= $1.done })
        #expect(progress.last?.done == local.count)

        // The bucket holds exactly the library, each object with the local file's MD5 (its
        // ETag), the large one with the multipart ETag of 16 MiB parts, and some read back.
        let listed = try view.list(prefix: "lib/")
        let byPath = Dictionary(listed.map { (String($0.key.dropFirst("lib/".count)), $0) }, uniquingKeysWith: { first, _ in first })
        #expect(Set(byPath.keys) == Set(local))
        let digests = try Self.md5s(of: local.filter { $0 != strayPaths[0] }, under: space.library)
        let mismatched = digests.filter { byPath[$0.key]?.etag != $0.value }.map(\.key)
        #expect(mismatched.isEmpty, "\(mismatched.count) objects whose ETag is not the local MD5: \(mismatched.prefix(3))")
        #expect(byPath.allSatisfy { path, object in object.size == Self.size(of: space.library + "/" + path) })
        let large = try #require(byPath[strayPaths[0]])
        #expect(large.etag.hasSuffix("-5"), "a 66 MiB file goes in five parts: \(large.etag)")
        for path in [strayPaths[0]] + local.shuffled().prefix(10) {
            #expect(try view.get("lib/" + path) == FileManager.default.contents(atPath: space.library + "/" + path), "\(path)")
        }
        let verifiedAfter = clock.lap()

        // A third run sends nothing.
        let third = try space.run(arguments, environment: environment)
        #expect(third.status == 0)
        #expect(try Self.object(third.stdout)["already_there"] as? Int == local.count)
        // On a terminal, a bar instead of log lines, counting up to N/N.
        let terminal = try Self.runOnTerminal(space, ["library", "copy", "--to", "s3://\(bucket)/lib"], environment: environment)
        #expect(terminal.status == 0, "\(terminal.output.suffix(2000))")
        let bars = Self.barCounts(terminal.output)
        #expect(bars.last.map { $0 == (local.count, local.count) } == true, "\(terminal.output.suffix(2000))")
        #expect(bars.allSatisfy { $0.total == local.count })
        #expect(zip(bars, bars.dropFirst()).allSatisfy { $0.done <= $1.done })
        #expect(!terminal.output.contains("copy progress"))
        #expect(terminal.output.split(separator: "\n").contains { $0.contains("already there") && $0.split(separator: " ").contains("\(local.count)") },
                "\(terminal.output.suffix(2000))")

        // The deployment moves to the bucket; its check finds the two stray files only.
        try Self.setLibrary(space, ["url": "s3://\(bucket)/lib"])
        let found = try space.run(["library", "check", "--json"], environment: environment)
        #expect(found.status == 1, "\(found.stdout) \(found.stderr)")
        let report = try Self.object(found.stdout)
        #expect(report["store"] as? String == "s3://\(bucket)/lib/")
        #expect(report["pictures"] as? Int == pictures)
        #expect(report["objects"] as? Int == local.count)
        let orphans = Self.findings(report).filter { $0["problem"] as? String == "orphan" }.compactMap { $0["path"] as? String }
        #expect(Set(orphans) == Set(strayPaths))
        #expect(report["missing"] as? Int == 0 && report["damaged"] as? Int == 0)
        // Removed when old enough (here: any age), then the bucket is clean.
        let removed = try space.run(["library", "check", "--repair", "--orphan-age", "0"], environment: environment)
        #expect(removed.status == 0, "\(removed.stdout) \(removed.stderr)")
        #expect(removed.stdout.contains("orphan   \(strayPaths[0])"))
        #expect(try view.head("lib/" + strayPaths[0]) == 404)
        let clean = try space.run(["library", "check"], environment: environment)
        #expect(clean.status == 0, "\(clean.stdout) \(clean.stderr)")
        #expect(clean.stdout.contains("0 orphans, 0 missing, 0 damaged"))

        // An upload in parts begun and never finished (a process killed while it sent a large
        // original): reported, kept while young, aborted by --repair once old enough.
        let begun = "originals/ef/01/" + String(repeating: "e", count: 64) + ".jpg"
        let started = try gateway.signedRequest("POST", "/\(bucket)/lib/\(begun)?uploads=")
        #expect(started.status == 200, "\(started.text.prefix(300))")
        let unfinished = try space.run(["library", "check"], environment: environment)
        #expect(unfinished.status == 1, "\(unfinished.stdout)")
        #expect(unfinished.stdout.contains("unfinished upload  \(begun), begun "), "\(unfinished.stdout)")
        #expect(unfinished.stdout.contains("0 orphans, 0 missing, 0 damaged, 1 unfinished upload"), "\(unfinished.stdout)")
        #expect(unfinished.stdout.contains("--repair aborts the unfinished uploads"), "\(unfinished.stdout)")
        let keptYoung = try space.run(["library", "check", "--repair"], environment: environment)
        #expect(keptYoung.status == 1 && keptYoung.stdout.contains("\(begun), begun ") && keptYoung.stdout.contains(": kept (younger than --orphan-age"),
                "\(keptYoung.stdout)")
        let aborted = try space.run(["library", "check", "--repair", "--orphan-age", "0"], environment: environment)
        #expect(aborted.status == 0 && aborted.stdout.contains(": aborted"), "\(aborted.stdout)")
        let uploadsLeft = try gateway.signedRequest("GET", "/\(bucket)?uploads=")
        #expect(uploadsLeft.status == 200, "\(uploadsLeft.status) \(uploadsLeft.text.prefix(300))")
        #expect(!uploadsLeft.text.contains("<UploadId>"), "the gateway still lists it: \(uploadsLeft.text.prefix(500))")
        #expect(try space.run(["library", "check"], environment: environment).status == 0)

        // An orphan object and a lost variant are both reported, exit 1.
        let records = try space.records()
        let lostVariant = try #require(records.variants.first { $0.name == "thumb" })
        let orphan = "variants/preview/ab/cd/" + String(repeating: "a", count: 64) + ".jpg"
        try view.put("lib/" + orphan, Data("not a picture's".utf8))
        try view.delete("lib/" + lostVariant.path)
        let broken = try space.run(["library", "check"], environment: environment)
        #expect(broken.status == 1)
        let lines = broken.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("orphan   \(orphan)  15 bytes") }, "\(broken.stdout)")
        #expect(lines.contains("missing  picture \(lostVariant.pictureId)  variant thumb  \(lostVariant.path)"), "\(broken.stdout)")
        #expect(broken.stdout.contains("1 orphan, 1 missing, 0 damaged"))

        // --repair: the young orphan stays (a commit may be on its way), the variant is rendered
        // again from its original, byte for byte what the worker wrote.
        let repaired = try space.run(["library", "check", "--repair"], environment: environment)
        #expect(repaired.status == 1, "the young orphan is left: \(repaired.stdout)")
        #expect(repaired.stdout.contains("orphan   \(orphan)"))
        #expect(repaired.stdout.contains(": kept (younger than --orphan-age 1h00m"), "\(repaired.stdout)")
        #expect(repaired.stdout.contains("missing  picture \(lostVariant.pictureId)  variant thumb  \(lostVariant.path): rerendered"), "\(repaired.stdout)")
        #expect(try view.get("lib/" + lostVariant.path) == FileManager.default.contents(atPath: space.library + "/" + lostVariant.path))
        #expect(try view.head("lib/" + orphan) == 200)
        // A younger age lets it go.
        let young = try space.run(["library", "check", "--repair", "--orphan-age", "0", "--json"], environment: environment)
        #expect(young.status == 0, "\(young.stdout)")
        #expect(Self.findings(try Self.object(young.stdout)).first?["action"] as? String == "removed")
        #expect(try view.head("lib/" + orphan) == 404)
        #expect(try space.run(["library", "check"], environment: environment).status == 0)

        // SIGINT: the files in flight finish, the summary says it was interrupted, exit 2.
        let interrupted = try space.start(["library", "copy", "--to", "s3://\(bucket)/again", "--json"], environment: environment)
        while interrupted.process.isRunning, try view.firstPageCount(prefix: "again/", atMost: 50) < 50 { usleep(50_000) }
        kill(interrupted.process.processIdentifier, SIGINT)
        interrupted.process.waitForExit(within: 60)
        #expect(interrupted.process.terminationStatus == 2, "\(interrupted.stderr.suffix(2000))")
        let partial = try Self.object(interrupted.stdout)
        #expect(partial["interrupted"] as? Bool == true && partial["complete"] as? Bool == false)
        #expect((partial["failures"] as? [Any])?.isEmpty == true)
        #expect(interrupted.stderr.contains("stopping: finishing the files in flight"))
        #expect(try view.list(prefix: "again/").count == (partial["copied"] as? Int ?? -1))

        print("LibraryCopyTests[\(store)]: \(pictures) pictures (\(local.count) files, \(Self.megabytes(local, under: space.library))) "
              + "made in \(made) s; first copy killed after \(killedAfter) s with \(atKill.count) objects in the bucket; "
              + "second copy \(secondSeconds) s (\(copied) copied, \(alreadyThere) already there); checked in \(verifiedAfter) s; "
              + "checks and repairs \(clock.lap()) s")
    }

    @Test("check on a directory: orphans, missing and damaged files; repair renders variants and restores originals from the backup",
          arguments: CatalogKind.available)
    func checkRepairsADirectory(store: CatalogKind) throws {
        let space = try Workspace(concurrency: 2, store: store)
        let backup = space.root + "/backup"
        try Self.setLibrary(space, ["backup_dir": backup])
        try Self.makeLibrary(space, pictures: 8)
        let clean = try space.run(["library", "check"])
        #expect(clean.status == 0, "\(clean.stdout) \(clean.stderr)")
        #expect(clean.stdout.contains("\(space.library): 40 files, 8 pictures with 32 variants in the catalog: 0 orphans, 0 missing, 0 damaged"))

        let records = try space.records()
        let pictures = records.pictures.sorted { ($0.id ?? 0) < ($1.id ?? 0) }
        // Picture 1: a variant lost, another truncated. Picture 2: its original lost, with a
        // backup. Picture 3: its original and a variant lost, with no backup.
        let first = try #require(pictures.first?.id), second = try #require(pictures.dropFirst().first), third = try #require(pictures.dropFirst(2).first)
        let firstVariants = records.variants.filter { $0.pictureId == first }.sorted { $0.name < $1.name }
        let lost = firstVariants[0], truncated = firstVariants[1]
        let thirdVariant = try #require(records.variants.first { $0.pictureId == third.id && $0.name == "thumb" })
        let kept = try #require(FileManager.default.contents(atPath: space.library + "/" + lost.path))
        let keptTruncated = try #require(FileManager.default.contents(atPath: space.library + "/" + truncated.path))
        let keptSecond = try #require(FileManager.default.contents(atPath: space.library + "/" + second.originalPath))
        try FileManager.default.removeItem(atPath: space.library + "/" + lost.path)
        try Self.write(Array(keptTruncated.prefix(100)), to: space.library + "/" + truncated.path)
        try FileManager.default.removeItem(atPath: space.library + "/" + second.originalPath)
        try FileManager.default.removeItem(atPath: space.library + "/" + third.originalPath)
        try FileManager.default.removeItem(atPath: backup + "/" + third.originalPath)
        try FileManager.default.removeItem(atPath: space.library + "/" + thirdVariant.path)
        let orphan = "originals/ee/ee/" + String(repeating: "e", count: 64) + ".png"
        try Self.write(Array("stray".utf8), to: space.library + "/" + orphan)
        // Files that are not the library's are not looked at: a temporary, and anything outside
        // originals/ and variants/.
        try Self.write(Array("tmp".utf8), to: space.library + "/originals/ee/ee/.tmp-darkroom-x")
        try Self.write(Array("notes".utf8), to: space.library + "/README")

        let found = try space.run(["library", "check", "--json"])
        #expect(found.status == 1)
        let report = try Self.object(found.stdout)
        let findings = Self.findings(report).map { "\($0["problem"] ?? "") \($0["picture_id"] ?? "-") \($0["file"] ?? "-") \($0["path"] ?? "")" }
        #expect(findings == [
            "orphan - - \(orphan)",
            "missing \(first) \(lost.name) \(lost.path)",
            "damaged \(first) \(truncated.name) \(truncated.path)",
            "missing \(second.id ?? 0) original \(second.originalPath)",
            "missing \(third.id ?? 0) original \(third.originalPath)",
            "missing \(third.id ?? 0) thumb \(thirdVariant.path)",
        ], "\(found.stdout)")
        #expect(Self.findings(report).allSatisfy { $0["action"] == nil }, "nothing is done without --repair")

        let repaired = try space.run(["library", "check", "--repair"])
        #expect(repaired.status == 1, "the young orphan and picture \(third.id ?? 0) are left: \(repaired.stdout)")
        let lines = repaired.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("orphan   \(orphan)") && $0.contains(": kept (younger than --orphan-age") }, "\(repaired.stdout)")
        #expect(lines.contains { $0.hasPrefix("missing  picture \(first)  variant \(lost.name)  \(lost.path): rerendered") })
        #expect(lines.contains { $0.hasPrefix("damaged  picture \(first)  variant \(truncated.name)  \(truncated.path)") && $0.contains(": rerendered") })
        #expect(lines.contains { $0.hasPrefix("missing  picture \(second.id ?? 0)  original  \(second.originalPath): restored (from library.backup_dir)") })
        #expect(lines.contains { $0.hasPrefix("missing  picture \(third.id ?? 0)  original  \(third.originalPath): unrepaired (not in library.backup_dir") })
        #expect(lines.contains { $0.hasPrefix("missing  picture \(third.id ?? 0)  variant thumb  \(thirdVariant.path): unrepaired (its original is lost too") })
        #expect(FileManager.default.contents(atPath: space.library + "/" + lost.path) == kept)
        #expect(FileManager.default.contents(atPath: space.library + "/" + truncated.path) == keptTruncated)
        #expect(FileManager.default.contents(atPath: space.library + "/" + second.originalPath) == keptSecond)
        #expect(FileManager.default.fileExists(atPath: space.library + "/" + orphan))

        let removed = try space.run(["library", "check", "--repair", "--orphan-age", "0"])
        #expect(removed.status == 1, "picture \(third.id ?? 0) is still left")
        #expect(removed.stdout.contains("orphan   \(orphan)  5 bytes"))
        #expect(!FileManager.default.fileExists(atPath: space.library + "/" + orphan))
        #expect(FileManager.default.fileExists(atPath: space.library + "/originals/ee/ee/.tmp-darkroom-x"))
        #expect(FileManager.default.fileExists(atPath: space.library + "/README"))
        #expect(removed.stdout.contains("1 orphan, 2 missing, 0 damaged; 1 repaired, 2 left"), "\(removed.stdout)")

        // The photo copied back (the same bytes), another --repair renders its variant.
        try Self.write(Array(try #require(FileManager.default.contents(atPath: Self.samplePath(for: third, in: space)))),
                       to: space.library + "/" + third.originalPath)
        let restored = try space.run(["library", "check", "--repair"])
        #expect(restored.status == 0, "\(restored.stdout)")
        #expect(restored.stdout.contains("missing  picture \(third.id ?? 0)  variant thumb  \(thirdVariant.path): rerendered"))
        #expect(try space.run(["library", "check"]).status == 0)
    }

    @Test("copy and check refuse what they cannot use, saying what to do")
    func refusals() throws {
        let space = try Workspace()
        let badAddress = try space.run(["library", "copy", "--to", "s3://Bad_Bucket/x"])
        #expect(badAddress.status == 64)
        #expect(badAddress.stderr.contains("--to must be s3://BUCKET/PREFIX"))
        let noCredentials = try space.run(["library", "copy", "--to", "s3://some-bucket/x"],
                                          environment: ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""])
        #expect(noCredentials.status == 78, "\(noCredentials.stderr)")
        #expect(noCredentials.stderr.contains("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set"), "\(noCredentials.stderr)")
        let badAge = try space.run(["library", "check", "--orphan-age=-1"])
        #expect(badAge.status == 64)
        #expect(badAge.stderr.contains("--orphan-age must be a number of seconds, 0 or more"))
        for command in [["library", "copy"], ["library", "check"]] {
            let help = try space.run(command + ["--help"])
            #expect(help.status == 0)
            #expect(help.stdout.contains("USAGE: darkroom \(command.joined(separator: " "))"))
            #expect(help.stdout.contains("Exit status:"))
        }
    }

    // MARK: - Helpers

    /// The small JPEG samples, each made distinct by bytes after its end (ignored by decoders).
    static let sampleNames = ["hopper.jpg", "FujiFilm_FinePixS1Pro_1.jpg", "issue-exifr-13.jpg", "issue-exifr-59.jpg"]

    /// Makes `pictures` distinct photos, queues them with `darkroom enqueue` and processes them
    /// with `darkroom run --once`: every one a picture with four variants.
    static func makeLibrary(_ space: Workspace, pictures: Int) throws {
        let sources = space.root + "/photos"
        try FileManager.default.createDirectory(atPath: sources, withIntermediateDirectories: true)
        let samples = try sampleNames.map { name in [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.samples + "/" + name))) }
        var paths: [String] = []
        for index in 0..<pictures {
            let path = sources + "/p\(index).jpg"
            try write(samples[index % samples.count] + Array("darkroom-\(index)".utf8), to: path)
            paths.append(path)
        }
        for batch in stride(from: 0, to: paths.count, by: 500) {
            let queued = try space.run(["enqueue"] + paths[batch..<min(batch + 500, paths.count)])
            #expect(queued.status == 0, "\(queued.stderr.suffix(1000))")
        }
        let run = try space.run(["run", "--once", "--no-progress"])
        #expect(run.status == 0, "\(run.stderr.suffix(2000))")
    }

    /// The photo a picture was made from (`photos/p<index>.jpg`, its name in the spool).
    static func samplePath(for picture: PictureRecord, in space: Workspace) -> String {
        space.root + "/photos/" + picture.sourceName
    }

    /// Changes keys of the `library` settings in the workspace's pipeline.json.
    static func setLibrary(_ space: Workspace, _ values: [String: String]) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: space.configPath))
        var settings = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var library = settings["library"] as? [String: Any] ?? [:]
        for (key, value) in values { library[key] = value }
        settings["library"] = library
        try JSONSerialization.data(withJSONObject: settings).write(to: URL(fileURLWithPath: space.configPath))
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// `count` bytes that do not repeat within a part.
    static func pattern(count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        var bytes = [UInt8](repeating: 0, count: count)
        for index in 0..<count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes[index] = UInt8(truncatingIfNeeded: state >> 33)
        }
        return bytes
    }

    static func size(of path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? -1
    }

    static func megabytes(_ paths: [String], under root: String) -> String {
        String(format: "%.0f MB", Double(paths.reduce(0) { $0 + size(of: root + "/" + $1) }) / 1e6)
    }

    /// The MD5 of each file (`md5sum`, a thousand files a run), by relative path.
    static func md5s(of paths: [String], under root: String) throws -> [String: String] {
        var digests: [String: String] = [:]
        for batch in stride(from: 0, to: paths.count, by: 1_000) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/md5sum")
            process.currentDirectoryURL = URL(fileURLWithPath: root)
            process.arguments = Array(paths[batch..<min(batch + 1_000, paths.count)])
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitForExit()
            for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
                let parts = line.split(separator: " ", maxSplits: 1)
                guard parts.count == 2 else { continue }
                digests[String(parts[1].drop { $0 == " " || $0 == "*" })] = String(parts[0])
            }
        }
        return digests
    }

    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text.prefix(500))")
    }

    static func findings(_ report: [String: Any]) -> [[String: Any]] {
        report["findings"] as? [[String: Any]] ?? []
    }

    /// Runs `darkroom ARGS` on a pseudo-terminal (util-linux's `script`), where the progress bar
    /// is drawn: its exit status and everything it wrote.
    static func runOnTerminal(_ space: Workspace, _ arguments: [String], environment extra: [String: String]) throws -> (status: Int32, output: String) {
        let command = ([Workspace.binary] + arguments + ["--config", space.configPath])
            .map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["--quiet", "--return", "--command", command, "/dev/null"]
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        if let postgres = space.postgres { environment["DARKROOM_CATALOG_URL"] = postgres.description }
        environment.merge(extra) { _, new in new }
        process.environment = environment
        let output = space.root + "/terminal-\(UUID().uuidString).out"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: output)
        process.standardError = FileHandle(forWritingAtPath: output)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitForExit()
        return (process.terminationStatus, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    /// `DONE/TOTAL objects` of each drawing of the bar, in order.
    static func barCounts(_ output: String) -> [(done: Int, total: Int)] {
        output.components(separatedBy: "] ").dropFirst().compactMap { drawing in
            let words = drawing.split(separator: " ", maxSplits: 2)
            guard words.count >= 2, words[1].hasPrefix("objects") else { return nil }
            let numbers = words[0].split(separator: "/").compactMap { Int($0) }
            return numbers.count == 2 ? (numbers[0], numbers[1]) : nil
        }
    }

    /// `objects=DONE/TOTAL` of each progress log line, in order.
    static func progressCounts(_ log: String) -> [(done: Int, total: Int)] {
        log.split(separator: "\n").filter { $0.contains("copy progress") }.compactMap { line in
            guard let field = line.split(separator: " ").first(where: { $0.hasPrefix("objects=") }) else { return nil }
            let numbers = field.dropFirst("objects=".count).split(separator: "/").compactMap { Int($0) }
            return numbers.count == 2 ? (numbers[0], numbers[1]) : nil
        }
    }
}

/// The test's own view of the bucket, through curl-signed requests (not Darkroom's client).
struct BucketView {
    let gateway: RadosGateway
    let bucket: String

    /// A request the gateway did not answer as expected.
    struct Refused: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    struct Listed {
        var key: String
        var size: Int
        var etag: String
    }

    /// Every object under `prefix`, all pages.
    func list(prefix: String) throws -> [Listed] {
        var found: [Listed] = []
        var token: String?
        repeat {
            let query = (token.map { "continuation-token=\(Self.encoded($0))&" } ?? "") + "list-type=2&max-keys=1000&prefix=\(Self.encoded(prefix))"
            let answer = try gateway.signedRequest("GET", "/\(bucket)?\(query)")
            guard answer.status == 200 else { throw BucketView.Refused( "listing answered \(answer.status): \(answer.text.prefix(300))") }
            let text = answer.text
            for contents in Self.elements("Contents", in: text) {
                let etag = (Self.elements("ETag", in: contents).first ?? "")
                    .replacingOccurrences(of: "&quot;", with: "").replacingOccurrences(of: "&#34;", with: "").replacingOccurrences(of: "\"", with: "")
                found.append(Listed(key: Self.elements("Key", in: contents).first ?? "", size: Int(Self.elements("Size", in: contents).first ?? "") ?? -1,
                                    etag: etag.lowercased()))
            }
            token = Self.elements("IsTruncated", in: text).first == "true" ? Self.elements("NextContinuationToken", in: text).first : nil
        } while token != nil
        return found
    }

    /// How many objects the first page under `prefix` lists, `atMost` (1 to 1,000) asked for.
    func firstPageCount(prefix: String, atMost: Int) throws -> Int {
        let answer = try gateway.signedRequest("GET", "/\(bucket)?list-type=2&max-keys=\(atMost)&prefix=\(Self.encoded(prefix))")
        return Self.elements("Key", in: answer.text).count
    }

    func get(_ key: String) throws -> Data? {
        let answer = try gateway.signedRequest("GET", "/\(bucket)/\(key)")
        return answer.status == 200 ? answer.body : nil
    }

    func head(_ key: String) throws -> Int {
        try gateway.signedRequest("HEAD", "/\(bucket)/\(key)").status
    }

    func put(_ key: String, _ bytes: Data) throws {
        let answer = try gateway.signedRequest("PUT", "/\(bucket)/\(key)", body: bytes)
        guard answer.status == 200 else { throw BucketView.Refused( "PUT \(key) answered \(answer.status)") }
    }

    func delete(_ key: String) throws {
        let answer = try gateway.signedRequest("DELETE", "/\(bucket)/\(key)")
        guard answer.status == 204 || answer.status == 200 else { throw BucketView.Refused( "DELETE \(key) answered \(answer.status)") }
    }

    /// The text of each `<name>...</name>` in `xml`, XML escapes left as they are.
    static func elements(_ name: String, in xml: String) -> [String] {
        var found: [String] = []
        var rest = xml[...]
        while let open = rest.range(of: "<\(name)>"), let close = rest.range(of: "</\(name)>", range: open.upperBound..<rest.endIndex) {
            found.append(String(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        return found
    }

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")) ?? text
    }
}

/// Seconds between laps, for the timings the test prints.
final class Stopwatch {
    private var last = Date()

    func lap() -> String {
        let now = Date()
        defer { last = now }
        return String(format: "%.1f", now.timeIntervalSince(last))
    }
}
