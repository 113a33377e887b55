import Catalog
import Foundation
import Moments
import PostgresNIO
import PostgresStore

extension PostgresCatalog: CatalogStore {
    /// Declares a new place for the backend, with its own id or the next free positive one; an
    /// id already taken is refused, never replaced.
    public func declarePlace(id: Int64?, name: String?, center: Coordinate, radiusMetres: Double) throws(CatalogError) -> Place {
        var place = Place(id: id ?? 0, name: name, center: center, radiusMetres: radiusMetres)
        guard place.isValid else {
            throw CatalogError.refused("a place needs a latitude in -90...90, a longitude in -180...180 and a radius above 0 metres")
        }
        return try write { session in
            if let id {
                guard Declaration.backendIds.contains(id) else { throw MomentError.idOutOfRange(kind: "place", id: id) }
                if let existing = try PostgresMomentStore(session: session).place(id: id) {
                    throw MomentError.idTaken(kind: "place", id: id, existing: existing.summary)
                }
            } else {
                place.id = try Self.nextBackendId(in: "places", session)
            }
            var store = PostgresMomentStore(session: session, rules: momentRules)
            try store.savePlace(place)
            return place
        }
    }

    /// Declares (`.create`) or changes (`.update`) a moment for the backend at one of the
    /// catalog's places; the pictures it matches join it, even those committed before.
    public func declareMoment(_ moment: Moment, id: Int64?, as declaration: Declaration = .create) throws(CatalogError) -> (Moment, [MomentEvent]) {
        try write { session in
            var moment = moment
            if declaration == .update && id == nil { throw CatalogError.refused("an update names the moment's id") }
            moment.id = try id ?? Self.nextBackendId(in: "moments", session)
            var store = PostgresMomentStore(session: session, rules: momentRules)
            guard let place = try store.place(id: moment.placeId) else {
                throw CatalogError.refused("place \(moment.placeId) does not exist; declare it first (`darkroom places add`, or POST /v1/places)")
            }
            let events = try MomentEngine(rules: momentRules, naming: GazetteerNaming.standard).declare(moment, at: place, as: declaration, into: &store)
            try Self.recordOutbox(events, at: Date().timeIntervalSince1970, session)
            return (try store.moment(id: moment.id) ?? moment, events)
        }
    }

    /// Changes an existing place's name and circle; the declared moments held there are
    /// re-evaluated (pictures now inside join, those now outside leave).
    public func updatePlace(id: Int64, name: String?, center: Coordinate, radiusMetres: Double) throws(CatalogError) -> Place {
        let place = Place(id: id, name: name, center: center, radiusMetres: radiusMetres)
        guard place.isValid else {
            throw CatalogError.refused("a place needs a latitude in -90...90, a longitude in -180...180 and a radius above 0 metres")
        }
        return try write { session in
            guard Declaration.backendIds.contains(id) else { throw MomentError.idOutOfRange(kind: "place", id: id) }
            var store = PostgresMomentStore(session: session, rules: momentRules)
            let events = try MomentEngine(rules: momentRules, naming: GazetteerNaming.standard).updatePlace(place, in: &store)
            try Self.recordOutbox(events, at: Date().timeIntervalSince1970, session)
            return place
        }
    }

    /// Sets the cover of a moment as its creator; nil hands the cover back to the policy.
    public func setCover(momentId: Int64, pictureId: Int64?, by user: String) throws(CatalogError) -> [MomentEvent] {
        try write { session in
            var store = PostgresMomentStore(session: session, rules: momentRules)
            let events = try MomentEngine(rules: momentRules, naming: GazetteerNaming.standard).setCover(momentId: momentId, pictureId: pictureId, by: user, in: &store)
            try Self.recordOutbox(events, at: Date().timeIntervalSince1970, session)
            return events
        }
    }

    /// A place by id.
    public func place(id: Int64) throws(CatalogError) -> Place? {
        try readOne { session in try PostgresMomentStore(session: session).place(id: id) }
    }

    /// How many pictures one moment holds.
    public func pictureCount(inMoment id: Int64) throws(CatalogError) -> Int {
        try readOne { session in Int(try session.value("SELECT COUNT(*) FROM pictures WHERE moment_id = \(id)", as: Int64.self) ?? 0) }
    }

    /// One page of a moment's pictures in the stable order: capture time, then content hash;
    /// pictures without a time last. Pass the previous page's `next` to continue. A nil id: the
    /// pictures in no moment.
    public func pictures(inMoment id: Int64?, after cursor: PictureCursor?, limit: Int) throws(CatalogError) -> PicturePageRecords {
        let inMoment = id.map { "moment_id = \($0)" } ?? "moment_id IS NULL"
        return try read { session in
            let rows: [PostgresRow]
            switch (cursor, cursor?.capturedAt?.timeIntervalSince1970) {
            case (nil, _):
                rows = try session.rows("""
                    SELECT * FROM pictures p WHERE \(unescaped: inMoment) \(unescaped: PostgresMomentStore.stableOrder) LIMIT \(limit + 1)
                    """)
            case (let cursor?, let time?):
                rows = try session.rows("""
                    SELECT * FROM pictures p WHERE \(unescaped: inMoment)
                      AND (moment_time IS NULL OR moment_time > \(time) OR (moment_time = \(time) AND sha256 > \(cursor.key)))
                    \(unescaped: PostgresMomentStore.stableOrder) LIMIT \(limit + 1)
                    """)
            case (let cursor?, nil):
                rows = try session.rows("""
                    SELECT * FROM pictures p WHERE \(unescaped: inMoment) AND moment_time IS NULL AND sha256 > \(cursor.key)
                    \(unescaped: PostgresMomentStore.stableOrder) LIMIT \(limit + 1)
                    """)
            }
            let records = try rows.map { try Self.record(PictureRecord.self, $0) }
            let page = Array(records.prefix(limit))
            let next = records.count > limit ? page.last.map { PictureCursor(after: $0.momentFacts) } : nil
            return PicturePageRecords(pictures: page, next: next)
        }
    }

    /// Every place, by id.
    public func places() throws(CatalogError) -> [Place] {
        try readOne { session in
            try session.rows("SELECT \(unescaped: PostgresMomentStore.placeColumns) FROM places ORDER BY id").map(PostgresMomentStore.place)
        }
    }

    /// Places whose centre lies within `radiusMetres` of `center`, nearest first.
    public func places(around center: Coordinate, radiusMetres: Double) throws(CatalogError) -> [Place] {
        try read { session in
            PlaceQuery.around(center, radiusMetres: radiusMetres,
                              among: try PostgresMomentStore(session: session).places(around: center, radiusMetres: radiusMetres))
        }
    }

    /// A moment by id.
    public func moment(id: Int64) throws(CatalogError) -> Moment? {
        try readOne { session in try PostgresMomentStore(session: session).moment(id: id) }
    }

    /// Every moment (or those of one place), by start time then id.
    public func moments(atPlace placeId: Int64? = nil) throws(CatalogError) -> [Moment] {
        try read { session in
            let store = PostgresMomentStore(session: session)
            let all = try placeId.map { try store.moments(atPlace: $0) } ?? store.allMoments()
            return all.sorted { ($0.start, $0.id) < ($1.start, $1.id) }
        }
    }

    /// How many pictures each moment holds.
    public func pictureCounts() throws(CatalogError) -> [Int64: Int] {
        try readOne { session in
            var counts: [Int64: Int] = [:]
            for row in try session.rows("SELECT moment_id, COUNT(*) FROM pictures WHERE moment_id IS NOT NULL GROUP BY moment_id") {
                let (moment, count) = try row.decode((Int64, Int64).self)
                counts[moment] = Int(count)
            }
            return counts
        }
    }

    /// Names the automatic places and titles the automatic moments that have none (made before
    /// naming, or without the gazetteer); declared ones are never touched.
    public func nameAutomatic() throws(CatalogError) -> NamingOutcome {
        try write(deadlines: .maintenance) { session in
            var store = PostgresMomentStore(session: session, rules: momentRules)
            return try MomentEngine(rules: momentRules, naming: GazetteerNaming.standard).nameAutomatic(in: &store)
        }
    }

    /// Recomputes every moment from the pictures and declared moments and returns what
    /// changed: nothing, when the incremental state was right. With `apply` false the changes
    /// are computed and rolled back, for a check.
    public func rebuildMoments(apply: Bool) throws(CatalogError) -> [MomentEvent] {
        // One transaction over every picture: minutes on a large catalog are no outage.
        try write(commit: apply, deadlines: .maintenance) { session in
            var store = PostgresMomentStore(session: session, rules: momentRules)
            let events = try MomentEngine(rules: momentRules, naming: GazetteerNaming.standard).rebuild(&store)
            try Self.recordOutbox(events, at: Date().timeIntervalSince1970, session)
            return events
        }
    }

    /// Counts of everything in the catalog, as of now.
    public func counts(now: Date = Date()) throws(CatalogError) -> CatalogCounts {
        let instant = now.timeIntervalSince1970
        return try readOne { session in
            let row = try session.rows("""
                SELECT (SELECT COUNT(*) FROM pictures), (SELECT COUNT(*) FROM variants),
                  (SELECT COUNT(*) FROM jobs WHERE outcome = 'added'), (SELECT COUNT(*) FROM jobs WHERE outcome = 'duplicate'),
                  (SELECT COUNT(*) FROM jobs WHERE outcome = 'failed'), (SELECT COUNT(*) FROM moments),
                  (SELECT COUNT(*) FROM places), (SELECT COUNT(*) FROM outbox WHERE delivered_at IS NULL),
                  (SELECT COUNT(*) FROM jobs WHERE finished_at >= \(instant - 60)),
                  (SELECT COUNT(*) FROM jobs WHERE finished_at >= \(instant - 3600))
                """)
            guard let values = try row.first?.decode((Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64).self) else {
                throw CatalogError.other("the counts query returned no row")
            }
            return CatalogCounts(
                pictures: Int(values.0), variants: Int(values.1), jobsAdded: Int(values.2), jobsDuplicate: Int(values.3),
                jobsFailed: Int(values.4), moments: Int(values.5), places: Int(values.6), outboxPending: Int(values.7),
                finishedLastMinute: Int(values.8), finishedLastHour: Int(values.9))
        }
    }

    /// The next positive id of a table: the backend's range (the worker's own ids are negative).
    /// One above the highest id in range; when that would leave the range (an id near 2^53 - 1
    /// was declared), the lowest free one, as in the SQLite catalog.
    private static func nextBackendId(in table: String, _ session: PostgresSession) throws -> Int64 {
        let range = Declaration.backendIds
        let highest = try session.value(PostgresQuery(unsafeSQL: "SELECT MAX(id) FROM \(table) WHERE id BETWEEN 1 AND \(range.upperBound)"),
                                        as: Int64.self) ?? 0
        if highest < range.upperBound { return highest + 1 }
        let lowestFree = try session.value(PostgresQuery(unsafeSQL: """
            SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM \(table) WHERE id = 1) THEN 1 ELSE (
                SELECT MIN(t.id) + 1 FROM \(table) t WHERE t.id BETWEEN 1 AND \(range.upperBound - 1)
                  AND NOT EXISTS (SELECT 1 FROM \(table) u WHERE u.id = t.id + 1)) END
            """), as: Int64.self)
        guard let lowestFree, range.contains(lowestFree) else {
            throw CatalogError.refused("no free id is left in \(table) (1 to \(range.upperBound)); give one explicitly")
        }
        return lowestFree
    }
}
