import Catalog
import Foundation
import GRDB
import PostgresCatalog
import PostgresHarness
import Testing

/// A duplicate that knows what the picture of its bytes lacks (a Takeout file with its sidecar,
/// after a bare copy) completes it, in either store: a trusted time where it had none or only
/// a file time, a location where it had none; never a trusted value replaced. The picture is
/// then placed in moments as if it had arrived with those facts.
@Suite("Duplicates complete the picture of their bytes")
struct DuplicateCompletionTests {
    /// A fresh catalog of `store`, with a way to read its outbox.
    struct Opened {
        let catalog: any CatalogStore
        let outbox: () throws -> [OutboxEvent]
        let close: () -> Void

        init(_ store: CatalogKind) throws {
            switch store {
            case .sqlite:
                let sqlite = try Catalog(path: NSTemporaryDirectory() + "darkroom-dup-" + UUID().uuidString + "/catalog.sqlite")
                catalog = sqlite
                outbox = { try sqlite.read { db in try OutboxEvent.order(Column("id")).fetchAll(db) } }
                close = {}
            case .postgres:
                let postgres = try PostgresCatalog(location: try SharedCluster.freshDatabase(), maximumConnections: 2)
                catalog = postgres
                outbox = { try postgres.allOutboxEvents() }
                close = { postgres.close() }
            }
        }
    }

    static let t0 = 1_561_975_200.0
    static let paris = (latitude: 48.8566, longitude: 2.3522)

    /// A sidecar's time (trusted), as `PictureRecordBuilder` keeps it.
    static func sidecarTime(_ at: Double) -> CaptureFacts.Time {
        .init(capturedAt: at, capturedLocal: "2019-07-01T12:00:00", capturedOffset: 7200, source: "sidecar",
              zoneSource: "recorded", trusted: true)
    }

    /// A file's modification time: untrusted.
    static let fileTime = CaptureFacts.Time(capturedAt: 1_700_000_000, capturedLocal: "2023-11-14T22:13:20", capturedOffset: nil,
                                            source: "file_time", zoneSource: "assumed", trusted: false)

    static func place(_ north: Double, source: String = "sidecar") -> CaptureFacts.Location {
        .init(latitude: paris.latitude + north / 111_195, longitude: paris.longitude, altitude: 35, positionError: nil, source: source)
    }

    /// What a photo's metadata says, with the metadata JSON a picture keeps (`capture_time`,
    /// `location`, `warnings`; the rest left out).
    static func facts(_ name: String, time: CaptureFacts.Time?, location: CaptureFacts.Location?) -> CaptureFacts {
        let timeJSON = time.map { #"{"instant": \#($0.capturedAt), "source": "\#($0.source ?? "")"}"# } ?? "null"
        let locationJSON = location.map { #"{"latitude": \#($0.latitude), "source": "\#($0.source)"}"# } ?? "null"
        let json = #"{"camera_capture_time": null, "camera_location": null, "capture_time": \#(timeJSON), "#
            + #""location": \#(locationJSON), "warnings": ["read \#(name)"]}"#
        return CaptureFacts(time: time, location: location, metadataJson: json, sourceName: name)
    }

    static func picture(_ sha: String, _ facts: CaptureFacts, author: String = "ann") -> PictureRecord {
        var picture = PictureRecord(sha256: sha, sourceName: facts.sourceName, originalPath: "originals/\(sha).jpg",
                                    mimeType: "image/jpeg", byteSize: 100, width: 40, height: 30, displayWidth: 40,
                                    displayHeight: 30, orientation: 1, locationSource: "none",
                                    metadataJson: facts.metadataJson, createdAt: 1)
        picture.setCapture(facts)
        picture.authorId = author
        picture.thumbHash = "th-" + sha
        return picture
    }

    static func job(_ name: String) -> JobRecord {
        JobRecord(sourceName: name, claimPath: "c/\(name)", sha256: nil, outcome: .added, pictureId: nil, attempts: 1,
                  error: nil, sidecarJson: nil, worker: "w", startedAt: 10, finishedAt: 11)
    }

    /// Commits a picture, returning its id.
    static func add(_ picture: PictureRecord, to catalog: any CatalogStore) throws -> Int64 {
        guard case .added(let id, _) = try catalog.commitPicture(picture, variants: [], job: job(picture.sourceName)) else {
            throw CatalogError.other("\(picture.sourceName) was not added")
        }
        return id
    }

    /// Each picture (by hash) with what moments use and the hashes of its moment's pictures.
    static func content(_ catalog: any CatalogStore) throws -> [String: String] {
        var members: [Int64: [String]] = [:]
        var pictures: [PictureRecord] = []
        for moment in try catalog.moments(atPlace: nil) {
            let page = try catalog.pictures(inMoment: moment.id, after: nil, limit: 100)
            members[moment.id] = page.pictures.map(\.sha256).sorted()
        }
        for sha in ["neighbour", "copy", "lone"] {
            if let id = try catalog.picture(sha256: sha)?.id, let picture = try catalog.picture(id: id) { pictures.append(picture) }
        }
        return Dictionary(uniqueKeysWithValues: pictures.map { p in
            (p.sha256, "\(p.momentTime ?? -1) \(p.timeSource ?? "-") \(p.timeTrusted) \(p.capturedOffset ?? -1) "
                + "\(p.latitude ?? -1) \(p.longitude ?? -1) \(p.altitude ?? -1) \(p.locationSource) "
                + (p.momentId.map { members[$0, default: []].joined(separator: ",") } ?? "no moment"))
        })
    }

    static let takeout = facts("Takeout/Google Photos/Photos from 2019/IMG_1003.jpg", time: sidecarTime(t0 + 600), location: place(40))
    static let bare = facts("Copies/copy-of-3.jpg", time: fileTime, location: nil)
    static let neighbour = facts("Takeout/Google Photos/Photos from 2019/IMG_1002.jpg", time: sidecarTime(t0), location: place(0))

    @Test("a bare copy first is completed by its Takeout duplicate and joins its moment, as with the other order",
          arguments: CatalogKind.available)
    func bareCopyCompletedByItsDuplicate(store: CatalogKind) throws {
        // The bare copy first, then its Takeout twin, checked before processing (the early path).
        let first = try Opened(store)
        defer { first.close() }
        let neighbourId = try Self.add(Self.picture("neighbour", Self.neighbour), to: first.catalog)
        let copyId = try Self.add(Self.picture("copy", Self.bare), to: first.catalog)
        let moment = try #require(try first.catalog.picture(id: neighbourId)?.momentId)
        #expect(try first.catalog.picture(id: copyId)?.momentId == nil, "a file time keeps it out of moments")
        let before = try first.outbox().count
        try first.catalog.recordDuplicate(Self.job(Self.takeout.sourceName), of: copyId, facts: Self.takeout)

        let completed = try #require(try first.catalog.picture(id: copyId))
        #expect(completed.capturedAt == Self.t0 + 600 && completed.momentTime == Self.t0 + 600)
        #expect(completed.timeSource == "sidecar" && completed.timeTrusted && completed.capturedOffset == 7200
                && completed.timeZoneSource == "recorded" && completed.capturedLocal == "2019-07-01T12:00:00")
        #expect(completed.latitude == Self.place(40).latitude && completed.longitude == Self.paris.longitude
                && completed.altitude == 35 && completed.locationSource == "sidecar")
        #expect(completed.momentId == moment, "it joins the moment of its neighbour")
        #expect(completed.sourceName == "Copies/copy-of-3.jpg", "the picture stays the first file's")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(completed.metadataJson.utf8)) as? [String: Any])
        #expect((json["capture_time"] as? [String: Any])?["source"] as? String == "sidecar")
        #expect((json["location"] as? [String: Any])?["source"] as? String == "sidecar")
        let warnings = json["warnings"] as? [String] ?? []
        #expect(warnings.first == "read Copies/copy-of-3.jpg")
        #expect(warnings.last == "capture time (sidecar) and location (sidecar) from Takeout/Google Photos/Photos from 2019/IMG_1003.jpg, "
                + "a duplicate of these bytes that had them", "\(warnings)")

        // Webhooks hear of it as of an added picture's move: no picture.removed.
        let events = try first.outbox().dropFirst(before)
        #expect(events.contains { $0.event == .pictureAdded && $0.pictureId == copyId && $0.momentId == moment }, "\(events)")
        #expect(!events.contains { $0.event == .pictureRemoved }, "\(events)")
        #expect(events.allSatisfy { $0.createdAt == 11 })
        let jobs = try first.catalog.latestJob(claimPath: "c/" + Self.takeout.sourceName)
        #expect(jobs?.outcome == .duplicate && jobs?.pictureId == copyId)
        #expect(try first.catalog.rebuildMoments(apply: false).isEmpty, "the moments are what a rebuild makes")

        // The other order: the Takeout file is the picture, the bare copy adds nothing.
        let second = try Opened(store)
        defer { second.close() }
        _ = try Self.add(Self.picture("neighbour", Self.neighbour), to: second.catalog)
        let takeoutId = try Self.add(Self.picture("copy", Self.takeout), to: second.catalog)
        let unchanged = try second.catalog.picture(id: takeoutId)
        let events2 = try second.outbox().count
        try second.catalog.recordDuplicate(Self.job(Self.bare.sourceName), of: takeoutId, facts: Self.bare)
        #expect(try second.catalog.picture(id: takeoutId) == unchanged)
        #expect(try second.outbox().count == events2, "nothing changed, nothing to tell")

        #expect(try Self.content(first.catalog) == Self.content(second.catalog))
    }

    @Test("a duplicate that loses the race inside the commit completes the picture too, and may make its moment",
          arguments: CatalogKind.available)
    func raceInsideCommitCompletes(store: CatalogKind) throws {
        let opened = try Opened(store)
        defer { opened.close() }
        let id = try Self.add(Self.picture("lone", Self.bare), to: opened.catalog)
        let before = try opened.outbox().count
        // The Takeout file was processed in full before its commit found the bytes taken.
        let outcome = try opened.catalog.commitPicture(Self.picture("lone", Self.takeout), variants: [], job: Self.job(Self.takeout.sourceName))
        #expect(outcome == .duplicate(of: id))
        let completed = try #require(try opened.catalog.picture(id: id))
        #expect(completed.momentTime == Self.t0 + 600 && completed.locationSource == "sidecar")
        let moment = try #require(completed.momentId, "alone, it makes an automatic moment")
        let events = try opened.outbox().dropFirst(before)
        #expect(events.map(\.event) == [.momentCreated, .pictureAdded, .momentCoverChanged], "\(events.map(\.event))")
        #expect(events.allSatisfy { $0.momentId == moment })
        #expect(try opened.catalog.moment(id: moment)?.coverPictureId == id)
        #expect(try opened.catalog.rebuildMoments(apply: false).isEmpty)
    }

    @Test("a time or place the picture has from a trusted source is never replaced; what it lacks is still taken",
          arguments: CatalogKind.available)
    func trustedValuesStay(store: CatalogKind) throws {
        let opened = try Opened(store)
        defer { opened.close() }
        // EXIF time, sidecar place: a later duplicate's other sidecar changes nothing.
        let exif = CaptureFacts.Time(capturedAt: Self.t0, capturedLocal: "2019-07-01T12:00:00", capturedOffset: 7200,
                                     source: "exif_original", zoneSource: "recorded", trusted: true)
        let id = try Self.add(Self.picture("neighbour", Self.facts("a.jpg", time: exif, location: Self.place(0))), to: opened.catalog)
        let kept = try opened.catalog.picture(id: id)
        let events = try opened.outbox().count
        let other = Self.facts("b.jpg", time: Self.sidecarTime(Self.t0 + 86_400), location: Self.place(5_000))
        try opened.catalog.recordDuplicate(Self.job("b.jpg"), of: id, facts: other)
        #expect(try opened.catalog.picture(id: id) == kept)
        _ = try opened.catalog.commitPicture(Self.picture("neighbour", other), variants: [], job: Self.job("c.jpg"))
        #expect(try opened.catalog.picture(id: id) == kept, "nor by the race inside the commit")
        #expect(try opened.outbox().count == events)

        // A sidecar time and no place: the duplicate's place is taken, its time is not.
        let timed = try Self.add(Self.picture("copy", Self.facts("d.jpg", time: Self.sidecarTime(Self.t0 + 300), location: nil)),
                                 to: opened.catalog)
        try opened.catalog.recordDuplicate(Self.job("e.jpg"), of: timed, facts: other)
        let placed = try #require(try opened.catalog.picture(id: timed))
        #expect(placed.momentTime == Self.t0 + 300 && placed.timeSource == "sidecar")
        #expect(placed.latitude == Self.place(5_000).latitude && placed.locationSource == "sidecar")
        // A duplicate whose time is untrusted too gives no time; its place is still taken, though
        // the picture stays out of moments.
        let untimed = try Self.add(Self.picture("lone", Self.bare), to: opened.catalog)
        try opened.catalog.recordDuplicate(Self.job("f.jpg"), of: untimed,
                                           facts: Self.facts("f.jpg", time: Self.fileTime, location: Self.place(900)))
        let placedOnly = try #require(try opened.catalog.picture(id: untimed))
        #expect(placedOnly.momentTime == nil && placedOnly.momentId == nil)
        #expect(placedOnly.latitude == Self.place(900).latitude && placedOnly.longitude == Self.paris.longitude
                && placedOnly.locationSource == "sidecar", "the place and its source together")
        #expect(try opened.catalog.rebuildMoments(apply: false).isEmpty)
    }

    @Test("a trusted time whose zone was assumed takes the zone a duplicate knows for the same clock time, as in the other order",
          arguments: CatalogKind.available)
    func assumedZoneTakesTheKnownOne(store: CatalogKind) throws {
        // An old phone's EXIF time without an offset: the bare copy's zone is the default one
        // (UTC here); its Takeout twin's sidecar instant gives the offset (+2 h) for the same
        // clock reading.
        let assumed = CaptureFacts.Time(capturedAt: Self.t0 + 7200, capturedLocal: "2019-07-01T12:00:00", capturedOffset: nil,
                                        source: "exif_original", zoneSource: "assumed", trusted: true)
        let known = CaptureFacts.Time(capturedAt: Self.t0, capturedLocal: "2019-07-01T12:00:00", capturedOffset: 7200,
                                      source: "exif_original", zoneSource: "sidecar", trusted: true)
        let bareCopy = Self.facts("Copies/copy-of-3.jpg", time: assumed, location: nil)
        let twin = Self.facts("Takeout/IMG_1003.jpg", time: known, location: Self.place(40))

        let first = try Opened(store)
        defer { first.close() }
        let id = try Self.add(Self.picture("copy", bareCopy), to: first.catalog)
        try first.catalog.recordDuplicate(Self.job(twin.sourceName), of: id, facts: twin)
        let completed = try #require(try first.catalog.picture(id: id))
        #expect(completed.momentTime == Self.t0 && completed.capturedOffset == 7200 && completed.timeZoneSource == "sidecar")
        #expect(completed.locationSource == "sidecar")

        let second = try Opened(store)
        defer { second.close() }
        let other = try Self.add(Self.picture("copy", twin), to: second.catalog)
        try second.catalog.recordDuplicate(Self.job(bareCopy.sourceName), of: other, facts: bareCopy)
        #expect(try second.catalog.picture(id: other)?.timeZoneSource == "sidecar", "an assumed zone never replaces a known one")
        #expect(try Self.content(first.catalog) == Self.content(second.catalog))

        // Another clock reading is another time: a trusted one stays, however well the other's zone is known.
        let third = try Opened(store)
        defer { third.close() }
        let kept = try Self.add(Self.picture("copy", bareCopy), to: third.catalog)
        var later = known
        later.capturedLocal = "2019-07-01T13:00:00"
        later.capturedAt = Self.t0 + 3600
        try third.catalog.recordDuplicate(Self.job("x.jpg"), of: kept, facts: Self.facts("x.jpg", time: later, location: nil))
        #expect(try third.catalog.picture(id: kept)?.momentTime == Self.t0 + 7200)
    }

    @Test("importing a bare copy, then the Takeout folder with its sidecar, gives the pictures and moments of the other order",
          arguments: CatalogKind.available)
    func importOrderDoesNotMatter(store: CatalogKind) throws {
        /// Three photos of one outing with their Takeout sidecars, and a bare copy of the third.
        func library(_ tree: LibraryTree) throws {
            let folder = "Takeout/Google Photos/Photos from 2019/"
            for i in 1...3 {
                let name = "IMG_100\(i).jpg"
                try tree.write(folder + name, LibraryTree.hopper("d\(i)"))
                try tree.write(folder + name + ".json", text: LibraryTree.takeout(
                    title: name, taken: Self.t0 + Double(i) * 600, geo: near(Self.paris.latitude, Self.paris.longitude, north: Double(i) * 40)))
            }
            try tree.write("Copies/copy-of-3.jpg", LibraryTree.hopper("d3"))
        }
        /// Imports the folders one after the other; each picture's time, place and moment.
        func imported(_ folders: [String]) throws -> (content: [String: String], pictures: [PictureRecord], jobs: [String: Int]) {
            let space = try Workspace(store: store)
            let tree = LibraryTree(space.root + "/lib")
            try library(tree)
            for folder in folders {
                let run = try space.run(["import", tree.root + "/" + folder, "--author", "ann", "--progress", "none"])
                #expect(run.status == 0, "\(folder): \(run.stderr.suffix(1000))")
            }
            let check = try space.run(["moments", "rebuild", "--check"])
            #expect(check.status == 0, "\(check.stdout)")
            let (pictures, jobs, _) = try space.records()
            let members = Dictionary(grouping: pictures.filter { $0.momentId != nil }, by: \.momentId).mapValues { $0.map(\.sha256).sorted() }
            let content = Dictionary(uniqueKeysWithValues: pictures.map { p in
                (p.sha256, "\(p.momentTime ?? -1) \(p.timeSource ?? "-") \(p.latitude ?? -1) \(p.longitude ?? -1) \(p.locationSource) "
                    + (p.momentId.flatMap { members[$0] }?.joined(separator: ",") ?? "no moment"))
            })
            return (content, pictures, Dictionary(grouping: jobs, by: { $0.outcome.rawValue }).mapValues(\.count))
        }

        let copyFirst = try imported(["Copies", "Takeout"])
        let takeoutFirst = try imported(["Takeout", "Copies"])
        #expect(copyFirst.jobs == ["added": 3, "duplicate": 1])
        #expect(takeoutFirst.jobs == ["added": 3, "duplicate": 1])
        let copy = try #require(copyFirst.pictures.first { $0.sourceName.hasSuffix("copy-of-3.jpg") }, "the copy came first")
        #expect(copy.momentTime == Self.t0 + 1800 && copy.timeSource == "sidecar" && copy.timeTrusted)
        #expect(copy.latitude == near(Self.paris.latitude, Self.paris.longitude, north: 120).0 && copy.locationSource == "sidecar")
        #expect(copy.momentId != nil && Set(copyFirst.pictures.map(\.momentId)).count == 1, "all three in one moment")
        #expect(copyFirst.content == takeoutFirst.content)
    }
}
