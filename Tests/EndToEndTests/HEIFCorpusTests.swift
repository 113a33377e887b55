import ChildProcesses
import Foundation
import Testing

/// Every HEIF, HEIC and AVIF file of the corpus through the real binary, each in its own child
/// process with a time limit, so that a crash or a hang inside libheif fails the test instead of
/// ending the test runner.
@Suite("HEIF corpus", .serialized)
struct HEIFCorpusTests {
    /// A hostile file gets this long to fail; a 12 MP HEIC decodes in about a second (debug build).
    static let timeLimit: TimeInterval = 60

    /// HEIF_MANIFEST.tsv's rows under `heif/`, as dictionaries by column name.
    static func rows() -> [[String: String]] {
        guard let text = try? String(contentsOfFile: Corpus.root + "/HEIF_MANIFEST.tsv", encoding: .utf8) else { return [] }
        var lines = text.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        guard !lines.isEmpty else { return [] }
        let header = lines.removeFirst()
        return lines.map { Dictionary(uniqueKeysWithValues: zip(header, $0 + Array(repeating: "", count: max(0, header.count - $0.count)))) }
            .filter { $0["path"]?.hasPrefix("heif/") == true }
    }

    static var corpusPresent: Bool { FileManager.default.fileExists(atPath: Corpus.root + "/HEIF_MANIFEST.tsv") }

    /// Whether libvips (through the same libheif) read the header: the files it refused are the hostile ones.
    static func isHostile(_ row: [String: String]) -> Bool {
        !(row["notes"] ?? "").hasSuffix("libvips 8.14 header: ok")
    }

    /// Runs the binary with a time limit; nil when it had to be killed.
    static func run(_ workspace: Workspace, _ arguments: [String]) throws -> (status: Int32, reason: Process.TerminationReason, stdout: String, stderr: String)? {
        let launched = try workspace.start(arguments)
        let deadline = Date().addingTimeInterval(timeLimit)
        while launched.process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if launched.process.isRunning {
            launched.process.terminate()
            launched.process.waitForExit()
            return nil
        }
        return (launched.process.terminationStatus, launched.process.terminationReason, launched.stdout, launched.stderr)
    }

    @Test("every HEIF corpus file is inspected and rendered upright, agreeing with ExifTool, or fails in one line",
          .enabled(if: corpusPresent, "../shared/corpus/HEIF_MANIFEST.tsv not found"),
          arguments: rows().map { $0["path"] ?? "" })
    func inspectAndRender(path: String) throws {
        guard let row = Self.rows().first(where: { $0["path"] == path }) else { return }
        let file = Corpus.root + "/" + path
        let workspace = try Workspace()
        let out = workspace.root + "/variants"

        let inspected = try #require(try Self.run(workspace, ["inspect", "--json", file]), "\(path): inspect did not end in \(Self.timeLimit) s")
        #expect(inspected.reason == .exit, "\(path): inspect crashed (signal \(inspected.status))")
        let rendered = try #require(try Self.run(workspace, ["render", file, "--out", out]), "\(path): render did not end in \(Self.timeLimit) s")
        #expect(rendered.reason == .exit, "\(path): render crashed (signal \(rendered.status))")

        if Self.isHostile(row) {
            // Refused with one line naming the file, or (when libheif copes) rendered: never a crash.
            if rendered.status != 0 {
                let lines = rendered.stderr.split(separator: "\n")
                #expect(lines.count == 1 && lines.first?.contains(file) == true, "\(path): \(rendered.stderr)")
            }
            return
        }
        #expect(inspected.status == 0, "\(path): \(inspected.stderr)")
        #expect(rendered.status == 0, "\(path): \(rendered.stderr)")

        let reports = try JSONSerialization.jsonObject(with: Data(inspected.stdout.utf8)) as? [[String: Any]]
        let report = try #require(reports?.first, "\(path): no JSON report")
        let metadata = try #require(report["metadata"] as? [String: Any])
        let width = Int(row["width"] ?? "") ?? 0, height = Int(row["height"] ?? "") ?? 0
        let irot = Self.rotation(row["notes"] ?? "")
        let displayed = irot == 90 || irot == 270 ? (height, width) : (width, height)
        #expect(report["display_width"] as? Int == displayed.0 && report["display_height"] as? Int == displayed.1,
                "\(path): displayed \(report["display_width"] ?? "-")x\(report["display_height"] ?? "-"), expected \(displayed)")

        #expect(metadata["make"] as? String == Self.nonEmpty(row["Make"]), "\(path): make")
        #expect(metadata["model"] as? String == Self.nonEmpty(row["Model"]), "\(path): model")
        let time = metadata["capture_time"] as? [String: Any]
        if let original = Self.nonEmpty(row["DateTimeOriginal"]) {
            // "2019:08:21 10:57:23" is the local wall time ExifTool read.
            let local = original.replacingOccurrences(of: ":", with: "-", options: [], range: original.startIndex..<original.index(original.startIndex, offsetBy: 10))
                .replacingOccurrences(of: " ", with: "T")
            #expect((time?["local_time"] as? String)?.hasPrefix(local) == true, "\(path): capture time \(time ?? [:]) vs \(original)")
            if let offset = Self.nonEmpty(row["OffsetTimeOriginal"]) {
                #expect(time?["offset_seconds"] as? Int == Self.seconds(offset), "\(path): offset \(time ?? [:]) vs \(offset)")
            }
        }
        let location = metadata["location"] as? [String: Any]
        if let latitude = Double(row["GPSLatitude"] ?? ""), let longitude = Double(row["GPSLongitude"] ?? "") {
            let lat = try #require(location?["latitude"] as? Double, "\(path): no latitude")
            let long = try #require(location?["longitude"] as? Double, "\(path): no longitude")
            #expect(abs(lat - latitude) <= 1e-6 && abs(long - longitude) <= 1e-6, "\(path): \(lat),\(long) vs \(latitude),\(longitude)")
        }

        // Upright variants: the largest contain variant has the displayed aspect.
        let header = rendered.stdout.split(separator: "\n").first.map(String.init) ?? ""
        #expect(header.contains("shown \(displayed.0)x\(displayed.1)"), "\(path): \(header)")
        // The `mobile` variant (contain 2048) has the displayed aspect, so it is upright.
        let mobile = rendered.stdout.split(separator: "\n").first { $0.split(separator: " ").first == "mobile" }
        let size = mobile?.split(separator: " ").dropFirst().first?.split(separator: "x").compactMap { Int($0) } ?? []
        #expect(size.count == 2, "\(path): no mobile variant in \(rendered.stdout)")
        if size.count == 2 {
            let scale = min(1, 2048 / Double(max(displayed.0, displayed.1)))
            #expect(abs(Double(size[0]) - Double(displayed.0) * scale) <= 1 && abs(Double(size[1]) - Double(displayed.1) * scale) <= 1,
                    "\(path): mobile \(size) is not the displayed \(displayed) scaled")
        }
    }

    /// "-04:00" as -14400.
    static func seconds(_ offset: String) -> Int? {
        let sign = offset.hasPrefix("-") ? -1 : 1
        let parts = offset.dropFirst().split(separator: ":").compactMap { Int($0) }
        return parts.count == 2 ? sign * (parts[0] * 3600 + parts[1] * 60) : nil
    }

    static func nonEmpty(_ text: String?) -> String? { (text?.isEmpty ?? true) ? nil : text }

    /// The `irot` angle the manifest's notes give (0 when none).
    static func rotation(_ notes: String) -> Int {
        guard let range = notes.range(of: "irot: ") else { return 0 }
        return Int(notes[range.upperBound...].prefix { $0.isNumber }) ?? 0
    }
}
