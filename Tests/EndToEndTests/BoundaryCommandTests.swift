import Catalog
import Foundation
import Testing

@Suite("The command line at the boundaries")
struct BoundaryCommandTests {
    @Test func idsOutOfRangeAreRefusedAndACreateNeverReplaces() throws {
        let space = try Workspace()
        let circle = ["--lat", "48.8566", "--long", "2.3522", "--rad", "200"]
        let overflow = try space.run(["places", "add", "--id", "9223372036854775807", "--name", "Max"] + circle)
        #expect(overflow.status != 0)
        #expect(overflow.stderr.contains("--id must be at most 9007199254740991"), "\(overflow.stderr)")
        #expect(try space.run(["places", "add", "--id", "9007199254740991", "--name", "Top"] + circle).status == 0)
        #expect(try space.run(["places", "add", "--name", "Next"] + circle).status == 0)
        let taken = try space.run(["places", "add", "--id", "9007199254740991", "--name", "Again"] + circle)
        #expect(taken.status != 0)
        #expect(taken.stderr.contains("place 9007199254740991 already exists"), "\(taken.stderr)")
        let places = try space.catalog().places()
        #expect(places.map(\.name) == ["Next", "Top"])

        let window = ["--place", "1", "--start", "2024-05-07T18:00:00+02:00", "--end", "2024-05-07T20:00:00+02:00"]
        #expect(try space.run(["moments", "create", "--id", "10", "--creator", "mallory", "--visibility", "private"] + window).status == 0)
        let again = try space.run(["moments", "create", "--id", "10", "--creator", "bob"] + window)
        #expect(again.status != 0)
        #expect(again.stderr.contains("moment 10 already exists") && again.stderr.contains("mallory"), "\(again.stderr)")
        #expect(try space.catalog().moment(id: 10)?.creator == "mallory")
        let updated = try space.run(["moments", "update", "10", "--creator", "mallory", "--visibility", "private", "--title", "Dinner"] + window)
        #expect(updated.status == 0, "\(updated.stderr)")
        #expect(try space.catalog().moment(id: 10)?.title == "Dinner")
        #expect(try space.run(["moments", "update", "11"] + window).status != 0)
        #expect(try space.run(["places", "update", "1", "--name", "Moved", "--lat", "48.86", "--long", "2.35", "--rad", "300"]).status == 0)
        #expect(try space.catalog().place(id: 1)?.name == "Moved")
        #expect(try space.run(["places", "update", "2"] + circle).status != 0)
    }

    @Test func aFileNamedWithALineEndWritesOneLogLine() throws {
        let space = try Workspace()
        let forged = "2026-11-24T00:00:00Z info    photo file=forged.jpg outcome=added"
        try space.drop(Workspace.packageRoot + "/samples/" + (try Self.aSample()), as: "evil\n\(forged).jpg")
        let result = try space.run(["run", "--once", "--no-progress"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("2026-11-24T00:00:00Z") }, "\(result.stderr)")
        // The spool renames it to a printable name before it is logged.
        #expect(lines.contains { $0.contains("file=\"evil%0A2026-11-24T00:00:00Z") }, "\(result.stderr)")
    }

    /// A PNG whose IHDR claims 4294967295 × 4294967295 pixels.
    static func hugeHeaderPNG() -> [UInt8] {
        func be32(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
        let ihdr = Array("IHDR".utf8) + be32(.max) + be32(.max) + [8, 2, 0, 0, 0]
        // The CRC is not checked before the size is refused.
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + be32(13) + ihdr + be32(0) + be32(0) + Array("IEND".utf8) + be32(0)
    }

    @Test func aPNGClaiming4294967295PixelsASideIsNamedAsSuchEverywhere() throws {
        let space = try Workspace()
        let path = space.root + "/huge.png"
        _ = FileManager.default.createFile(atPath: path, contents: Data(Self.hugeHeaderPNG()))
        for command in [["inspect", path], ["render", path, "--out", space.root + "/out"]] {
            let result = try space.run(command)
            #expect(result.status != 0)
            #expect(result.stderr.contains("4294967295×4294967295"), "\(command[0]): \(result.stderr)")
            #expect(!result.stderr.contains("-1×-1") && !result.stderr.contains("-1x-1"), "\(command[0]): \(result.stderr)")
        }
        try space.drop(bytes: Self.hugeHeaderPNG(), as: "huge.png")
        #expect(try space.run(["run", "--once", "--no-progress"]).status == 1)
        let reason = try String(contentsOfFile: space.spool + "/failed/huge.png.error.json", encoding: .utf8)
        #expect(reason.contains("4294967295×4294967295"))
    }

    @Test func inspectShowsTheSidecarsTimeAndPlaceInForceAndTheCamerasBesideThem() throws {
        let space = try Workspace()
        let photo = space.root + "/trip.jpg"
        // EXIF: 2019-10-03T09:10:11 at 47.354184, 10.191316.
        try FileManager.default.copyItem(atPath: Workspace.packageRoot + "/samples/issue-exifr-13.jpg", toPath: photo)
        try Data(#"{"taken_at": "2019-10-04T18:00:00+02:00", "latitude": 48.8566, "longitude": 2.3522}"#.utf8)
            .write(to: URL(fileURLWithPath: photo + ".json"))
        let text = try space.run(["inspect", photo])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("2019-10-04T18:00:00") && text.stdout.contains("from sidecar"), "\(text.stdout)")
        #expect(text.stdout.contains("camera took") && text.stdout.contains("2019-10-03T09:10:11"), "\(text.stdout)")
        #expect(text.stdout.contains("camera was") && text.stdout.contains("47.354"), "\(text.stdout)")
        let json = try space.run(["inspect", photo, "--json"])
        let reports = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        let metadata = try #require(reports.first?["metadata"] as? [String: Any])
        #expect(((metadata["camera_capture_time"] as? [String: Any])?["source"] as? String)?.hasPrefix("exif_original") == true)
        #expect((metadata["location"] as? [String: Any])?["source"] as? String == "sidecar")
    }

    static func aSample() throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: Workspace.packageRoot + "/samples")
        return try #require(names.sorted().first { $0.hasSuffix(".jpg") })
    }
}
