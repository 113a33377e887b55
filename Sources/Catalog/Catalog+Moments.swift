import Foundation
import GRDB
import Moments

/// One page of a moment's pictures in the stable order.
public struct PicturePageRecords: Sendable {
    /// The pictures of this page.
    public var pictures: [PictureRecord]
    /// The cursor of the next page; nil on the last one.
    public var next: PictureCursor?

    /// A page from its pictures and the next page's cursor.
    public init(pictures: [PictureRecord], next: PictureCursor?) {
        self.pictures = pictures
        self.next = next
    }
}

extension Place {
    /// The place in a few words, for the error that refuses its id to another declaration.
    public var summary: String {
        "\(name.map { "\"\($0)\"" } ?? "unnamed") at \(center.latitude), \(center.longitude), radius \(radiusMetres) m"
    }
}

extension Catalog {
    // MARK: Places

    /// Declares a new place for the backend, with its own id or the next free positive one. An
    /// id already taken is refused (`idTaken`), never replaced: `updatePlace` changes a place.
    public func declarePlace(id: Int64?, name: String?, center: Coordinate, radiusMetres: Double) throws(CatalogError) -> Place {
        let place = Place(id: id ?? 0, name: name, center: center, radiusMetres: radiusMetres)
        guard place.isValid else {
            throw CatalogError.refused("a place needs a latitude in -90...90, a longitude in -180...180 and a radius above 0 metres")
        }
        return try write { db in
            var place = place
            if let id {
                guard Declaration.backendIds.contains(id) else { throw MomentError.idOutOfRange(kind: "place", id: id) }
                if let existing = try CatalogMomentStore(db: db).place(id: id) {
                    throw MomentError.idTaken(kind: "place", id: id, existing: existing.summary)
                }
            } else {
                place.id = try Self.nextBackendId(in: "places", db)
            }
            // A plain INSERT: should the id be taken after all, it fails rather than replaces.
            try db.execute(sql: "INSERT INTO places (id, name, latitude, longitude, radius_metres, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                           arguments: [place.id, place.name, center.latitude, center.longitude, radiusMetres, Date().timeIntervalSince1970])
            var store = CatalogMomentStore(db: db)
            try store.savePlace(place)
            return place
        }
    }

    /// Changes an existing place's name and circle; the declared moments held there are
    /// re-evaluated (pictures now inside join, those now outside leave).
    public func updatePlace(id: Int64, name: String?, center: Coordinate, radiusMetres: Double) throws(CatalogError) -> Place {
        let place = Place(id: id, name: name, center: center, radiusMetres: radiusMetres)
        guard place.isValid else {
            throw CatalogError.refused("a place needs a latitude in -90...90, a longitude in -180...180 and a radius above 0 metres")
        }
        return try write { [momentRules] db in
            guard Declaration.backendIds.contains(id) else { throw MomentError.idOutOfRange(kind: "place", id: id) }
            var store = CatalogMomentStore(db: db)
            let events = try MomentEngine(rules: momentRules, naming: GazetteerNaming.standard).updatePlace(place, in: &store)
            try OutboxWriter(db: db, at: Date().timeIntervalSince1970).record(events)
            return place
        }
    }


    /// Every place, by id.
    public func places() throws(CatalogError) -> [Place] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM places ORDER BY id").map {
                Place(id: $0["id"], name: $0["name"], center: Coordinate(latitude: $0["latitude"], longitude: $0["longitude"]),
                      radiusMetres: $0["radius_metres"])
            }
        }
    }

    /// Places whose centre lies within `radiusMetres` of `center`, nearest first.
    public func places(around center: Coordinate, radiusMetres: Double) throws(CatalogError) -> [Place] {
        try read { db in
            PlaceQuery.around(center, radiusMetres: radiusMetres,
                              among: try CatalogMomentStore(db: db).places(around: center, radiusMetres: radiusMetres))
        }
    }

    // MARK: Moments

    /// Declares a moment for the backend at one of the catalog's places (`.create`, refused when
    /// the id is taken) or changes one (`.update`, refused when it does not exist): the
    /// pictures it matches join it, even those uploaded before. An id of nil takes the
    /// next free positive id (a create only).
    public func declareMoment(_ moment: Moment, id: Int64?, as declaration: Declaration = .create) throws(CatalogError) -> (Moment, [MomentEvent]) {
        try write { [momentRules] db in
            var moment = moment
            if declaration == .update && id == nil { throw CatalogError.refused("an update names the moment's id") }
            moment.id = try id ?? Self.nextBackendId(in: "moments", db)
            var store = CatalogMomentStore(db: db)
            guard let place = try store.place(id: moment.placeId) else {
                throw CatalogError.refused("place \(moment.placeId) does not exist; declare it first (`darkroom places add`, or POST /v1/places)")
            }
            let events = try MomentEngine(rules: momentRules, naming: GazetteerNaming.standard).declare(moment, at: place, as: declaration, into: &store)
            try OutboxWriter(db: db, at: Date().timeIntervalSince1970).record(events)
            return (try store.moment(id: moment.id) ?? moment, events)
        }
    }

    /// A moment by id.
    public func moment(id: Int64) throws(CatalogError) -> Moment? {
        try read { db in try CatalogMomentStore(db: db).moment(id: id) }
    }

    /// Every moment (or those of one place), by start time then id.
    public func moments(atPlace placeId: Int64? = nil) throws(CatalogError) -> [Moment] {
        try read { db in
            let store = CatalogMomentStore(db: db)
            let all = try placeId.map { try store.moments(atPlace: $0) } ?? store.allMoments()
            return all.sorted { ($0.start, $0.id) < ($1.start, $1.id) }
        }
    }

    /// A place by id.
    public func place(id: Int64) throws(CatalogError) -> Place? {
        try read { db in try CatalogMomentStore(db: db).place(id: id) }
    }

    /// How many pictures one moment holds.
    public func pictureCount(inMoment id: Int64) throws(CatalogError) -> Int {
        try read { db in try PictureRecord.filter(Column("moment_id") == id).fetchCount(db) }
    }

    /// How many pictures each moment holds.
    public func pictureCounts() throws(CatalogError) -> [Int64: Int] {
        try read { db in
            var counts: [Int64: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT moment_id, COUNT(*) FROM pictures WHERE moment_id IS NOT NULL GROUP BY moment_id") {
                counts[row[0]] = row[1]
            }
            return counts
        }
    }

    /// One page of a moment's pictures in the stable order: capture time, then content hash;
    /// pictures without a time last. Pass the previous page's `next` to continue. A nil id: the
    /// pictures in no moment.
    public func pictures(inMoment id: Int64?, after cursor: PictureCursor?, limit: Int) throws(CatalogError) -> PicturePageRecords {
        try read { db in
            var condition = id == nil ? "moment_id IS NULL" : "moment_id = ?"
            var arguments: StatementArguments = id.map { [$0] } ?? []
            if let cursor {
                if let time = cursor.capturedAt?.timeIntervalSince1970 {
                    condition += " AND (moment_time IS NULL OR moment_time > ? OR (moment_time = ? AND sha256 > ?))"
                    arguments += [time, time, cursor.key]
                } else {
                    condition += " AND moment_time IS NULL AND sha256 > ?"
                    arguments += [cursor.key]
                }
            }
            let rows = try PictureRecord.fetchAll(db, sql: """
                SELECT * FROM pictures WHERE \(condition)
                ORDER BY moment_time IS NULL, moment_time, sha256 LIMIT ?
                """, arguments: arguments + [limit + 1])
            let page = Array(rows.prefix(limit))
            let next = rows.count > limit ? page.last.map { PictureCursor(after: $0.momentFacts) } : nil
            return PicturePageRecords(pictures: page, next: next)
        }
    }

    /// Sets the cover of a moment as its creator: the worker leaves it from then on. A
    /// picture id of nil hands the cover back to the policy.
    public func setCover(momentId: Int64, pictureId: Int64?, by user: String) throws(CatalogError) -> [MomentEvent] {
        try write { [momentRules] db in
            var store = CatalogMomentStore(db: db)
            let events = try MomentEngine(rules: momentRules, naming: GazetteerNaming.standard).setCover(momentId: momentId, pictureId: pictureId, by: user, in: &store)
            try OutboxWriter(db: db, at: Date().timeIntervalSince1970).record(events)
            return events
        }
    }

    /// Names the automatic places and titles the automatic moments that have none (made before
    /// naming, or without the gazetteer); declared ones are never touched.
    public func nameAutomatic() throws(CatalogError) -> NamingOutcome {
        try write { [momentRules] db in
            var store = CatalogMomentStore(db: db)
            return try MomentEngine(rules: momentRules, naming: GazetteerNaming.standard).nameAutomatic(in: &store)
        }
    }

    /// Recomputes every moment from the pictures and declared moments and returns what
    /// changed: nothing, when the incremental state was right. With `apply` false the changes
    /// are computed and rolled back, for a check.
    public func rebuildMoments(apply: Bool) throws(CatalogError) -> [MomentEvent] {
        try write(commit: apply) { [momentRules] db in
            var store = CatalogMomentStore(db: db)
            let events = try MomentEngine(rules: momentRules, naming: GazetteerNaming.standard).rebuild(&store)
            try OutboxWriter(db: db, at: Date().timeIntervalSince1970).record(events)
            return events
        }
    }

    /// The next positive id of a table: the backend's range (the worker's own ids are negative).
    /// One above the highest id in range; when that would leave the range (an id near 2^53 - 1
    /// was declared), the lowest free one. Never `MAX(id) + 1` over the whole table, which
    /// overflows past Int64.max and would name an existing row.
    private static func nextBackendId(in table: String, _ db: Database) throws -> Int64 {
        let range = Declaration.backendIds
        let highest = try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM \(table) WHERE id BETWEEN ? AND ?",
                                         arguments: [range.lowerBound, range.upperBound]) ?? 0
        if highest < range.upperBound { return highest + 1 }
        let gap = try Int64.fetchOne(db, sql: """
            SELECT MIN(t.id) + 1 FROM \(table) t WHERE t.id BETWEEN ? AND ?
              AND NOT EXISTS (SELECT 1 FROM \(table) u WHERE u.id = t.id + 1)
            """, arguments: [range.lowerBound, range.upperBound - 1])
        let lowestFree = try Int64.fetchOne(db, sql: "SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM \(table) WHERE id = 1)") ?? gap
        guard let lowestFree, range.contains(lowestFree) else {
            throw CatalogError.refused("no free id is left in \(table) (1 to \(range.upperBound)); give one explicitly")
        }
        return lowestFree
    }
}
