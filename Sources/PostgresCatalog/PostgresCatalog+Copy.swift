import Catalog
import Foundation
import Moments
import PostgresNIO
import PostgresStore

/// What `catalog copy` needs beyond the rows it moves: PostgreSQL's derived values (a picture's
/// position cube, the boxes of places and declared moments), which SQLite keeps in R*Tree
/// tables of its own and the copy cannot take across. They are computed here by the same
/// functions the catalog's own writes use (`PostgresMomentStore`), from the rows as they now
/// stand in PostgreSQL, one statement per kind for a whole batch of rows.
extension PostgresCatalog {
    /// Replaces the boxes of the places with these ids, as declaring or creating them does.
    public static func indexCopiedPlaces(ids: [Int64], in session: PostgresSession) throws {
        guard !ids.isEmpty else { return }
        try session.execute("DELETE FROM place_boxes WHERE place_id = ANY(\(ids))")
        let places = try session.rows("SELECT \(unescaped: PostgresMomentStore.placeColumns) FROM places WHERE id = ANY(\(ids))")
            .map(PostgresMomentStore.place)
        try insertBoxes(into: "place_boxes", key: "place_id", dimensions: 2,
                        places.flatMap { place in PostgresMomentStore.boxes(of: place).map { (place.id, $0.low, $0.high) } }, in: session)
    }

    /// Replaces the boxes of the moments with these ids, as saving them does: declared moments
    /// over their place's circle and window; automatic ones have none. Their places come first.
    public static func indexCopiedMoments(ids: [Int64], in session: PostgresSession) throws {
        guard !ids.isEmpty else { return }
        try session.execute("DELETE FROM moment_boxes WHERE moment_id = ANY(\(ids))")
        let store = PostgresMomentStore(session: session)
        var boxes: [(Int64, [Double], [Double])] = []
        // Declared moments are the backend's few; automatic ones, the many, have no boxes.
        for id in try session.values("SELECT id FROM moments WHERE id = ANY(\(ids)) AND kind = 'declared' ORDER BY id", as: Int64.self) {
            guard let moment = try store.moment(id: id), let place = try store.place(id: moment.placeId) else { continue }
            boxes += PostgresMomentStore.boxes(of: moment, at: place).map { (id, $0.low, $0.high) }
        }
        try insertBoxes(into: "moment_boxes", key: "moment_id", dimensions: 3, boxes, in: session)
    }

    /// Sets the position of the pictures with these ids, as filing them in moments does: a
    /// point in (latitude, longitude, time) for a filed picture with a trusted time and a place,
    /// none otherwise.
    public static func indexCopiedPictures(ids: [Int64], in session: PostgresSession) throws {
        guard !ids.isEmpty else { return }
        try session.execute("UPDATE pictures SET position = NULL WHERE id = ANY(\(ids)) AND position IS NOT NULL")
        let filed = try session.rows("""
            SELECT \(unescaped: PostgresMomentStore.pictureColumns) FROM pictures p WHERE p.id = ANY(\(ids)) AND p.in_moments
            """).map(PostgresMomentStore.facts)
        let points = filed.compactMap { facts in PostgresMomentStore.position(of: facts).map { (facts.id, $0) } }
        guard !points.isEmpty else { return }
        var binds = PostgresBindings(capacity: 4)
        binds.append(points.map(\.0))
        for axis in 0..<3 { binds.append(points.map { $0.1[axis] }) }
        try session.execute(PostgresQuery(unsafeSQL: """
            UPDATE pictures SET position = cube(ARRAY[u.a, u.b, u.c])
            FROM unnest($1::int8[], $2::float8[], $3::float8[], $4::float8[]) AS u(id, a, b, c) WHERE pictures.id = u.id
            """, binds: binds))
    }

    /// One INSERT of boxes `(key, cube(low, high))`, each coordinate passed as one array.
    private static func insertBoxes(into table: String, key: String, dimensions: Int,
                                    _ boxes: [(key: Int64, low: [Double], high: [Double])], in session: PostgresSession) throws {
        guard !boxes.isEmpty else { return }
        var binds = PostgresBindings(capacity: 1 + 2 * dimensions)
        binds.append(boxes.map(\.key))
        for axis in 0..<dimensions { binds.append(boxes.map { $0.low[axis] }) }
        for axis in 0..<dimensions { binds.append(boxes.map { $0.high[axis] }) }
        let lows = (0..<dimensions).map { "l\($0)" }
        let highs = (0..<dimensions).map { "h\($0)" }
        let arrays = (2...(1 + 2 * dimensions)).map { "$\($0)::float8[]" }.joined(separator: ", ")
        try session.execute(PostgresQuery(unsafeSQL: """
            INSERT INTO \(table) (\(key), box)
            SELECT k, cube(ARRAY[\(lows.joined(separator: ", "))], ARRAY[\(highs.joined(separator: ", "))])
            FROM unnest($1::int8[], \(arrays)) AS u(k, \((lows + highs).joined(separator: ", ")))
            """, binds: binds))
    }
}
