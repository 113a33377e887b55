import Foundation
import GRDB
import Moments

/// The moment state in the catalog's tables, for `MomentEngine`, inside one write transaction.
///
/// Index queries go through the R*Tree tables of migration v2 and return supersets (32-bit
/// float boxes), which the engine filters exactly. Every statement is prepared once per
/// connection and reused (`cachedStatement`): the engine runs a few dozen per photo, and
/// compiling them again each time cost more than running them.
///
/// Invariant: a picture with a `moment_id` is `in_moments`, so queries by moment need not test it.
struct CatalogMomentStore: MomentStore {
    let db: Database

    // MARK: Statements

    private func rows(_ sql: String, _ arguments: StatementArguments = []) throws -> [Row] {
        try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
    }

    private func row(_ sql: String, _ arguments: StatementArguments = []) throws -> Row? {
        try Row.fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
    }

    private func ids(_ sql: String, _ arguments: StatementArguments = []) throws -> [Int64] {
        try Int64.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
    }

    private func double(_ sql: String, _ arguments: StatementArguments) throws -> Double? {
        try Double?.fetchOne(db.cachedStatement(sql: sql), arguments: arguments) ?? nil
    }

    private func execute(_ sql: String, _ arguments: StatementArguments = []) throws {
        try db.cachedStatement(sql: sql).execute(arguments: arguments)
    }

    // MARK: Row mapping

    private static let pictureColumns = "p.id, p.sha256, p.author_id, p.moment_time, p.latitude, p.longitude, p.requested_moment_id, p.cover_score"

    private static func facts(_ row: Row) -> PhotoFacts {
        let latitude: Double? = row[4]
        let longitude: Double? = row[5]
        let time: Double? = row[3]
        return PhotoFacts(
            id: row[0], key: row[1], author: row[2],
            capturedAt: time.map { Date(timeIntervalSince1970: $0) },
            location: latitude.flatMap { lat in longitude.map { Coordinate(latitude: lat, longitude: $0) } },
            requestedMomentId: row[6], coverScore: row[7])
    }

    private func pictures(where condition: String, _ arguments: StatementArguments = []) throws -> [PhotoFacts] {
        try rows("SELECT \(Self.pictureColumns) FROM pictures p WHERE p.in_moments = 1 AND \(condition)", arguments).map(Self.facts)
    }

    private func momentRecord(_ row: Row) throws -> Moment {
        let id: Int64 = row["id"]
        let invitees = try String.fetchAll(db.cachedStatement(sql: "SELECT user_id FROM moment_invitees WHERE moment_id = ?"), arguments: [id])
        return Moment(
            id: id, kind: MomentKind(rawValue: row["kind"]) ?? .automatic, placeId: row["place_id"],
            start: Date(timeIntervalSince1970: row["start_at"]), end: Date(timeIntervalSince1970: row["end_at"]),
            creator: row["creator"], visibility: Visibility(rawValue: row["visibility"]) ?? .private,
            invitees: Set(invitees), title: row["title"], coverPictureId: row["cover_picture_id"],
            coverSource: CoverSource(rawValue: row["cover_source"]) ?? .none, coverReason: row["cover_reason"])
    }

    private static func placeRecord(_ row: Row) -> Place {
        Place(id: row["id"], name: row["name"],
              center: Coordinate(latitude: row["latitude"], longitude: row["longitude"]), radiusMetres: row["radius_metres"])
    }

    // MARK: Lookups

    func picture(id: Int64) throws -> PhotoFacts? {
        try pictures(where: "p.id = ?", [id]).first
    }

    func momentId(ofPicture id: Int64) throws -> Int64? {
        try Int64?.fetchOne(db.cachedStatement(sql: "SELECT moment_id FROM pictures WHERE id = ? AND in_moments = 1"), arguments: [id]) ?? nil
    }

    /// The stable picture order (`PictureOrder`) in SQL: capture time, no time last, then key.
    private static let stableOrder = "ORDER BY p.moment_time IS NULL, p.moment_time, p.sha256, p.id"

    /// Four index probes (one aggregate each, so SQLite's min/max optimisation applies): the
    /// cost does not depend on the size of the moment.
    func digest(ofMoment id: Int64) throws -> MomentDigest {
        let first = try double("SELECT MIN(moment_time) FROM pictures WHERE moment_id = ?", [id])
        let last = try double("SELECT MAX(moment_time) FROM pictures WHERE moment_id = ?", [id])
        return MomentDigest(
            earliest: try pictures(where: "p.moment_id = ? \(Self.stableOrder) LIMIT 1", [id]).first,
            firstCapture: first.map { Date(timeIntervalSince1970: $0) },
            lastCapture: last.map { Date(timeIntervalSince1970: $0) },
            bestScore: try double("SELECT MAX(cover_score) FROM pictures WHERE moment_id = ?", [id]))
    }

    func earliestPicture(inMoment id: Int64, scoringAtLeast minimumScore: Double) throws -> PhotoFacts? {
        try pictures(where: "p.moment_id = ? AND p.cover_score >= ? \(Self.stableOrder) LIMIT 1", [id, minimumScore]).first
    }

    func moment(id: Int64) throws -> Moment? {
        try row("SELECT * FROM moments WHERE id = ?", [id]).map(momentRecord)
    }

    func place(id: Int64) throws -> Place? {
        try row("SELECT * FROM places WHERE id = ?", [id]).map(Self.placeRecord)
    }

    func pictures(inMoment id: Int64) throws -> [PhotoFacts] {
        try pictures(where: "p.moment_id = ?", [id])
    }

    func candidateMoments(ofPicture id: Int64) throws -> Set<Int64> {
        Set(try ids("SELECT moment_id FROM moment_candidates WHERE picture_id = ?", [id]))
    }

    func candidatePictures(ofMoment id: Int64) throws -> Set<Int64> {
        Set(try ids("SELECT picture_id FROM moment_candidates WHERE moment_id = ?", [id]))
    }

    func pictures(requestingMoment id: Int64) throws -> [PhotoFacts] {
        try pictures(where: "p.requested_moment_id = ?", [id])
    }

    func moments(atPlace id: Int64) throws -> [Moment] {
        try rows("SELECT * FROM moments WHERE place_id = ? ORDER BY id", [id]).map(momentRecord)
    }

    // MARK: Index queries

    func declaredMoments(near location: Coordinate, at time: Date, rules: MomentRules) throws -> [PlacedMoment] {
        let t = time.timeIntervalSince1970
        let found = try ids("""
            SELECT DISTINCT moment_id FROM moment_index
            WHERE min_lat <= ? AND max_lat >= ? AND min_lon <= ? AND max_lon >= ? AND min_t <= ? AND max_t >= ?
            """, [location.latitude, location.latitude, location.longitude, location.longitude,
                  t + rules.graceBefore, t - rules.graceAfter])
        return try found.compactMap { id in
            guard let moment = try moment(id: id), let place = try place(id: moment.placeId) else { return nil }
            return PlacedMoment(moment: moment, place: place)
        }
    }

    func automaticNeighbours(of photo: PhotoFacts, rules: MomentRules) throws -> [AutomaticNeighbour] {
        guard let (time, location) = photo.timeAndPlace else { return [] }
        let t = time.timeIntervalSince1970
        var found: [AutomaticNeighbour] = []
        for box in Geo.boundingBoxes(around: location, radiusMetres: rules.automaticRadiusMetres) {
            let rows = try rows("""
                SELECT \(Self.pictureColumns), p.moment_id FROM picture_index i
                JOIN pictures p ON p.id = i.id
                JOIN moments m ON m.id = p.moment_id AND m.kind = 'automatic'
                -- "+author_id": the space-time R*Tree must drive this query; the author index
                -- would read all of a prolific author's pictures for every photo.
                WHERE i.max_lat >= ? AND i.min_lat <= ? AND i.max_lon >= ? AND i.min_lon <= ?
                  AND i.max_t >= ? AND i.min_t <= ? AND +p.author_id IS ? AND p.id <> ?
                """, [box.minLatitude, box.maxLatitude, box.minLongitude, box.maxLongitude,
                       t - rules.automaticTimeGap, t + rules.automaticTimeGap, photo.author, photo.id])
            found += rows.map { AutomaticNeighbour(photo: Self.facts($0), momentId: $0[8]) }
        }
        return found
    }

    func places(containing location: Coordinate) throws -> [Place] {
        try ids("""
            SELECT DISTINCT place_id FROM place_index WHERE min_lat <= ? AND max_lat >= ? AND min_lon <= ? AND max_lon >= ?
            """, [location.latitude, location.latitude, location.longitude, location.longitude]).compactMap { try place(id: $0) }
    }

    func places(around center: Coordinate, radiusMetres: Double) throws -> [Place] {
        var found: Set<Int64> = []
        for box in Geo.boundingBoxes(around: center, radiusMetres: radiusMetres) {
            found.formUnion(try ids("""
                SELECT place_id FROM place_index WHERE max_lat >= ? AND min_lat <= ? AND max_lon >= ? AND min_lon <= ?
                """, [box.minLatitude, box.maxLatitude, box.minLongitude, box.maxLongitude]))
        }
        return try found.sorted().compactMap { try place(id: $0) }
    }

    func pictures(near center: Coordinate, radiusMetres: Double, from: Date, through: Date) throws -> [PhotoFacts] {
        var found: [Int64: PhotoFacts] = [:]
        for box in Geo.boundingBoxes(around: center, radiusMetres: radiusMetres) {
            let rows = try rows("""
                SELECT \(Self.pictureColumns) FROM picture_index i JOIN pictures p ON p.id = i.id
                WHERE i.max_lat >= ? AND i.min_lat <= ? AND i.max_lon >= ? AND i.min_lon <= ? AND i.max_t >= ? AND i.min_t <= ?
                """, [box.minLatitude, box.maxLatitude, box.minLongitude, box.maxLongitude,
                       from.timeIntervalSince1970, through.timeIntervalSince1970])
            for facts in rows.map(Self.facts) { found[facts.id] = facts }
        }
        return Array(found.values)
    }

    func allPictures() throws -> [PhotoFacts] {
        try pictures(where: "1")
    }

    func allMoments() throws -> [Moment] {
        try rows("SELECT * FROM moments ORDER BY id").map(momentRecord)
    }

    // MARK: Mutations

    mutating func savePicture(_ facts: PhotoFacts) throws {
        try execute("""
            UPDATE pictures SET in_moments = 1, author_id = ?, moment_time = ?, latitude = ?, longitude = ?,
              requested_moment_id = ?, cover_score = ? WHERE id = ?
            """, [facts.author, facts.capturedAt?.timeIntervalSince1970, facts.location?.latitude,
                  facts.location?.longitude, facts.requestedMomentId, facts.coverScore, facts.id])
        try execute("DELETE FROM picture_index WHERE id = ?", [facts.id])
        if let (time, location) = facts.timeAndPlace {
            let t = time.timeIntervalSince1970
            try execute("INSERT INTO picture_index VALUES (?, ?, ?, ?, ?, ?, ?)",
                [facts.id, location.latitude, location.latitude, location.longitude, location.longitude, t, t])
        }
    }

    mutating func deletePicture(id: Int64) throws {
        try execute("UPDATE pictures SET in_moments = 0, moment_id = NULL WHERE id = ?", [id])
        try execute("DELETE FROM picture_index WHERE id = ?", [id])
        try execute("DELETE FROM moment_candidates WHERE picture_id = ?", [id])
    }

    /// The next id of the worker's own range: negative, counting down, so that it never meets
    /// the ids the backend gives its places and declared moments. Computed here rather than
    /// in SQL, where `MIN(id) - 1` past Int64.min turns into a float that names an existing row;
    /// the inserts that use it are plain INSERTs, so a taken id fails rather than replaces.
    private func nextWorkerId(in table: String) throws -> Int64 {
        let lowest = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MIN(MIN(id), 0) FROM \(table)")) ?? 0
        let (next, overflow) = lowest.subtractingReportingOverflow(1)
        guard !overflow, next >= -Declaration.backendIds.upperBound else {
            throw CatalogError.refused("no free worker id is left in \(table)")
        }
        return next
    }

    mutating func createPlace(name: String?, center: Coordinate, radiusMetres: Double) throws -> Place {
        let id = try nextWorkerId(in: "places")
        try execute("INSERT INTO places (id, name, latitude, longitude, radius_metres, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            [id, name, center.latitude, center.longitude, radiusMetres, Date().timeIntervalSince1970])
        let place = Place(id: id, name: name, center: center, radiusMetres: radiusMetres)
        try insertPlaceBoxes(place)
        return place
    }

    mutating func savePlace(_ place: Place) throws {
        try execute("""
            INSERT INTO places (id, name, latitude, longitude, radius_metres, created_at) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET name = excluded.name, latitude = excluded.latitude,
              longitude = excluded.longitude, radius_metres = excluded.radius_metres
            """, [place.id, place.name, place.center.latitude, place.center.longitude, place.radiusMetres, Date().timeIntervalSince1970])
        try indexPlace(place)
        // The boxes of declared moments held here follow their place's circle.
        for moment in try moments(atPlace: place.id) { try indexMoment(moment) }
    }

    mutating func createMoment(_ moment: Moment) throws -> Moment {
        let now = Date().timeIntervalSince1970
        var created = moment
        created.id = try nextWorkerId(in: "moments")
        try execute("""
            INSERT INTO moments (id, kind, place_id, start_at, end_at, creator, visibility, title, cover_picture_id,
              cover_source, cover_reason, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [created.id, moment.kind.rawValue, moment.placeId, moment.start.timeIntervalSince1970, moment.end.timeIntervalSince1970,
                  moment.creator, moment.visibility.rawValue, moment.title, moment.coverPictureId,
                             moment.coverSource.rawValue, moment.coverReason, now, now])
        try saveInvitees(created)
        try indexMoment(created)
        return created
    }

    mutating func saveMoment(_ moment: Moment) throws {
        let now = Date().timeIntervalSince1970
        try execute("""
            INSERT INTO moments (id, kind, place_id, start_at, end_at, creator, visibility, title, cover_picture_id,
              cover_source, cover_reason, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET kind = excluded.kind, place_id = excluded.place_id, start_at = excluded.start_at,
              end_at = excluded.end_at, creator = excluded.creator, visibility = excluded.visibility, title = excluded.title,
              cover_picture_id = excluded.cover_picture_id, cover_source = excluded.cover_source,
              cover_reason = excluded.cover_reason, updated_at = excluded.updated_at
            """, [moment.id, moment.kind.rawValue, moment.placeId, moment.start.timeIntervalSince1970,
                  moment.end.timeIntervalSince1970, moment.creator, moment.visibility.rawValue, moment.title,
                             moment.coverPictureId, moment.coverSource.rawValue, moment.coverReason, now, now])
        try saveInvitees(moment)
        try indexMoment(moment)
    }

    mutating func deleteMoment(id: Int64) throws {
        try execute("UPDATE pictures SET moment_id = NULL WHERE moment_id = ?", [id])
        try execute("DELETE FROM moment_candidates WHERE moment_id = ?", [id])
        try execute("DELETE FROM moment_index WHERE moment_id = ?", [id])
        try execute("DELETE FROM moments WHERE id = ?", [id])
    }

    mutating func movePictures(fromMoment source: Int64, toMoment target: Int64) throws {
        try execute("UPDATE pictures SET moment_id = ? WHERE moment_id = ?", [target, source])
    }

    mutating func assign(picture id: Int64, to momentId: Int64?) throws {
        try execute("UPDATE pictures SET moment_id = ? WHERE id = ?", [momentId, id])
    }

    mutating func recordCandidate(picture id: Int64, moment momentId: Int64) throws {
        try execute("INSERT OR IGNORE INTO moment_candidates (moment_id, picture_id) VALUES (?, ?)", [momentId, id])
    }

    mutating func removeCandidate(picture id: Int64, moment momentId: Int64) throws {
        try execute("DELETE FROM moment_candidates WHERE moment_id = ? AND picture_id = ?", [momentId, id])
    }

    // MARK: Index maintenance

    private func saveInvitees(_ moment: Moment) throws {
        try execute("DELETE FROM moment_invitees WHERE moment_id = ?", [moment.id])
        for user in moment.invitees.sorted() {
            try execute("INSERT INTO moment_invitees (moment_id, user_id) VALUES (?, ?)", [moment.id, user])
        }
    }

    /// Replaces a place's boxes. The delete by `place_id` (an auxiliary column) scans the R*Tree,
    /// so a place just created skips it (`insertPlaceBoxes`).
    private func indexPlace(_ place: Place) throws {
        try execute("DELETE FROM place_index WHERE place_id = ?", [place.id])
        try insertPlaceBoxes(place)
    }

    private func insertPlaceBoxes(_ place: Place) throws {
        for box in Geo.boundingBoxes(around: place.center, radiusMetres: place.radiusMetres) {
            try execute("INSERT INTO place_index (min_lat, max_lat, min_lon, max_lon, place_id) VALUES (?, ?, ?, ?, ?)",
                [box.minLatitude, box.maxLatitude, box.minLongitude, box.maxLongitude, place.id])
        }
    }

    /// Only declared moments are looked up by place and time; automatic ones by their pictures,
    /// so they never have boxes (and a kind never changes), and saving one skips the delete,
    /// which scans the R*Tree (`moment_id` is an auxiliary column).
    private func indexMoment(_ moment: Moment) throws {
        guard moment.kind == .declared else { return }
        try execute("DELETE FROM moment_index WHERE moment_id = ?", [moment.id])
        guard let place = try place(id: moment.placeId) else { return }
        for box in Geo.boundingBoxes(around: place.center, radiusMetres: place.radiusMetres) {
            try execute("INSERT INTO moment_index (min_lat, max_lat, min_lon, max_lon, min_t, max_t, moment_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [box.minLatitude, box.maxLatitude, box.minLongitude, box.maxLongitude,
                                       moment.start.timeIntervalSince1970, moment.end.timeIntervalSince1970, moment.id])
        }
    }
}
