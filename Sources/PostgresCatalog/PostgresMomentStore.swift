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
    /// The cover margin of policy `best`, when that is the policy: a moment's digest then also
    /// fetches the picture the cover rule asks for next (`earliestPicture(inMoment:scoringAtLeast:)`).
    let bestCoverMargin: Double?
    /// Single rows as this transaction has read or written them: the engine asks for them
    /// several times in a commit, each a round trip otherwise.
    let reads = Reads()

    /// A store in `session`'s transaction, for an engine applying `rules`.
    init(session: PostgresSession, rules: MomentRules = .default) {
        self.session = session
        self.bestCoverMargin = rules.coverPolicy == .best ? rules.coverMargin : nil
    }

    /// What the store has read, kept until one of its own writes could change it. It holds
    /// only what the database answered or what a write here set, in the form a read gives it
    /// back, and lives as long as the store: one transaction (a retry makes a new store).
    final class Reads {
        /// `.some(nil)`: the picture is not in the moments.
        var facts: [Int64: PhotoFacts?] = [:]
        var momentIds: [Int64: Int64?] = [:]
        var candidates: [Int64: Set<Int64>] = [:]
        /// `.some(nil)`: no such moment.
        var moments: [Int64: Moment?] = [:]
        /// The places whose boxes hold a point; dropped when a place is written.
        var placesContaining: [Coordinate: [Place]] = [:]
        /// A moment's first picture scoring at least a threshold, fetched with its digest;
        /// dropped when any picture is written.
        var earliestScoring: [Int64: (minimum: Double, picture: PhotoFacts?)] = [:]
        /// The picture last saved, as stored: the one whose declared moments the engine asks
        /// for next, and then its neighbours.
        var saved: PhotoFacts?
        /// The picture whose save the session holds back (`savePicture`), if it still does,
        /// and the moment it was assigned since (`assign`), if it was.
        var held: (facts: PhotoFacts, moment: Int64??)?
        /// A picture's automatic neighbours, fetched with its declared moments; dropped when
        /// any picture is written.
        var neighbours: (photo: PhotoFacts, radius: Double, gap: Double, found: [AutomaticNeighbour])?

        /// The placing of a picture just inserted, asked in its insert's statement
        /// (`placingAlongside`), until the engine asks for it; dropped by any write that could
        /// change it but that picture's own save.
        var placed: (request: PlacingRequest, answer: Placing)?

        /// Forgets what a write to pictures may change beyond the rows it names.
        func picturesChanged() {
            earliestScoring.removeAll()
            neighbours = nil
            placed = nil
        }

        /// Forgets what a write to places may change.
        func placesChanged() {
            placesContaining.removeAll()
            placed = nil
        }

        /// Forgets what a write to moments may change.
        func momentsChanged() {
            placed = nil
        }
    }

    /// Tells the store of a picture just inserted in this transaction: not in the moments yet,
    /// in no moment, a candidate of none. The engine's first questions about it need no query.
    func knowNew(pictureId id: Int64) {
        reads.facts[id] = .some(nil)
        reads.momentIds[id] = .some(nil)
        reads.candidates[id] = []
    }

    // MARK: Row mapping

    static let pictureColumns = "p.id, p.sha256, p.author_id, p.moment_time, p.latitude, p.longitude, p.requested_moment_id, p.cover_score"

    static func facts(_ row: PostgresRow) throws -> PhotoFacts {
        guard let facts = try facts(row.makeRandomAccess(), from: 0) else { throw CatalogError.other("a picture's row has no id") }
        return facts
    }

    /// The facts in the eight columns from `offset` (`pictureColumns`), nil when the id is null
    /// (an outer join that found nothing).
    static func facts(_ row: PostgresRandomAccessRow, from offset: Int) throws -> PhotoFacts? {
        guard let id = try row[offset].decode(Int64?.self) else { return nil }
        let time = try row[offset + 3].decode(Double?.self)
        let latitude = try row[offset + 4].decode(Double?.self), longitude = try row[offset + 5].decode(Double?.self)
        return PhotoFacts(
            id: id, key: try row[offset + 1].decode(String.self), author: try row[offset + 2].decode(String?.self),
            capturedAt: time.map { Date(timeIntervalSince1970: $0) },
            location: latitude.flatMap { lat in longitude.map { Coordinate(latitude: lat, longitude: $0) } },
            requestedMomentId: try row[offset + 6].decode(Int64?.self), coverScore: try row[offset + 7].decode(Double.self))
    }

    /// Facts as a read gives them back: the capture time through the column's seconds since 1970.
    static func asStored(_ facts: PhotoFacts) -> PhotoFacts {
        var stored = facts
        stored.capturedAt = facts.capturedAt.map { Date(timeIntervalSince1970: $0.timeIntervalSince1970) }
        return stored
    }

    /// A moment as a read gives it back: its window through the columns' seconds since 1970.
    static func asStored(_ moment: Moment) -> Moment {
        var stored = moment
        stored.start = Date(timeIntervalSince1970: moment.start.timeIntervalSince1970)
        stored.end = Date(timeIntervalSince1970: moment.end.timeIntervalSince1970)
        return stored
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
        try moment(row.makeRandomAccess(), from: 0)
    }

    /// The moment in the twelve columns from `offset` (`momentColumns`).
    static func moment(_ row: PostgresRandomAccessRow, from offset: Int) throws -> Moment {
        func column<T: PostgresDecodable>(_ index: Int, _ type: T.Type = T.self) throws -> T { try row[offset + index].decode(T.self) }
        let (id, kind, placeId, start, end, creator) =
            (try column(0, Int64.self), try column(1, String.self), try column(2, Int64.self), try column(3, Double.self),
             try column(4, Double.self), try column(5, String?.self))
        let (visibility, title, cover, coverSource, coverReason, invitees) =
            (try column(6, String.self), try column(7, String?.self), try column(8, Int64?.self), try column(9, String.self),
             try column(10, String?.self), try column(11, [String].self))
        return Moment(
            id: id, kind: MomentKind(rawValue: kind) ?? .automatic, placeId: placeId,
            start: Date(timeIntervalSince1970: start), end: Date(timeIntervalSince1970: end),
            creator: creator, visibility: Visibility(rawValue: visibility) ?? .private,
            invitees: Set(invitees), title: title, coverPictureId: cover,
            coverSource: CoverSource(rawValue: coverSource) ?? .none, coverReason: coverReason)
    }

    private func moments(_ condition: String, _ binds: PostgresBindings = PostgresBindings()) throws -> [Moment] {
        let found = try session.rows(PostgresQuery(unsafeSQL: "SELECT \(Self.momentColumns) FROM moments m \(condition)", binds: binds))
            .map(Self.moment)
        for moment in found { reads.moments[moment.id] = .some(moment) }
        return found
    }

    static let placeColumns = "id, name, latitude, longitude, radius_metres"


    static func place(_ row: PostgresRow) throws -> Place {
        try place(row.makeRandomAccess(), from: 0)
    }

    /// The place in the five columns from `offset` (`placeColumns`).
    static func place(_ row: PostgresRandomAccessRow, from offset: Int) throws -> Place {
        Place(id: try row[offset].decode(Int64.self), name: try row[offset + 1].decode(String?.self),
              center: Coordinate(latitude: try row[offset + 2].decode(Double.self), longitude: try row[offset + 3].decode(Double.self)),
              radiusMetres: try row[offset + 4].decode(Double.self))
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

    /// One statement: the aggregates, the first picture, and under policy `best` the first
    /// picture within the margin of the best score, which the cover rule asks for next.
    func digest(ofMoment id: Int64) throws -> MomentDigest {
        // An automatic moment's place follows its first picture: the places holding it come too.
        let automatic = if case .some(.some(let moment)) = reads.moments[id] { moment.kind == .automatic } else { false }
        var call = PostgresQuery(unsafeSQL: "")
        if let held = reads.held, held.moment == .some(id), session.takeHeld(key: held.facts.id) {
            // The held save of a picture just assigned to this moment goes first, in the same
            // statement (the digest function sees what the save wrote).
            let save = Self.save(held.facts, moment: held.moment, binds: &call.binds)
            call.sql = "SELECT digest.* FROM \(save) AS saved (moment) CROSS JOIN LATERAL darkroom_moment_digest(saved.moment, "
        } else {
            call.binds.append(id)
            call.sql = "SELECT * FROM darkroom_moment_digest($1, "
        }
        call.binds.append(bestCoverMargin)
        call.binds.append(automatic)
        call.sql += "$\(call.binds.count - 1), $\(call.binds.count)) AS digest"
        let rows = try session.rows(call).map { $0.makeRandomAccess() }
        typealias Column = PostgresMomentLookups.Digest
        guard let row = rows.first else { return MomentDigest(earliest: nil, firstCapture: nil, lastCapture: nil, bestScore: nil) }
        let best = try row[Column.aggregates + 2].decode(Double?.self)
        let earliest = try Self.facts(row, from: Column.earliest)
        if let margin = bestCoverMargin, let best {
            reads.earliestScoring[id] = (best - margin, try Self.facts(row, from: Column.cover))
        }
        if automatic, let anchor = earliest?.location {
            reads.placesContaining[anchor] = Self.sortedOnce(try rows.dropFirst().map { try Self.place($0, from: Column.place) }, by: \.id)
        }
        return MomentDigest(
            earliest: earliest,
            firstCapture: try row[Column.aggregates].decode(Double?.self).map { Date(timeIntervalSince1970: $0) },
            lastCapture: try row[Column.aggregates + 1].decode(Double?.self).map { Date(timeIntervalSince1970: $0) },
            bestScore: best)
    }

    func earliestPicture(inMoment id: Int64, scoringAtLeast minimumScore: Double) throws -> PhotoFacts? {
        if let known = reads.earliestScoring[id], known.minimum == minimumScore { return known.picture }
        return try pictures("""
            SELECT \(unescaped: Self.pictureColumns) FROM pictures p WHERE p.moment_id = \(id) AND p.cover_score >= \(minimumScore)
            \(unescaped: Self.stableOrder) LIMIT 1
            """).first
    }

    func moment(id: Int64) throws -> Moment? {
        if let known = reads.moments[id] { return known }
        var binds = PostgresBindings()
        binds.append(id)
        let moment = try moments("WHERE m.id = $1", binds).first
        if moment == nil { reads.moments[id] = .some(nil) }
        return moment
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

    /// What `darkroom_placing` answered: the lookups of one point.
    struct Placing {
        var declared: [PlacedMoment] = []
        var neighbours: [AutomaticNeighbour] = []
        var places: [Place] = []
    }

    /// The arguments of one call of `darkroom_placing`: the declared moments at `location` in
    /// `window` (none when nil), the automatic neighbours of picture `picture` by `author` in
    /// the box `low` ... `high` (none when nil), and the places holding `location` when `places`.
    struct PlacingRequest: Equatable {
        var location: Coordinate
        var window: [Double]?
        var author: String?
        var picture: Int64?
        var low: [Double]?
        var high: [Double]?
        var places: Bool

        /// Its arguments, appended to `binds`; `picture`, when given, is the SQL of the
        /// picture's id instead (`inserted.id`).
        func arguments(_ binds: inout PostgresBindings, picture expression: String? = nil) -> String {
            var list: [String] = []
            func add(_ append: (inout PostgresBindings) -> Void) {
                append(&binds)
                list.append("$\(binds.count)")
            }
            add { $0.append(location.latitude) }
            add { $0.append(location.longitude) }
            add { $0.append(window?[0]) }
            add { $0.append(window?[1]) }
            add { $0.append(low) }
            add { $0.append(high) }
            add { $0.append(author) }
            if let expression { list.append(expression) } else { add { $0.append(picture ?? 0) } }
            add { $0.append(places) }
            return list.joined(separator: ", ")
        }
    }

    /// What the engine asks first of a picture at `location` and `time` (its declared moments):
    /// with `subject`, the picture just saved there, its automatic neighbours and the places
    /// holding it too, since the engine asks for them next. Across the date line the neighbours
    /// take two boxes, and a call of their own each.
    static func placingRequest(at location: Coordinate, time: Date, subject: PhotoFacts?, rules: MomentRules) -> PlacingRequest {
        let t = time.timeIntervalSince1970
        var request = PlacingRequest(location: location, window: [t - rules.graceAfter, t + rules.graceBefore],
                                     author: nil, picture: nil, low: nil, high: nil, places: false)
        if let subject, case let boxes = neighbourBoxes(of: subject, rules: rules), boxes.count == 1 {
            request.author = subject.author
            request.picture = subject.id
            request.low = boxes[0].low
            request.high = boxes[0].high
            request.places = true
        }
        return request
    }

    /// What the engine will ask first of a picture just inserted with `facts` (as stored, and
    /// the subject of its own placing); nil without a time and a place.
    private static func placingRequest(ofNew facts: PhotoFacts, rules: MomentRules) -> PlacingRequest? {
        let facts = asStored(facts)
        guard let here = facts.timeAndPlace else { return nil }
        return placingRequest(at: here.location, time: here.time, subject: facts, rules: rules)
    }

    /// One call of `darkroom_placing`.
    private func placing(_ request: PlacingRequest) throws -> Placing {
        var query = PostgresQuery(unsafeSQL: "")
        query.sql = "SELECT * FROM darkroom_placing(\(request.arguments(&query.binds)))"
        // The only pictures it reads are neighbours of `picture`, never that picture itself: a
        // held save of it (or of any, without neighbours) can wait.
        let rows = try session.rows(query, unaffectedBy: request.picture ?? reads.held?.facts.id)
        return try answer(request, rows.map { $0.makeRandomAccess() }, from: 0)
    }

    /// The placing of `facts`, a picture about to be inserted, asked in the insert's own
    /// statement: the engine's first question about it then needs no round trip of its own
    /// (`knowPlacing`). Nil without a time and a place.
    func placingAlongside(of facts: PhotoFacts, rules: MomentRules) -> PostgresRowCoding.Alongside? {
        guard let request = Self.placingRequest(ofNew: facts, rules: rules) else { return nil }
        return PostgresRowCoding.Alongside { binds in
            ("lookup.*", "LEFT JOIN LATERAL darkroom_placing(\(request.arguments(&binds, picture: "inserted.id"))) AS lookup ON true")
        }
    }

    /// Keeps the placing asked beside picture `id`'s insert (`placingAlongside`), from the rows
    /// of that statement (the picture's id first, then the placing's columns; none when null).
    func knowPlacing(of facts: PhotoFacts, rows: [PostgresRow], rules: MomentRules) throws {
        guard let request = Self.placingRequest(ofNew: facts, rules: rules) else { return }
        reads.placed = (request, try answer(request, rows.map { $0.makeRandomAccess() }, from: 1))
    }

    /// The answer of `darkroom_placing` in `rows`, its columns from `offset` on (a row whose
    /// kind is null holds none); the moments and places it holds are kept.
    private func answer(_ request: PlacingRequest, _ rows: [PostgresRandomAccessRow], from offset: Int) throws -> Placing {
        typealias Column = PostgresMomentLookups.Placing
        var answer = Placing()
        for row in rows {
            switch try row[offset].decode(String?.self) {
            case nil:
                continue
            case "declared"?:
                let moment = try Self.moment(row, from: offset + Column.moment)
                reads.moments[moment.id] = .some(moment)
                answer.declared.append(PlacedMoment(moment: moment, place: try Self.place(row, from: offset + Column.place)))
            case "neighbour"?:
                guard let neighbour = try Self.facts(row, from: offset + Column.picture) else { continue }
                let moment = try Self.moment(row, from: offset + Column.moment)
                reads.moments[moment.id] = .some(moment)
                answer.neighbours.append(AutomaticNeighbour(photo: neighbour, momentId: moment.id))
            default:
                answer.places.append(try Self.place(row, from: offset + Column.place))
            }
        }
        // A moment or place whose two boxes (across the date line) both met the point, once.
        answer.declared = Self.sortedOnce(answer.declared, by: \.moment.id)
        answer.places = Self.sortedOnce(answer.places, by: \.id)
        if request.places { reads.placesContaining[request.location] = answer.places }
        return answer
    }

    /// Items by id, each once.
    private static func sortedOnce<Item>(_ items: [Item], by id: (Item) -> Int64) -> [Item] {
        Dictionary(items.map { (id($0), $0) }, uniquingKeysWith: { first, _ in first }).sorted { $0.key < $1.key }.map(\.value)
    }

    /// The box of (latitude, longitude, time) in which `photo`'s automatic neighbours lie, one
    /// per bounding box of the radius (two across the date line).
    private static func neighbourBoxes(of photo: PhotoFacts, rules: MomentRules) -> [(low: [Double], high: [Double])] {
        guard let (time, location) = photo.timeAndPlace else { return [] }
        let t = time.timeIntervalSince1970
        return Geo.boundingBoxes(around: location, radiusMetres: rules.automaticRadiusMetres).map { box in
            ([box.minLatitude, box.minLongitude, t - rules.automaticTimeGap], [box.maxLatitude, box.maxLongitude, t + rules.automaticTimeGap])
        }
    }

    /// When the point is that of the picture just saved, its automatic neighbours and the
    /// places holding it come in the same call: the engine asks for them next.
    func declaredMoments(near location: Coordinate, at time: Date, rules: MomentRules) throws -> [PlacedMoment] {
        var subject: PhotoFacts?
        if let saved = reads.saved, let here = saved.timeAndPlace, here.location == location, here.time == time {
            subject = saved
        }
        let request = Self.placingRequest(at: location, time: time, subject: subject, rules: rules)
        let answer: Placing
        if let placed = reads.placed, placed.request == request {
            answer = placed.answer
            if request.places { reads.placesContaining[location] = answer.places }
        } else {
            answer = try placing(request)
        }
        reads.placed = nil
        if let subject, request.picture != nil {
            reads.neighbours = (subject, rules.automaticRadiusMetres, rules.automaticTimeGap, answer.neighbours)
        }
        return answer.declared
    }

    func automaticNeighbours(of photo: PhotoFacts, rules: MomentRules) throws -> [AutomaticNeighbour] {
        if let known = reads.neighbours, known.photo == photo, known.radius == rules.automaticRadiusMetres,
           known.gap == rules.automaticTimeGap {
            return known.found
        }
        guard let location = photo.timeAndPlace?.location else { return [] }
        return try Self.neighbourBoxes(of: photo, rules: rules).flatMap { box in
            try placing(PlacingRequest(location: location, window: nil, author: photo.author, picture: photo.id,
                                       low: box.low, high: box.high, places: false)).neighbours
        }
    }

    func places(containing location: Coordinate) throws -> [Place] {
        if let known = reads.placesContaining[location] { return known }
        return try placing(PlacingRequest(location: location, window: nil, author: nil, picture: nil,
                                          low: nil, high: nil, places: true)).places
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

    // Writes are sent without waiting (`PostgresSession.send`): the next statement that waits
    // brings their failure, and the transaction's COMMIT waits for them all.

    mutating func savePicture(_ facts: PhotoFacts) throws {
        // Held back: the engine's next write is most often this picture's moment (`assign`),
        // and its next question that moment's digest; both go in the same statement. Any other
        // statement sends it first.
        hold(facts, moment: nil)
        // As a read would give it back. Its moment is unchanged: a picture not in the moments
        // has none, and one in them keeps its own. Its own placing excludes it: still good.
        let placed = reads.placed?.request.picture == facts.id ? reads.placed : nil
        reads.picturesChanged()
        reads.placed = placed
        reads.facts[facts.id] = .some(Self.asStored(facts))
        reads.saved = Self.asStored(facts)
    }

    /// Holds back the save of `facts`, with `moment` when it is assigned one too.
    private func hold(_ facts: PhotoFacts, moment: Int64??) {
        var query = PostgresQuery(unsafeSQL: "")
        query.sql = "SELECT " + Self.save(facts, moment: moment, binds: &query.binds)
        session.hold(query, key: facts.id)
        reads.held = (facts, moment)
    }

    /// A call of `darkroom_save_picture`: its arguments appended to `binds`.
    private static func save(_ facts: PhotoFacts, moment: Int64??, binds: inout PostgresBindings) -> String {
        let first = binds.count
        binds.append(facts.id)
        binds.append(facts.author)
        binds.append(facts.capturedAt?.timeIntervalSince1970)
        binds.append(facts.location?.latitude)
        binds.append(facts.location?.longitude)
        binds.append(facts.requestedMomentId)
        binds.append(facts.coverScore)
        binds.append(position(of: facts))
        binds.append(moment != nil)
        binds.append(moment ?? nil)
        return "darkroom_save_picture(" + (first + 1...binds.count).map { "$\($0)" }.joined(separator: ", ") + ")"
    }

    mutating func deletePicture(id: Int64) throws {
        try session.send("UPDATE pictures SET in_moments = false, moment_id = NULL, position = NULL WHERE id = \(id)")
        try session.send("DELETE FROM moment_candidates WHERE picture_id = \(id)")
        reads.picturesChanged()
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
        try session.send("""
            INSERT INTO places (id, name, latitude, longitude, radius_metres, created_at)
            VALUES (\(id), \(name), \(center.latitude), \(center.longitude), \(radiusMetres), \(Date().timeIntervalSince1970))
            """)
        let place = Place(id: id, name: name, center: center, radiusMetres: radiusMetres)
        try insertPlaceBoxes(place)
        reads.placesChanged()
        return place
    }

    mutating func savePlace(_ place: Place) throws {
        try session.send("""
            INSERT INTO places (id, name, latitude, longitude, radius_metres, created_at)
            VALUES (\(place.id), \(place.name), \(place.center.latitude), \(place.center.longitude), \(place.radiusMetres),
                    \(Date().timeIntervalSince1970))
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, latitude = excluded.latitude,
              longitude = excluded.longitude, radius_metres = excluded.radius_metres
            """)
        try session.send("DELETE FROM place_boxes WHERE place_id = \(place.id)")
        try insertPlaceBoxes(place)
        reads.placesChanged()
        // The boxes of declared moments held here follow their place's circle.
        for moment in try moments(atPlace: place.id) { try indexMoment(moment) }
    }

    mutating func createMoment(_ moment: Moment) throws -> Moment {
        var created = moment
        created.id = try nextWorkerId(in: "moments")
        try upsert(created, replacing: false, invitees: [])
        return created
    }

    mutating func saveMoment(_ moment: Moment) throws {
        // Its invitees as stored, when a read here knows them: nothing to rewrite when unchanged.
        let stored: Set<String>? = if case .some(.some(let old)) = reads.moments[moment.id] { old.invitees } else { nil }
        try upsert(moment, replacing: true, invitees: stored)
    }

    /// Writes a moment's row, its invitees unless `invitees` (those stored) already equals
    /// them, and its boxes.
    private func upsert(_ moment: Moment, replacing: Bool, invitees stored: Set<String>?) throws {
        reads.momentsChanged()
        let now = Date().timeIntervalSince1970
        let onConflict = replacing ? """
            ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, place_id = excluded.place_id, start_at = excluded.start_at,
              end_at = excluded.end_at, creator = excluded.creator, visibility = excluded.visibility, title = excluded.title,
              cover_picture_id = excluded.cover_picture_id, cover_source = excluded.cover_source,
              cover_reason = excluded.cover_reason, updated_at = excluded.updated_at
            """ : ""
        try session.send("""
            INSERT INTO moments (id, kind, place_id, start_at, end_at, creator, visibility, title, cover_picture_id,
              cover_source, cover_reason, created_at, updated_at)
            VALUES (\(moment.id), \(moment.kind.rawValue), \(moment.placeId), \(moment.start.timeIntervalSince1970),
              \(moment.end.timeIntervalSince1970), \(moment.creator), \(moment.visibility.rawValue), \(moment.title),
              \(moment.coverPictureId), \(moment.coverSource.rawValue), \(moment.coverReason), \(now), \(now))
            \(unescaped: onConflict)
            """)
        if stored != moment.invitees {
            if stored != [] { try session.send("DELETE FROM moment_invitees WHERE moment_id = \(moment.id)") }
            for user in moment.invitees.sorted() {
                try session.send("INSERT INTO moment_invitees (moment_id, user_id) VALUES (\(moment.id), \(user))")
            }
        }
        try indexMoment(moment)
        reads.moments[moment.id] = .some(Self.asStored(moment))
    }

    mutating func deleteMoment(id: Int64) throws {
        reads.momentsChanged()
        try session.send("UPDATE pictures SET moment_id = NULL WHERE moment_id = \(id)")
        try session.send("DELETE FROM moment_candidates WHERE moment_id = \(id)")
        try session.send("DELETE FROM moment_boxes WHERE moment_id = \(id)")
        try session.send("DELETE FROM moments WHERE id = \(id)")
        reads.picturesChanged()
        reads.moments[id] = .some(nil)
        for (picture, momentId) in reads.momentIds where momentId == id { reads.momentIds[picture] = .some(nil) }
        for picture in reads.candidates.keys { reads.candidates[picture]?.remove(id) }
    }

    mutating func movePictures(fromMoment source: Int64, toMoment target: Int64) throws {
        try session.send("UPDATE pictures SET moment_id = \(target) WHERE moment_id = \(source)")
        reads.picturesChanged()
        for (picture, momentId) in reads.momentIds where momentId == source { reads.momentIds[picture] = .some(target) }
    }

    mutating func assign(picture id: Int64, to momentId: Int64?) throws {
        if let held = reads.held, held.facts.id == id, session.takeHeld(key: id) {
            hold(held.facts, moment: .some(momentId))
        } else {
            try session.send("UPDATE pictures SET moment_id = \(momentId) WHERE id = \(id)")
        }
        reads.picturesChanged()
        // What a read answers: the moment while the picture is in the moments; known only when
        // its facts were read (in the moments) and nothing has changed that since.
        if case .some(.some) = reads.facts[id] {
            reads.momentIds[id] = .some(momentId)
        } else {
            reads.momentIds[id] = nil
        }
    }

    mutating func recordCandidate(picture id: Int64, moment momentId: Int64) throws {
        try session.send("INSERT INTO moment_candidates (moment_id, picture_id) VALUES (\(momentId), \(id)) ON CONFLICT DO NOTHING")
        reads.candidates[id]?.insert(momentId)
    }

    mutating func removeCandidate(picture id: Int64, moment momentId: Int64) throws {
        try session.send("DELETE FROM moment_candidates WHERE moment_id = \(momentId) AND picture_id = \(id)")
        reads.candidates[id]?.remove(momentId)
    }

    // MARK: Index maintenance

    private func insertPlaceBoxes(_ place: Place) throws {
        for (low, high) in Self.boxes(of: place) {
            try session.send("INSERT INTO place_boxes (place_id, box) VALUES (\(place.id), cube(\(low)::float8[], \(high)::float8[]))")
        }
    }

    /// Only declared moments are looked up by place and time (automatic ones by their pictures).
    private func indexMoment(_ moment: Moment) throws {
        guard moment.kind == .declared else { return }
        try session.send("DELETE FROM moment_boxes WHERE moment_id = \(moment.id)")
        guard let place = try place(id: moment.placeId) else { return }
        for (low, high) in Self.boxes(of: moment, at: place) {
            try session.send("INSERT INTO moment_boxes (moment_id, box) VALUES (\(moment.id), cube(\(low)::float8[], \(high)::float8[]))")
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
