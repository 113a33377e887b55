import Catalog
import Foundation
import Moments
import PostgresNIO
import PostgresStore

/// The moment state in PostgreSQL's tables, for `MomentEngine`, inside one write transaction:
/// the same statements as the SQLite store, with `cube` values under GiST indexes where SQLite
/// has R*Tree tables.
///
/// Invariant, as in SQLite: a picture with a `moment_id` is `in_moments`.
struct PostgresMomentStore: MomentStore {
    let session: PostgresSession
    /// One picture's facts, moment and candidates as this transaction has read or written them:
    /// the engine asks for them several times in a commit, each a round trip otherwise.
    let reads = PictureReads()

    /// What the store has read of single pictures, kept until one of its own writes could
    /// change it. It holds only what the database answered or what a write here set, and lives
    /// as long as the store: one transaction (a retry makes a new store).
    final class PictureReads {
        /// `.some(nil)`: the picture is not in the moments.
        var facts: [Int64: PhotoFacts?] = [:]
        var momentIds: [Int64: Int64?] = [:]
        var candidates: [Int64: Set<Int64>] = [:]
    }

    // MARK: Row mapping

    static let pictureColumns = "p.id, p.sha256, p.author_id, p.moment_time, p.latitude, p.longitude, p.requested_moment_id, p.cover_score"

    static func facts(_ row: PostgresRow) throws -> PhotoFacts {
        let (id, key, author, time, latitude, longitude, requested, score) =
            try row.decode((Int64, String, String?, Double?, Double?, Double?, Int64?, Double).self)
        return PhotoFacts(
            id: id, key: key, author: author,
            capturedAt: time.map { Date(timeIntervalSince1970: $0) },
            location: latitude.flatMap { lat in longitude.map { Coordinate(latitude: lat, longitude: $0) } },
            requestedMomentId: requested, coverScore: score)
    }

    private func pictures(_ query: PostgresQuery) throws -> [PhotoFacts] {
        try session.rows(query).map(Self.facts)
    }

    /// A moment's columns with its invitees in one row.
    private static let momentColumns = """
        m.id, m.kind, m.place_id, m.start_at, m.end_at, m.creator, m.visibility, m.title, m.cover_picture_id,
        m.cover_source, m.cover_reason, ARRAY(SELECT user_id FROM moment_invitees i WHERE i.moment_id = m.id ORDER BY user_id)
        """

    static func moment(_ row: PostgresRow) throws -> Moment {
        let (id, kind, placeId, start, end, creator, visibility, title, cover, coverSource, coverReason, invitees) =
            try row.decode((Int64, String, Int64, Double, Double, String?, String, String?, Int64?, String, String?, [String]).self)
        return Moment(
            id: id, kind: MomentKind(rawValue: kind) ?? .automatic, placeId: placeId,
            start: Date(timeIntervalSince1970: start), end: Date(timeIntervalSince1970: end),
            creator: creator, visibility: Visibility(rawValue: visibility) ?? .private,
            invitees: Set(invitees), title: title, coverPictureId: cover,
            coverSource: CoverSource(rawValue: coverSource) ?? .none, coverReason: coverReason)
    }

    private func moments(_ condition: String, _ binds: PostgresBindings = PostgresBindings()) throws -> [Moment] {
        try session.rows(PostgresQuery(unsafeSQL: "SELECT \(Self.momentColumns) FROM moments m \(condition)", binds: binds)).map(Self.moment)
    }

    static let placeColumns = "id, name, latitude, longitude, radius_metres"

    static func place(_ row: PostgresRow) throws -> Place {
        let (id, name, latitude, longitude, radius) = try row.decode((Int64, String?, Double, Double, Double).self)
        return Place(id: id, name: name, center: Coordinate(latitude: latitude, longitude: longitude), radiusMetres: radius)
    }

    // MARK: Lookups

    func picture(id: Int64) throws -> PhotoFacts? {
        if let known = reads.facts[id] { return known }
        let facts = try pictures("SELECT \(unescaped: Self.pictureColumns) FROM pictures p WHERE p.in_moments AND p.id = \(id)").first
        reads.facts[id] = .some(facts)
        return facts
    }

    func momentId(ofPicture id: Int64) throws -> Int64? {
        if let known = reads.momentIds[id] { return known }
        let momentId = try session.value("SELECT moment_id FROM pictures WHERE id = \(id) AND in_moments", as: Int64.self)
        reads.momentIds[id] = .some(momentId)
        return momentId
    }

    /// The stable picture order (`PictureOrder`) in SQL: capture time, no time last, then key.
    static let stableOrder = "ORDER BY p.moment_time IS NULL, p.moment_time, p.sha256, p.id"

    func digest(ofMoment id: Int64) throws -> MomentDigest {
        let rows = try session.rows("""
            SELECT MIN(moment_time), MAX(moment_time), MAX(cover_score) FROM pictures WHERE moment_id = \(id)
            """)
        let (first, last, best) = try rows.first?.decode((Double?, Double?, Double?).self) ?? (nil, nil, nil)
        return MomentDigest(
            earliest: try pictures("""
                SELECT \(unescaped: Self.pictureColumns) FROM pictures p WHERE p.moment_id = \(id) \(unescaped: Self.stableOrder) LIMIT 1
                """).first,
            firstCapture: first.map { Date(timeIntervalSince1970: $0) },
            lastCapture: last.map { Date(timeIntervalSince1970: $0) },
            bestScore: best)
    }

    func earliestPicture(inMoment id: Int64, scoringAtLeast minimumScore: Double) throws -> PhotoFacts? {
        try pictures("""
            SELECT \(unescaped: Self.pictureColumns) FROM pictures p WHERE p.moment_id = \(id) AND p.cover_score >= \(minimumScore)
            \(unescaped: Self.stableOrder) LIMIT 1
            """).first
    }

    func moment(id: Int64) throws -> Moment? {
        var binds = PostgresBindings()
        binds.append(id)
        return try moments("WHERE m.id = $1", binds).first
    }

    func place(id: Int64) throws -> Place? {
        try session.rows("SELECT \(unescaped: Self.placeColumns) FROM places WHERE id = \(id)").first.map(Self.place)
    }

    func pictures(inMoment id: Int64) throws -> [PhotoFacts] {
        try pictures("SELECT \(unescaped: Self.pictureColumns) FROM pictures p WHERE p.moment_id = \(id)")
    }

    func candidateMoments(ofPicture id: Int64) throws -> Set<Int64> {
        if let known = reads.candidates[id] { return known }
        let candidates = Set(try session.values("SELECT moment_id FROM moment_candidates WHERE picture_id = \(id)", as: Int64.self))
        reads.candidates[id] = candidates
        return candidates
    }

    func candidatePictures(ofMoment id: Int64) throws -> Set<Int64> {
        Set(try session.values("SELECT picture_id FROM moment_candidates WHERE moment_id = \(id)", as: Int64.self))
    }

    func pictures(requestingMoment id: Int64) throws -> [PhotoFacts] {
        try pictures("SELECT \(unescaped: Self.pictureColumns) FROM pictures p WHERE p.in_moments AND p.requested_moment_id = \(id)")
    }

    func moments(atPlace id: Int64) throws -> [Moment] {
        var binds = PostgresBindings()
        binds.append(id)
        return try moments("WHERE m.place_id = $1 ORDER BY m.id", binds)
    }

    // MARK: Index queries

    func declaredMoments(near location: Coordinate, at time: Date, rules: MomentRules) throws -> [PlacedMoment] {
        let t = time.timeIntervalSince1970
        let low = [location.latitude, location.longitude, t - rules.graceAfter]
        let high = [location.latitude, location.longitude, t + rules.graceBefore]
        let found = try session.values("""
            SELECT DISTINCT moment_id FROM moment_boxes WHERE box && cube(\(low)::float8[], \(high)::float8[]) ORDER BY moment_id
            """, as: Int64.self)
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
            let low = [box.minLatitude, box.minLongitude, t - rules.automaticTimeGap]
            let high = [box.maxLatitude, box.maxLongitude, t + rules.automaticTimeGap]
            let rows = try session.rows("""
                SELECT \(unescaped: Self.pictureColumns), p.moment_id FROM pictures p
                JOIN moments m ON m.id = p.moment_id AND m.kind = 'automatic'
                WHERE p.position && cube(\(low)::float8[], \(high)::float8[]) AND p.position IS NOT NULL
                  AND p.author_id IS NOT DISTINCT FROM \(photo.author) AND p.id <> \(photo.id)
                """)
            for row in rows {
                let momentId = try row.decode((Int64, String, String?, Double?, Double?, Double?, Int64?, Double, Int64).self).8
                found.append(AutomaticNeighbour(photo: try Self.facts(row), momentId: momentId))
            }
        }
        return found
    }

    func places(containing location: Coordinate) throws -> [Place] {
        let point = [location.latitude, location.longitude]
        return try session.rows("""
            SELECT \(unescaped: Self.placeColumns) FROM places WHERE id IN (
                SELECT place_id FROM place_boxes WHERE box && cube(\(point)::float8[], \(point)::float8[]))
            ORDER BY id
            """).map(Self.place)
    }

    func places(around center: Coordinate, radiusMetres: Double) throws -> [Place] {
        var found: [Int64: Place] = [:]
        for box in Geo.boundingBoxes(around: center, radiusMetres: radiusMetres) {
            let low = [box.minLatitude, box.minLongitude]
            let high = [box.maxLatitude, box.maxLongitude]
            for place in try session.rows("""
                SELECT \(unescaped: Self.placeColumns) FROM places WHERE id IN (
                    SELECT place_id FROM place_boxes WHERE box && cube(\(low)::float8[], \(high)::float8[]))
                """).map(Self.place) {
                found[place.id] = place
            }
        }
        return found.keys.sorted().compactMap { found[$0] }
    }

    func pictures(near center: Coordinate, radiusMetres: Double, from: Date, through: Date) throws -> [PhotoFacts] {
        var found: [Int64: PhotoFacts] = [:]
        for box in Geo.boundingBoxes(around: center, radiusMetres: radiusMetres) {
            let low = [box.minLatitude, box.minLongitude, from.timeIntervalSince1970]
            let high = [box.maxLatitude, box.maxLongitude, through.timeIntervalSince1970]
            for facts in try pictures("""
                SELECT \(unescaped: Self.pictureColumns) FROM pictures p
                WHERE p.position && cube(\(low)::float8[], \(high)::float8[]) AND p.position IS NOT NULL
                """) {
                found[facts.id] = facts
            }
        }
        return Array(found.values)
    }

    func allPictures() throws -> [PhotoFacts] {
        try pictures("SELECT \(unescaped: Self.pictureColumns) FROM pictures p WHERE p.in_moments")
    }

    func allMoments() throws -> [Moment] {
        try moments("ORDER BY m.id")
    }

    // MARK: Mutations

    mutating func savePicture(_ facts: PhotoFacts) throws {
        let point = Self.position(of: facts)
        try session.execute("""
            UPDATE pictures SET in_moments = true, author_id = \(facts.author), moment_time = \(facts.capturedAt?.timeIntervalSince1970),
              latitude = \(facts.location?.latitude), longitude = \(facts.location?.longitude),
              requested_moment_id = \(facts.requestedMomentId), cover_score = \(facts.coverScore),
              position = CASE WHEN \(point)::float8[] IS NULL THEN NULL ELSE cube(\(point)::float8[]) END
            WHERE id = \(facts.id)
            """)
        // Read back as stored (its time and place as the columns keep them), when next asked.
        reads.facts[facts.id] = nil
        reads.momentIds[facts.id] = nil
    }

    mutating func deletePicture(id: Int64) throws {
        try session.execute("UPDATE pictures SET in_moments = false, moment_id = NULL, position = NULL WHERE id = \(id)")
        try session.execute("DELETE FROM moment_candidates WHERE picture_id = \(id)")
        reads.facts[id] = .some(nil)
        reads.momentIds[id] = .some(nil)
        reads.candidates[id] = []
    }

    /// The next id of the worker's own range: negative, counting down, never meeting the ids
    /// the backend gives its places and declared moments (as in SQLite).
    private func nextWorkerId(in table: String) throws -> Int64 {
        let lowest = try session.value(PostgresQuery(unsafeSQL: "SELECT LEAST(MIN(id), 0) FROM \(table)"), as: Int64.self) ?? 0
        let (next, overflow) = lowest.subtractingReportingOverflow(1)
        guard !overflow, next >= -Declaration.backendIds.upperBound else {
            throw CatalogError.refused("no free worker id is left in \(table)")
        }
        return next
    }

    mutating func createPlace(name: String?, center: Coordinate, radiusMetres: Double) throws -> Place {
        let id = try nextWorkerId(in: "places")
        try session.execute("""
            INSERT INTO places (id, name, latitude, longitude, radius_metres, created_at)
            VALUES (\(id), \(name), \(center.latitude), \(center.longitude), \(radiusMetres), \(Date().timeIntervalSince1970))
            """)
        let place = Place(id: id, name: name, center: center, radiusMetres: radiusMetres)
        try insertPlaceBoxes(place)
        return place
    }

    mutating func savePlace(_ place: Place) throws {
        try session.execute("""
            INSERT INTO places (id, name, latitude, longitude, radius_metres, created_at)
            VALUES (\(place.id), \(place.name), \(place.center.latitude), \(place.center.longitude), \(place.radiusMetres),
                    \(Date().timeIntervalSince1970))
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, latitude = excluded.latitude,
              longitude = excluded.longitude, radius_metres = excluded.radius_metres
            """)
        try session.execute("DELETE FROM place_boxes WHERE place_id = \(place.id)")
        try insertPlaceBoxes(place)
        // The boxes of declared moments held here follow their place's circle.
        for moment in try moments(atPlace: place.id) { try indexMoment(moment) }
    }

    mutating func createMoment(_ moment: Moment) throws -> Moment {
        var created = moment
        created.id = try nextWorkerId(in: "moments")
        try upsert(created, replacing: false)
        return created
    }

    mutating func saveMoment(_ moment: Moment) throws {
        try upsert(moment, replacing: true)
    }

    private func upsert(_ moment: Moment, replacing: Bool) throws {
        let now = Date().timeIntervalSince1970
        let onConflict = replacing ? """
            ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, place_id = excluded.place_id, start_at = excluded.start_at,
              end_at = excluded.end_at, creator = excluded.creator, visibility = excluded.visibility, title = excluded.title,
              cover_picture_id = excluded.cover_picture_id, cover_source = excluded.cover_source,
              cover_reason = excluded.cover_reason, updated_at = excluded.updated_at
            """ : ""
        try session.execute("""
            INSERT INTO moments (id, kind, place_id, start_at, end_at, creator, visibility, title, cover_picture_id,
              cover_source, cover_reason, created_at, updated_at)
            VALUES (\(moment.id), \(moment.kind.rawValue), \(moment.placeId), \(moment.start.timeIntervalSince1970),
              \(moment.end.timeIntervalSince1970), \(moment.creator), \(moment.visibility.rawValue), \(moment.title),
              \(moment.coverPictureId), \(moment.coverSource.rawValue), \(moment.coverReason), \(now), \(now))
            \(unescaped: onConflict)
            """)
        try session.execute("DELETE FROM moment_invitees WHERE moment_id = \(moment.id)")
        for user in moment.invitees.sorted() {
            try session.execute("INSERT INTO moment_invitees (moment_id, user_id) VALUES (\(moment.id), \(user))")
        }
        try indexMoment(moment)
    }

    mutating func deleteMoment(id: Int64) throws {
        try session.execute("UPDATE pictures SET moment_id = NULL WHERE moment_id = \(id)")
        try session.execute("DELETE FROM moment_candidates WHERE moment_id = \(id)")
        try session.execute("DELETE FROM moment_boxes WHERE moment_id = \(id)")
        try session.execute("DELETE FROM moments WHERE id = \(id)")
        for (picture, momentId) in reads.momentIds where momentId == id { reads.momentIds[picture] = .some(nil) }
        for picture in reads.candidates.keys { reads.candidates[picture]?.remove(id) }
    }

    mutating func movePictures(fromMoment source: Int64, toMoment target: Int64) throws {
        try session.execute("UPDATE pictures SET moment_id = \(target) WHERE moment_id = \(source)")
        for (picture, momentId) in reads.momentIds where momentId == source { reads.momentIds[picture] = .some(target) }
    }

    mutating func assign(picture id: Int64, to momentId: Int64?) throws {
        try session.execute("UPDATE pictures SET moment_id = \(momentId) WHERE id = \(id)")
        // What a read answers: the moment while the picture is in the moments; known only when
        // its facts were read (in the moments) and nothing has changed that since.
        if case .some(.some) = reads.facts[id] {
            reads.momentIds[id] = .some(momentId)
        } else {
            reads.momentIds[id] = nil
        }
    }

    mutating func recordCandidate(picture id: Int64, moment momentId: Int64) throws {
        try session.execute("INSERT INTO moment_candidates (moment_id, picture_id) VALUES (\(momentId), \(id)) ON CONFLICT DO NOTHING")
        reads.candidates[id]?.insert(momentId)
    }

    mutating func removeCandidate(picture id: Int64, moment momentId: Int64) throws {
        try session.execute("DELETE FROM moment_candidates WHERE moment_id = \(momentId) AND picture_id = \(id)")
        reads.candidates[id]?.remove(momentId)
    }

    // MARK: Index maintenance

    private func insertPlaceBoxes(_ place: Place) throws {
        for (low, high) in Self.boxes(of: place) {
            try session.execute("INSERT INTO place_boxes (place_id, box) VALUES (\(place.id), cube(\(low)::float8[], \(high)::float8[]))")
        }
    }

    /// Only declared moments are looked up by place and time (automatic ones by their pictures).
    private func indexMoment(_ moment: Moment) throws {
        guard moment.kind == .declared else { return }
        try session.execute("DELETE FROM moment_boxes WHERE moment_id = \(moment.id)")
        guard let place = try place(id: moment.placeId) else { return }
        for (low, high) in Self.boxes(of: moment, at: place) {
            try session.execute("INSERT INTO moment_boxes (moment_id, box) VALUES (\(moment.id), cube(\(low)::float8[], \(high)::float8[]))")
        }
    }

    // MARK: Derived values (also what `catalog copy` fills: PostgresCatalog+Copy)

    /// A filed picture's point in (latitude, longitude, time), nil without a trusted time and a place.
    static func position(of facts: PhotoFacts) -> [Double]? {
        facts.timeAndPlace.map { [$0.1.latitude, $0.1.longitude, $0.0.timeIntervalSince1970] }
    }

    /// A place's boxes in (latitude, longitude): its circle's (two across the date line).
    static func boxes(of place: Place) -> [(low: [Double], high: [Double])] {
        Geo.boundingBoxes(around: place.center, radiusMetres: place.radiusMetres).map { box in
            ([box.minLatitude, box.minLongitude], [box.maxLatitude, box.maxLongitude])
        }
    }

    /// A declared moment's boxes in (latitude, longitude, time): its place's circle over its window.
    static func boxes(of moment: Moment, at place: Place) -> [(low: [Double], high: [Double])] {
        boxes(of: place).map { low, high in
            (low + [moment.start.timeIntervalSince1970], high + [moment.end.timeIntervalSince1970])
        }
    }
}
