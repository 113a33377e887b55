import Catalog
import Foundation
import GRDB
import Testing

/// A photo with no EXIF of its own, made distinct by trailing bytes, and the sidecar that says
/// who took it, where and when.
struct Shot {
    var name: String
    var author: String
    var latitude: Double?
    var longitude: Double?
    var takenAt: String?

    var sidecar: [UInt8] {
        var object: [String: Any] = ["author_id": author]
        if let latitude, let longitude {
            object["latitude"] = latitude
            object["longitude"] = longitude
        }
        if let takenAt { object["taken_at"] = takenAt }
        return [UInt8]((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }
}

func dropShots(_ shots: [Shot], into space: Workspace) throws {
    let base = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Workspace.packageRoot + "/samples/hopper.jpg")))
    for shot in shots {
        try space.drop(bytes: base + Array(shot.name.utf8), as: shot.name)
        try space.drop(bytes: shot.sidecar, as: shot.name + ".json")
    }
}

/// Offsets from a point by metres north and east (small distances).
func near(_ lat: Double, _ long: Double, north: Double = 0, east: Double = 0) -> (Double, Double) {
    (lat + north / 111_195, long + east / (111_195 * cos(lat * .pi / 180)))
}

@Suite("Moments end to end", .serialized)
struct MomentsEndToEndTests {
    @Test func threeOutingsAndADeclaredPrivateMomentEndAsExpected() throws {
        let space = try Workspace()
        // The backend declares a place and a private party there, for alice and her guest bob.
        #expect(try space.run(["places", "add", "--id", "1", "--name", "Garden", "--lat", "48.8566", "--long", "2.3522", "--rad", "200"]).status == 0)
        let created = try space.run(["moments", "create", "--id", "10", "--place", "1", "--start", "2024-05-07T18:00:00+02:00",
                                     "--end", "2024-05-07T22:00:00+02:00", "--creator", "alice", "--visibility", "private",
                                     "--invite", "bob", "--title", "Party"])
        #expect(created.status == 0, "\(created.stderr)")

        let party = near(48.8566, 2.3522, north: 50)
        let coast = (43.2965, 5.3698)
        let hills = (45.1885, 5.7245)
        var shots: [Shot] = []
        // Outing 1: the party, inside the circle and the window (bob's first photo 10 min before the start: grace).
        for (i, time) in ["18:00", "18:30", "19:15", "20:20"].enumerated() {
            shots.append(Shot(name: "party-alice-\(i).jpg", author: "alice", latitude: party.0, longitude: party.1,
                              takenAt: "2024-05-07T\(time):00+02:00"))
        }
        shots.append(Shot(name: "party-bob-0.jpg", author: "bob", latitude: party.0, longitude: party.1, takenAt: "2024-05-07T17:50:00+02:00"))
        shots.append(Shot(name: "party-bob-1.jpg", author: "bob", latitude: party.0, longitude: party.1, takenAt: "2024-05-07T21:10:00+02:00"))
        // A stranger at the same party: a candidate of the private moment, and a moment of her own.
        shots.append(Shot(name: "party-eve-0.jpg", author: "eve", latitude: party.0, longitude: party.1, takenAt: "2024-05-07T19:00:00+02:00"))
        // Outing 2: alice at the coast the next day, three photos within an hour.
        for i in 0..<3 {
            let p = near(coast.0, coast.1, east: Double(i) * 40)
            shots.append(Shot(name: "coast-alice-\(i).jpg", author: "alice", latitude: p.0, longitude: p.1, takenAt: "2024-05-08T10:\(10 + i * 20):00+02:00"))
        }
        // Outing 3: bob in the hills: two photos 30 minutes apart, and one five hours later.
        shots.append(Shot(name: "hills-bob-0.jpg", author: "bob", latitude: hills.0, longitude: hills.1, takenAt: "2024-06-01T09:00:00+02:00"))
        shots.append(Shot(name: "hills-bob-1.jpg", author: "bob", latitude: hills.0, longitude: hills.1, takenAt: "2024-06-01T09:30:00+02:00"))
        shots.append(Shot(name: "hills-bob-2.jpg", author: "bob", latitude: hills.0, longitude: hills.1, takenAt: "2024-06-01T14:30:00+02:00"))
        // No place at all: catalogued, in no moment.
        shots.append(Shot(name: "nowhere-alice.jpg", author: "alice", latitude: nil, longitude: nil, takenAt: "2024-05-07T19:00:00+02:00"))
        try dropShots(shots, into: space)

        let run = try space.run(["run", "--once", "--no-progress"])
        #expect(run.status == 0, "\(run.stderr)")

        let catalog = try space.catalog()
        let pictures = try catalog.read { db in try PictureRecord.fetchAll(db) }
        #expect(pictures.count == shots.count)
        func momentOf(_ name: String) -> Int64? { pictures.first { $0.sourceName == name }?.momentId }
        func members(_ id: Int64?) -> Set<String> { Set(pictures.filter { $0.momentId == id && id != nil }.map(\.sourceName)) }

        #expect(members(10) == ["party-alice-0.jpg", "party-alice-1.jpg", "party-alice-2.jpg", "party-alice-3.jpg", "party-bob-0.jpg", "party-bob-1.jpg"])
        let eveMoment = try #require(momentOf("party-eve-0.jpg"))
        #expect(eveMoment < 0, "eve's photo forms an automatic moment of her own")
        let candidates = try catalog.read { db in try Int64.fetchAll(db, sql: "SELECT moment_id FROM moment_candidates") }
        #expect(candidates == [10], "eve's photo is a candidate of the private party")
        #expect(members(momentOf("coast-alice-0.jpg")) == ["coast-alice-0.jpg", "coast-alice-1.jpg", "coast-alice-2.jpg"])
        #expect(members(momentOf("hills-bob-0.jpg")) == ["hills-bob-0.jpg", "hills-bob-1.jpg"])
        #expect(members(momentOf("hills-bob-2.jpg")) == ["hills-bob-2.jpg"])
        #expect(momentOf("nowhere-alice.jpg") == nil)
        let moments = try catalog.moments()
        #expect(moments.count == 5, "the party, eve's, the coast and two in the hills")
        for moment in moments where moment.kind == .automatic {
            #expect(moment.visibility == .private)
            #expect(moment.coverPictureId != nil)
        }
        // Each moment's cover is one of its pictures, chosen by the policy.
        for moment in moments {
            let cover = try #require(moment.coverPictureId)
            #expect(pictures.first { $0.id == cover }?.momentId == moment.id)
            #expect(moment.coverSource == .policy)
        }
        let events = try catalog.read { db in try OutboxEvent.all(in: db) }
        #expect(events.filter { $0.event == .momentCreated }.count == 5, "moment.created: the declared one and four automatic")
        #expect(events.filter { $0.event == .pictureAdded }.count >= shots.count)
        #expect(Set(events.filter { $0.event == .momentCoverChanged }.compactMap(\.momentId)) == Set(moments.map(\.id)))
        #expect(events.contains { $0.event == .momentCandidate && $0.momentId == 10 })

        // The creator sets the cover; later uploads never change it.
        let bobsPicture = try #require(pictures.first { $0.sourceName == "party-bob-1.jpg" }?.id)
        #expect(try space.run(["moments", "set-cover", "10", "\(bobsPicture)", "--as", "bob"]).status != 0, "only the creator may")
        #expect(try space.run(["moments", "set-cover", "10", "\(bobsPicture)", "--as", "alice"]).status == 0)
        try dropShots([Shot(name: "party-alice-late.jpg", author: "alice", latitude: party.0, longitude: party.1, takenAt: "2024-05-07T18:00:00+02:00")], into: space)
        #expect(try space.run(["run", "--once", "--no-progress"]).status == 0)
        let party10 = try #require(try space.catalog().moment(id: 10))
        #expect(party10.coverPictureId == bobsPicture)
        #expect(party10.coverSource == .creator)

        // The incremental state is what a rebuild from scratch computes.
        let check = try space.run(["moments", "rebuild", "--check"])
        #expect(check.status == 0, "\(check.stdout)")
        #expect(check.stdout.contains("nothing to change"))

        // A picture a person can look at, and map points.
        let html = try space.run(["moments", "export", "--html", space.root + "/site", "--geojson", space.root + "/moments.geojson", "--include-private"])
        #expect(html.status == 0, "\(html.stderr)")
        let page = try String(contentsOfFile: space.root + "/site/index.html", encoding: .utf8)
        #expect(page.contains("Party"))
        #expect(page.components(separatedBy: "<section>").count - 1 == 5)
        // Each picture's placeholder: its ThumbHash, and its average colour behind the image.
        let thumbs = page.components(separatedBy: "<img ").count - 1
        #expect(thumbs > 0 && page.components(separatedBy: "data-thumbhash=\"").count - 1 == thumbs)
        #expect(page.contains("style=\"background:#"))
        let geo = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: space.root + "/moments.geojson"))) as? [String: Any])
        #expect((geo["features"] as? [Any])?.count == 5)
    }

    @Test func manyPhotosOfOneNewMomentOnTwoWorkersMakeOneMoment() throws {
        let space = try Workspace()
        // 40 photos by one author, 8 minutes apart, walking 20 m between shots: every photo links
        // to the next, so in any processing order they end in one automatic moment.
        let start = 1_714_000_000.0
        let formatter = ISO8601DateFormatter()
        let shots = (0..<40).map { i -> Shot in
            let p = near(52.52, 13.405, north: Double(i % 5) * 20, east: Double(i / 5) * 20)
            return Shot(name: "walk-\(i).jpg", author: "carol", latitude: p.0, longitude: p.1,
                        takenAt: formatter.string(from: Date(timeIntervalSince1970: start + Double(i) * 480)))
        }
        try dropShots(shots.shuffled(), into: space)
        let first = try space.start(["run", "--once", "--no-progress"])
        let second = try space.start(["run", "--once", "--no-progress"])
        let logs = first.finish() + second.finish()
        #expect(first.process.terminationStatus == 0, "\(logs)")
        #expect(second.process.terminationStatus == 0, "\(logs)")
        let catalog = try space.catalog()
        let moments = try catalog.moments()
        #expect(moments.count == 1, "one moment, not \(moments.count)")
        let counts = try catalog.pictureCounts()
        #expect(counts[moments.first?.id ?? 0] == shots.count)
        let workers = Set(try catalog.read { db in try JobRecord.fetchAll(db) }.map(\.worker))
        #expect(workers.count == 2, "both processes took part")
        #expect(try space.run(["moments", "rebuild", "--check"]).status == 0)
    }

    @Test func placesAroundAPointAndBadInputsAnswerClearly() throws {
        let space = try Workspace()
        #expect(try space.run(["places", "add", "--name", "Tower", "--lat", "48.8584", "--long", "2.2945", "--rad", "100"]).status == 0)
        #expect(try space.run(["places", "add", "--name", "Louvre", "--lat", "48.8606", "--long", "2.3376", "--rad", "150"]).status == 0)
        let around = try space.run(["places", "around", "--lat", "48.8584", "--long", "2.2950", "--rad", "1000", "--json"])
        let places = try #require(try JSONSerialization.jsonObject(with: Data(around.stdout.utf8)) as? [[String: Any]])
        #expect(places.compactMap { $0["name"] as? String } == ["Tower"])
        let wide = try space.run(["places", "around", "--lat", "48.8584", "--long", "2.2950", "--rad", "5000"])
        #expect(wide.stdout.contains("Tower") && wide.stdout.contains("Louvre"))

        let badLat = try space.run(["places", "around", "--lat", "200", "--long", "0", "--rad", "10"])
        #expect(badLat.status != 0)
        #expect(badLat.stderr.contains("--lat must be between -90 and 90"))
        let badRadius = try space.run(["places", "add", "--lat", "1", "--long", "1", "--rad=-5"])
        #expect(badRadius.stderr.contains("--rad must be a distance in metres above 0"))
        let noPlace = try space.run(["moments", "create", "--place", "99", "--start", "2024-01-01T00:00:00Z", "--end", "2024-01-01T01:00:00Z"])
        #expect(noPlace.status != 0)
        #expect(noPlace.stderr.contains("place 99 does not exist"))
        let backwards = try space.run(["moments", "create", "--place", "1", "--start", "2024-01-02T00:00:00Z", "--end", "2024-01-01T00:00:00Z"])
        #expect(backwards.stderr.contains("--end must not be before --start"))
        let unknown = try space.run(["moments", "show", "12345"])
        #expect(unknown.stderr.contains("moment 12345 does not exist"))
    }
}
