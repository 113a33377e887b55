import Foundation
import Testing

@Suite("darkroom commands")
struct CommandTests {
    static let samples = Workspace.packageRoot + "/samples"

    @Test func inspectPrintsTimeLocationAndCameraAsJSON() throws {
        let space = try Workspace()
        let result = try space.run(["inspect", "--json", Self.samples + "/Apple_iPhone_6.jpg"])
        #expect(result.status == 0, "\(result.stderr)")
        let reports = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        let metadata = try #require(reports.first?["metadata"] as? [String: Any])
        let location = try #require(metadata["location"] as? [String: Any])
        #expect(abs((location["latitude"] as? Double ?? 0) - 51.7624083) < 1e-6)
        #expect(abs((location["longitude"] as? Double ?? 0) - -0.3178917) < 1e-6)
        #expect(metadata["make"] as? String == "Apple")
        #expect(metadata["model"] as? String == "iPhone 6")
        let time = try #require(metadata["capture_time"] as? [String: Any])
        #expect((time["local_time"] as? String)?.hasPrefix("2014-09-16T14:05:12") == true)
        #expect(reports.first?["width"] as? Int == 3264)
        let thumbHash = try #require(reports.first?["thumb_hash"] as? String)
        #expect((5...25).contains(Data(base64Encoded: thumbHash)?.count ?? 0))
        let text = try space.run(["inspect", Self.samples + "/Apple_iPhone_6.jpg"])
        #expect(text.stdout.contains("placeholder \(thumbHash) (ThumbHash; average colour #"), "\(text.stdout)")
    }

    @Test func inspectInTextNamesEveryFieldAndABadFileFailsOnOneLine() throws {
        let space = try Workspace()
        let notes = space.root + "/notes.txt"
        _ = FileManager.default.createFile(atPath: notes, contents: Data("hello\n".utf8))
        let result = try space.run(["inspect", Self.samples + "/Landscape_6.jpg", notes])
        #expect(result.status == 1)
        #expect(result.stdout.contains("orientation 6"))
        #expect(result.stdout.contains("shown 1800x1200"), "stored 1200x1800, turned by orientation 6")
        let errors = result.stderr.split(separator: "\n")
        #expect(errors.count == 1)
        #expect(errors.first?.contains(notes) == true)
        #expect(errors.first?.contains("not a JPEG, PNG, HEIC, HEIF or AVIF") == true)
    }

    @Test func renderWritesEveryVariantAtItsSizeAndPrintsTheCrop() throws {
        let space = try Workspace()
        let out = space.root + "/out"
        let result = try space.run(["render", Self.samples + "/Canon_EOS5D-MIII__K6A7944.JPG", "--out", out])
        #expect(result.status == 0, "\(result.stderr)")
        let written = space.files(under: out)
        #expect(written == ["Canon_EOS5D-MIII__K6A7944.feed.jpg", "Canon_EOS5D-MIII__K6A7944.mobile.jpg",
                            "Canon_EOS5D-MIII__K6A7944.preview.jpg", "Canon_EOS5D-MIII__K6A7944.thumb.jpg"])
        // 2880x1920 stored, orientation 6: shown 1920x2880.
        #expect(result.stdout.contains("shown 1920x2880"))
        #expect(result.stdout.contains("thumb    320x320"))
        #expect(result.stdout.contains("preview  683x1024"))
        #expect(result.stdout.contains("mobile   1365x2048"))
        #expect(result.stdout.contains("feed     1080x1350"))
        #expect(result.stdout.contains("crop "))
    }

    @Test func enqueueStatusAndRetryWorkTogether() throws {
        let space = try Workspace()
        let notes = space.root + "/notes.txt"
        _ = FileManager.default.createFile(atPath: notes, contents: Data("hello\n".utf8))
        let queued = try space.run(["enqueue", "--author", "u7", Self.samples + "/issue-exifr-13.jpg", notes])
        #expect(queued.status == 0, "\(queued.stderr)")
        #expect(FileManager.default.contents(atPath: space.incoming + "/issue-exifr-13.jpg.json").map { String(decoding: $0, as: UTF8.self) } == #"{"author_id":"u7"}"#)

        let run = try space.run(["run", "--once", "--no-progress"])
        #expect(run.status == 1)
        let status = try space.run(["status", "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        #expect(report["failed"] as? Int == 1)
        #expect((report["counts"] as? [String: Any])?["pictures"] as? Int == 1)
        let failures = try #require(report["failures"] as? [[String: Any]])
        #expect(failures.first?["failed_path"] as? String == "notes.txt")
        #expect(failures.first?["category"] as? String == "unsupported_format")

        let text = try space.run(["status"])
        #expect(text.stdout.contains("failed      1  (unsupported_format 1)"))
        #expect(text.stdout.contains("notes.txt: [unsupported_format] not a JPEG, PNG, HEIC, HEIF or AVIF"))

        let retry = try space.run(["retry", "notes.txt"])
        #expect(retry.status == 0)
        #expect(FileManager.default.fileExists(atPath: space.incoming + "/notes.txt"))
        let unknown = try space.run(["retry", "nothing.jpg"])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("nothing.jpg is not in"))
    }

    @Test func anInvalidConfigurationIsRefusedNamingTheKey() throws {
        let space = try Workspace()
        _ = FileManager.default.createFile(atPath: space.configPath, contents: Data(#"{"imaging": {"pixel_limit": -1}}"#.utf8))
        let result = try space.run(["status"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("imaging.pixel_limit"))
    }

    @Test func helpExplainsEachCommand() throws {
        let space = try Workspace()
        for command in ["run", "enqueue", "status", "retry", "inspect", "render"] {
            let result = try space.run([command, "--help"])
            #expect(result.status == 0)
            #expect(result.stdout.contains("USAGE: darkroom \(command)"), "\(command)")
        }
    }

    @Test(.enabled(if: Corpus.isAvailable, "../shared/corpus not found"))
    func everyCorpusFileIsInspectedOrRefusedOnOneLine() throws {
        let space = try Workspace()
        let paths = try Corpus.images().compactMap { $0["path"] }.map { Corpus.root + "/" + $0 }
        let result = try space.run(["inspect"] + paths)
        let refused = result.stderr.split(separator: "\n")
        let inspected = result.stdout.split(separator: "\n").filter { !$0.hasPrefix(" ") }
        #expect(inspected.count + refused.count == paths.count, "each file is reported once")
        for line in refused {
            #expect(line.hasPrefix("darkroom: " + Corpus.root), "names the file: \(line)")
        }
    }
}
