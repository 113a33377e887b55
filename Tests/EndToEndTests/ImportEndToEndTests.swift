import Catalog
import CatalogImports
import Foundation
import GRDB
import Testing

/// A photo library on disk for the import tests, built from the samples.
struct LibraryTree {
    let root: String

    init(_ root: String) {
        self.root = root
        try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    static func sample(_ name: String) -> [UInt8] {
        [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: Workspace.packageRoot + "/samples/" + name))) ?? Data())
    }

    /// A small photo with no EXIF, made distinct by bytes after its end marker.
    static func hopper(_ tag: String) -> [UInt8] {
        sample("hopper.jpg") + Array(tag.utf8)
    }

    /// Google Takeout's JSON for one photo.
    static func takeout(title: String, taken: Double?, geo: (Double, Double)?, geoExif: (Double, Double)? = nil) -> String {
        func geoObject(_ point: (Double, Double)?) -> String {
            let (lat, long) = point ?? (0, 0)
            return #"{"latitude": \#(lat), "longitude": \#(long), "altitude": 0.0, "latitudeSpan": 0.0, "longitudeSpan": 0.0}"#
        }
        return """
        {"title": "\(title)", "description": "", "imageViews": "3",
         "creationTime": {"timestamp": "1700000000", "formatted": "14 Nov 2023"},
         "photoTakenTime": {"timestamp": "\(Int(taken ?? 0))", "formatted": "..."},
         "geoData": \(geoObject(geo)), "geoDataExif": \(geoObject(geoExif)),
         "url": "https://photos.google.com/photo/x", "googlePhotosOrigin": {"mobileUpload": {"deviceType": "ANDROID_PHONE"}}}
        """
    }

    func write(_ relative: String, _ bytes: [UInt8]) throws {
        let path = root + "/" + relative
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { throw CocoaError(.fileWriteUnknown) }
    }

    func write(_ relative: String, text: String) throws {
        try write(relative, Array(text.utf8))
    }

    func link(_ relative: String, to target: String) throws {
        try FileManager.default.createSymbolicLink(atPath: root + "/" + relative, withDestinationPath: target)
    }

    /// Every file under the tree with its size and modification time: "nothing touched" is this unchanged.
    func fingerprint() -> [String: String] {
        var result: [String: String] = [:]
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [:] }
        while let relative = walker.nextObject() as? String {
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: root + "/" + relative) else { continue }
            result[relative] = "\(attributes[.size] ?? 0) \(attributes[.modificationDate] ?? 0)"
        }
        return result
    }
}

/// The metadata JSON a picture keeps, as a dictionary.
func metadata(_ picture: PictureRecord) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(picture.metadataJson.utf8))) as? [String: Any] ?? [:]
}

@Suite("Import end to end", .serialized)
struct ImportEndToEndTests {
    static let paris = (48.8566, 2.3522)
    static let grenoble = (45.1885, 5.7245)
    static let long = "Screenshot_20190701-110000_A_Very_Long_Application_Name.jpg"

    /// Phone folders, a Takeout export (EXIF stripped, JSON sidecars with its odd names), an XMP
    /// tree, a Darkroom sidecar, duplicates, other files, a broken photo and symlink loops.
    static func makeLibrary(_ tree: LibraryTree, outside: String) throws {
        let t0 = 1_561_975_200.0 // 2019-07-01T10:00:00Z
        try tree.write("Phone/2019/IMG_0001.jpg", LibraryTree.sample("issue-exifr-59.jpg"))
        try tree.write("Phone/2019/IMG_0002.jpg", LibraryTree.sample("issue-exifr-13.jpg"))
        try tree.write("Phone/2019/Burst/IMG_0001 copy.jpg", LibraryTree.sample("issue-exifr-59.jpg"))

        let takeout = "Takeout/Google Photos/Photos from 2019/"
        try tree.write(takeout + "IMG_1001.jpg", LibraryTree.hopper("t1"))
        try tree.write(takeout + "IMG_1001.jpg.json", text: LibraryTree.takeout(title: "IMG_1001.jpg", taken: t0, geo: near(paris.0, paris.1)))
        try tree.write(takeout + "IMG_1001(1).jpg", LibraryTree.hopper("t2"))
        try tree.write(takeout + "IMG_1001.jpg(1).json", text: LibraryTree.takeout(title: "IMG_1001.jpg", taken: t0 + 1200, geo: near(paris.0, paris.1, north: 50)))
        try tree.write(takeout + "IMG_1002.jpg", LibraryTree.hopper("t3"))
        try tree.write(takeout + "IMG_1002.jpg.supplemental-metadata.json",
                       text: LibraryTree.takeout(title: "IMG_1002.jpg", taken: t0 + 2400, geo: nil, geoExif: near(paris.0, paris.1, north: 100)))
        try tree.write(takeout + long, LibraryTree.hopper("t4"))
        try tree.write(takeout + String(long.prefix(46)) + ".json", text: LibraryTree.takeout(title: long, taken: t0 + 3600, geo: near(paris.0, paris.1, north: 150)))
        try tree.write(takeout + "IMG_1003.jpg", LibraryTree.hopper("t5"))
        try tree.write(takeout + "IMG_1003.jpg.json", text: LibraryTree.takeout(title: "IMG_1003.jpg", taken: nil, geo: nil))
        try tree.write(takeout + "metadata.json", text: #"{"title": "Photos from 2019", "date": {"timestamp": "1561975200"}}"#)
        try tree.write(takeout + "VID_1.mp4", [0, 0, 0, 0x18] + Array("ftypmp42".utf8) + [UInt8](repeating: 7, count: 64))

        let xmpHead = #"<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">"#
        let xmpTail = "</rdf:RDF></x:xmpmeta>"
        try tree.write("Lightroom/2019-08-15/DSC_0001.jpg", LibraryTree.hopper("x1"))
        try tree.write("Lightroom/2019-08-15/DSC_0001.xmp", text: xmpHead + #"<rdf:Description xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:DateTimeOriginal="2019-08-15T09:00:00+02:00" exif:GPSLatitude="45,11.31N" exif:GPSLongitude="5,43.47E"/>"# + xmpTail)
        try tree.write("Lightroom/2019-08-15/DSC_0002.jpg", LibraryTree.hopper("x2"))
        try tree.write("Lightroom/2019-08-15/DSC_0002.jpg.xmp", text: xmpHead + #"<rdf:Description xmlns:e="http://ns.adobe.com/exif/1.0/"><e:DateTimeOriginal>2019-08-15T09:20:00+02:00</e:DateTimeOriginal><e:GPSLatitude>45.1890</e:GPSLatitude><e:GPSLongitude>5.7250</e:GPSLongitude></rdf:Description>"# + xmpTail)
        // EXIF says Yosemite in 2015; the XMP disagrees: EXIF wins, the conflict is recorded.
        try tree.write("Lightroom/2019-08-15/DSC_0003.jpg", LibraryTree.sample("issue-exifr-59.jpg") + Array("x3".utf8))
        try tree.write("Lightroom/2019-08-15/DSC_0003.xmp", text: xmpHead + #"<rdf:Description xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:DateTimeOriginal="2019-08-15T09:40:00+02:00" exif:GPSLatitude="45,11.31N" exif:GPSLongitude="5,43.47E"/>"# + xmpTail)

        try tree.write("Family/P1.jpg", LibraryTree.hopper("d1"))
        try tree.write("Family/P1.jpg.json", text: #"{"author_id": "grandma", "taken_at": "2018-12-24T18:00:00+01:00", "latitude": 50.8503, "longitude": 4.3517}"#)

        try tree.write("Misc/notes.txt", text: "shopping list\n")
        try tree.write("Misc/broken.jpg", Array(LibraryTree.sample("Landscape_6.jpg").prefix(2000)))
        try tree.write("Misc/empty.jpg", [])
        try tree.write("Misc/.DS_Store", [0, 0, 0, 1])
        try tree.write("Misc/Thumbs.db", [0xD0, 0xCF])
        try tree.write("Misc/@eaDir/IMG_0001.jpg/SYNOPHOTO_THUMB_XL.jpg", LibraryTree.hopper("thumb"))
        try tree.write("Misc/.hidden/secret.jpg", LibraryTree.hopper("secret"))
        try tree.link("Misc/loop", to: "..")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try Data(LibraryTree.hopper("outside")).write(to: URL(fileURLWithPath: outside + "/elsewhere.jpg"))
        try tree.link("Misc/outside", to: outside)
        try tree.link("Misc/link-to-phone.jpg", to: "../Phone/2019/IMG_0002.jpg")
    }

    /// On PostgreSQL the photos go through the shared queue: placed under `queued/` with their
    /// tickets, processed by the import's own worker, journaled from their jobs.
    @Test(arguments: CatalogKind.available) func aGeneratedLibraryImportsWithTheExpectedCountsTimesPlacesAndMoments(store: CatalogKind) throws {
        let space = try Workspace(store: store)
        let tree = LibraryTree(space.root + "/lib")
        try Self.makeLibrary(tree, outside: space.root + "/elsewhere")
        // One of the library's photos was uploaded through the spool before.
        #expect(try space.run(["enqueue", "--quiet", "--author", "ann", tree.root + "/Phone/2019/IMG_0002.jpg"]).status == 0)
        #expect(try space.run(["run", "--once", "--no-progress"]).status == 0)
        let before = tree.fingerprint()

        let imported = try space.run(["import", tree.root, "--author", "ann", "--progress", "none", "--report", space.root + "/report.json"])
        #expect(imported.status == 1, "a photo failed: \(imported.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: space.root + "/report.json"))) as? [String: Any])
        #expect(report["found"] as? Int == 16)
        #expect(report["imported"] as? Int == 10)
        #expect(report["duplicates"] as? Int == 2, "the burst copy, and the photo uploaded through the spool")
        #expect(report["failed"] as? Int == 1)
        #expect((report["failed_by_reason"] as? [String: [String]])?.values.flatMap { $0 } == ["lib/Misc/broken.jpg"])
        let skipped = try #require(report["skipped_by_type"] as? [String: [String]])
        #expect(skipped["plain text"] == ["lib/Misc/notes.txt"])
        #expect(skipped["an empty file (0 bytes)"] == ["lib/Misc/empty.jpg"])
        #expect(skipped["an MP4 video"] == ["lib/Takeout/Google Photos/Photos from 2019/VID_1.mp4"])
        #expect(skipped.values.flatMap { $0 }.contains("lib/Takeout/Google Photos/Photos from 2019/metadata.json"))
        #expect(report["skipped"] as? Int == 4)
        #expect(report["hidden_or_system"] as? Int == 4, ".DS_Store, Thumbs.db, @eaDir, .hidden")
        let notFollowed = try #require(report["not_followed"] as? [[String: String]])
        #expect(Set(notFollowed.compactMap { $0["path"] }) == ["lib/Misc/loop", "lib/Misc/outside", "lib/Misc/link-to-phone.jpg"])
        #expect(notFollowed.first { $0["path"] == "lib/Misc/loop" }?["reason"]?.hasPrefix("symlink loop") == true)
        #expect(report["sidecars"] as? [String: Int] == ["takeout": 5, "xmp": 3, "darkroom": 1])
        #expect(report["moments_created"] as? Int == 4)
        #expect(imported.stdout.contains("import finished"))
        #expect(tree.fingerprint() == before, "the source is left as it was")

        let pictures = try space.records().pictures
        #expect(pictures.count == 11)
        func picture(_ name: String) throws -> PictureRecord {
            try #require(pictures.first { $0.sourceName.hasSuffix("/" + name) }, "\(name)")
        }
        let p1001 = try picture("IMG_1001.jpg")
        #expect(p1001.capturedAt == 1_561_975_200 && p1001.timeSource == "sidecar" && p1001.timeTrusted)
        #expect(p1001.latitude == Self.paris.0 && p1001.longitude == Self.paris.1 && p1001.locationSource == "sidecar")
        #expect((metadata(p1001)["warnings"] as? [String])?.first?.hasPrefix("Google Takeout sidecar IMG_1001.jpg.json") == true)
        #expect(try picture("IMG_1001(1).jpg").capturedAt == 1_561_976_400, "IMG_1001.jpg(1).json")
        #expect(try picture("IMG_1002.jpg").latitude == near(Self.paris.0, Self.paris.1, north: 100).0, "geoDataExif when geoData is 0, 0")
        #expect(try picture(Self.long).capturedAt == 1_561_978_800, "the JSON name cut at 46 characters")
        let p1003 = try picture("IMG_1003.jpg")
        #expect(p1003.timeTrusted == false && p1003.latitude == nil && p1003.momentId == nil, "Takeout's 0 and (0, 0) mean unknown")
        let dsc1 = try picture("DSC_0001.jpg")
        #expect(dsc1.capturedAt == 1_565_852_400 && dsc1.capturedOffset == 7200)
        #expect(abs((dsc1.latitude ?? 0) - (45 + 11.31 / 60)) < 1e-9)
        #expect((metadata(dsc1)["warnings"] as? [String])?.first?.hasPrefix("XMP sidecar DSC_0001.xmp") == true)
        #expect(try picture("DSC_0002.jpg").latitude == 45.1890, "XMP elements under another prefix, in decimal")
        let dsc3 = try picture("DSC_0003.jpg")
        #expect(dsc3.locationSource == "exif" && abs((dsc3.latitude ?? 0) - 37.746765) < 1e-6, "EXIF wins")
        let conflicts = metadata(dsc3)["conflicts"] as? [String] ?? []
        #expect(conflicts.count == 2 && conflicts.allSatisfy { $0.hasSuffix("EXIF kept") }, "\(conflicts)")
        #expect(try picture("P1.jpg").authorId == "grandma")
        #expect(pictures.filter { $0.authorId == "ann" }.count == 10)

        // Of two copies of one photo, whichever a worker thread took first is the picture.
        func name(_ p: PictureRecord) -> String { (p.sourceName as NSString).lastPathComponent.replacingOccurrences(of: " copy", with: "") }
        let members = Set(Dictionary(grouping: pictures.filter { $0.momentId != nil }, by: \.momentId).values.map { Set($0.map(name)) })
        #expect(members == [["IMG_1001.jpg", "IMG_1001(1).jpg", "IMG_1002.jpg", Self.long], ["IMG_0001.jpg", "DSC_0003.jpg"],
                            ["IMG_0002.jpg"], ["DSC_0001.jpg", "DSC_0002.jpg"], ["P1.jpg"]], "\(members)")
        let check = try space.run(["moments", "rebuild", "--check"])
        #expect(check.status == 0, "\(check.stdout)")

        let journal = try space.importJournal()
        #expect(journal.count == 13)
        #expect(journal.filter { $0.outcome == .added }.count == 10 && journal.filter { $0.outcome == .failed }.count == 1)
        #expect(journal.first { $0.sourcePath.hasSuffix("/IMG_1001(1).jpg") }?.sidecars == #"["takeout:IMG_1001.jpg(1).json"]"#)

        // The same library again adds nothing, and does not retry the failure unless asked.
        let jobs = try space.records().jobs.count
        let again = try space.run(["import", tree.root, "--author", "ann", "--progress", "none", "--report", space.root + "/again.json"])
        #expect(again.status == 0, "\(again.stderr)")
        let second = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: space.root + "/again.json"))) as? [String: Any])
        #expect(second["imported"] as? Int == 0 && second["duplicates"] as? Int == 0)
        #expect(second["already_imported"] as? Int == 12 && second["previously_failed"] as? Int == 1)
        #expect(try space.records().pictures.count == 11)
        #expect(try space.records().jobs.count == jobs, "nothing reprocessed")
        let retried = try space.run(["import", tree.root, "--retry-failed", "--progress", "none"])
        #expect(retried.status == 1 && retried.stdout.contains("1 × JPEG file is truncated"))
        #expect(space.files(under: space.spool).isEmpty, "nothing is left in the spool: \(space.files(under: space.spool))")
    }

    @Test func aDryRunWritesNothing() throws {
        let space = try Workspace()
        let tree = LibraryTree(space.root + "/lib")
        try Self.makeLibrary(tree, outside: space.root + "/elsewhere")
        let before = tree.fingerprint()
        let dry = try space.run(["import", tree.root, "--dry-run", "--progress", "none", "--report", space.root + "/dry.json"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("import --dry-run: 16 files found"))
        #expect(dry.stdout.contains("would import        13"))
        #expect(!FileManager.default.fileExists(atPath: space.catalogPath))
        #expect(!FileManager.default.fileExists(atPath: space.library))
        #expect(tree.fingerprint() == before)

        // After a real import, a dry run reads the journal and still changes nothing.
        _ = try space.run(["import", tree.root, "--progress", "none"])
        let catalogBytes = try Data(contentsOf: URL(fileURLWithPath: space.catalogPath))
        let after = try space.run(["import", tree.root, "--dry-run", "--progress", "none"])
        #expect(after.stdout.contains("would import         0"), "\(after.stdout)")
        #expect(after.stdout.contains("already imported    12"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: space.catalogPath)) == catalogBytes)
    }

    @Test(arguments: CatalogKind.available) func moveDeletesSourcesOnlyAfterTheirCommitAndLinkSharesTheFile(store: CatalogKind) throws {
        let space = try Workspace(store: store)
        let tree = LibraryTree(space.root + "/lib")
        try tree.write("a.jpg", LibraryTree.hopper("m1"))
        try tree.write("b.jpg", LibraryTree.hopper("m2"))
        try tree.write("a.jpg.json", text: #"{"author_id": "ann"}"#)
        try tree.write("broken.jpg", Array(LibraryTree.sample("Landscape_6.jpg").prefix(2000)))
        let moved = try space.run(["import", tree.root, "--move", "--progress", "none"])
        #expect(moved.status == 1)
        #expect(moved.stdout.contains("sources deleted 2"), "\(moved.stdout)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: tree.root)) == ["a.jpg.json", "broken.jpg"],
                "the failed photo and the sidecar stay")
        let pictures = try space.records().pictures
        #expect(pictures.count == 2)
        for picture in pictures {
            #expect(FileManager.default.fileExists(atPath: space.library + "/" + picture.originalPath))
        }

        let linkTree = LibraryTree(space.root + "/lib2")
        try linkTree.write("c.jpg", LibraryTree.hopper("l1"))
        let linked = try space.run(["import", linkTree.root, "--link", "--progress", "none"])
        #expect(linked.status == 0, "\(linked.stderr)")
        #expect(linked.stdout.contains("copied 0, linked 1"))
        let original = try #require(try space.records().pictures.first { $0.sourceName == "lib2/c.jpg" })
        let source = try FileManager.default.attributesOfItem(atPath: linkTree.root + "/c.jpg")
        let stored = try FileManager.default.attributesOfItem(atPath: space.library + "/" + original.originalPath)
        #expect(source[.systemFileNumber] as? Int == stored[.systemFileNumber] as? Int, "one file, two names")
        #expect(FileManager.default.fileExists(atPath: linkTree.root + "/c.jpg"))
        #expect(space.files(under: space.spool).isEmpty, "nothing is left in the spool: \(space.files(under: space.spool))")
    }

    @Test func linkingAcrossFileSystemsCopiesAndSaysSo() throws {
        let space = try Workspace()
        // A folder on another file system than the workspace's library, when the machine has one.
        var workspace = stat()
        var shm = stat()
        guard stat(space.root, &workspace) == 0, stat("/dev/shm", &shm) == 0, workspace.st_dev != shm.st_dev else { return }
        let tree = LibraryTree("/dev/shm/darkroom-import-" + UUID().uuidString)
        defer { try? FileManager.default.removeItem(atPath: tree.root) }
        try tree.write("d.jpg", LibraryTree.hopper("fs1"))
        let run = try space.run(["import", tree.root, "--link", "--progress", "none", "--report", space.root + "/link.json"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("copied 1, linked 0"))
        #expect(run.stdout.contains("is on another file system than the library"))
        #expect(run.stderr.contains("copying instead of linking"))
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: space.root + "/link.json"))) as? [String: Any])
        #expect((report["placement_notes"] as? [String])?.count == 1)
    }

    @Test func importedMomentsAreTheSameAsUploadsOneByOne() throws {
        // Four authors' outings, a bridge photo that merges two of them, and a declared moment.
        let start = 1_714_000_000.0
        let formatter = ISO8601DateFormatter()
        var shots: [Shot] = []
        for i in 0..<8 {
            let p = near(52.52, 13.405, north: Double(i) * 30)
            shots.append(Shot(name: "walk-\(i).jpg", author: "carol", latitude: p.0, longitude: p.1,
                              takenAt: formatter.string(from: Date(timeIntervalSince1970: start + Double(i) * 600))))
        }
        for i in 0..<4 {
            let p = near(52.52, 13.405, north: 400 + Double(i) * 20)
            shots.append(Shot(name: "later-\(i).jpg", author: "carol", latitude: p.0, longitude: p.1,
                              takenAt: formatter.string(from: Date(timeIntervalSince1970: start + 3 * 3600 + Double(i) * 300))))
        }
        // 90 m from the walk's last photo and 100 m from the later one's first, within the time gap of both.
        let bridge = near(52.52, 13.405, north: 300)
        shots.append(Shot(name: "bridge.jpg", author: "carol", latitude: bridge.0, longitude: bridge.1,
                          takenAt: formatter.string(from: Date(timeIntervalSince1970: start + 2 * 3600))))
        for i in 0..<5 {
            shots.append(Shot(name: "party-\(i).jpg", author: i % 2 == 0 ? "dan" : "erin", latitude: 48.8566, longitude: 2.3522,
                              takenAt: "2024-05-07T\(18 + i):15:00+02:00"))
        }
        shots.append(Shot(name: "nowhere.jpg", author: "dan", latitude: nil, longitude: nil, takenAt: "2024-05-07T19:00:00+02:00"))

        func declare(_ space: Workspace) throws {
            #expect(try space.run(["places", "add", "--id", "1", "--name", "Garden", "--lat", "48.8566", "--long", "2.3522", "--rad", "200"]).status == 0)
            #expect(try space.run(["moments", "create", "--id", "10", "--place", "1", "--start", "2024-05-07T18:00:00+02:00",
                                   "--end", "2024-05-07T22:00:00+02:00", "--title", "Party"]).status == 0)
        }
        let base = LibraryTree.sample("hopper.jpg")
        let imported = try Workspace()
        try declare(imported)
        let tree = LibraryTree(imported.root + "/lib")
        for (i, shot) in shots.enumerated() {
            let folder = ["2024/05", "2024/04", "misc"][i % 3]
            try tree.write(folder + "/" + shot.name, base + Array(shot.name.utf8))
            try tree.write(folder + "/" + shot.name + ".json", shot.sidecar)
        }
        let run = try imported.run(["import", tree.root, "--progress", "none"])
        #expect(run.status == 0, "\(run.stderr)")

        let uploaded = try Workspace()
        try declare(uploaded)
        var batches = shots.shuffled()
        while !batches.isEmpty {
            let batch = Array(batches.prefix(5))
            batches.removeFirst(batch.count)
            try dropShots(batch, into: uploaded)
            #expect(try uploaded.run(["run", "--once", "--no-progress"]).status == 0)
        }

        func momentsBySHA(_ space: Workspace) throws -> Set<Set<String>> {
            let catalog = try space.catalog()
            let pictures = try catalog.read { db in try PictureRecord.fetchAll(db) }
            #expect(pictures.count == shots.count)
            return Set(try catalog.moments().map { moment in Set(pictures.filter { $0.momentId == moment.id }.map(\.sha256)) })
        }
        let viaImport = try momentsBySHA(imported)
        #expect(viaImport == (try momentsBySHA(uploaded)))
        #expect(viaImport.map(\.count).sorted() == [5, 13], "carol's walks joined by the bridge photo, and the declared party")
        #expect(try imported.run(["moments", "rebuild", "--check"]).status == 0)
    }
}
