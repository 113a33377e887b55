import Foundation
import JSONValues
import GRDB
import Moments

/// Turns the moment engine's events into outbox rows, in the transaction that caused them.
public struct OutboxWriter {
    let db: Database
    let at: Double

    /// Records each event a notifier cares about, in order.
    func record(_ events: [MomentEvent]) throws {
        for var row in try Self.rows(for: events, at: at, thumbHash: { picture in
            try String.fetchOne(db.cachedStatement(sql: "SELECT thumb_hash FROM pictures WHERE id = ?"), arguments: [picture])
        }) {
            try row.insert(db)
        }
    }

    /// The outbox rows of the engine's events, in order, for any store: `thumbHash` reads a
    /// picture's placeholder from it.
    public static func rows(for events: [MomentEvent], at: Double, thumbHash: (Int64) throws -> String?) throws -> [OutboxEvent] {
        try events.compactMap { event in try row(for: event, at: at, thumbHash: thumbHash) }
    }

    private static func row(for event: MomentEvent, at: Double, thumbHash: (Int64) throws -> String?) throws -> OutboxEvent? {
        switch event {
        case .momentCreated(let moment):
            return OutboxEvent(event: .momentCreated, momentId: moment.id, pictureId: nil, payload: Catalog.json(Self.describe(moment)), createdAt: at)
        case .momentUpdated(let moment):
            return OutboxEvent(event: .momentUpdated, momentId: moment.id, pictureId: nil, payload: Catalog.json(Self.describe(moment)), createdAt: at)
        case .momentMerged(let from, let into):
            return OutboxEvent(event: .momentMerged, momentId: into, pictureId: nil,
                               payload: Catalog.json(["from_moment_id": .integer(from), "moment_id": .integer(into)]), createdAt: at)
        case .momentDeleted(let id):
            return OutboxEvent(event: .momentDeleted, momentId: id, pictureId: nil, payload: Catalog.json(["moment_id": .integer(id)]), createdAt: at)
        case .pictureAdded(let picture, let moment):
            // With the placeholder, so an app can paint the picture the moment it hears of it.
            let thumbHash = try thumbHash(picture)
            return OutboxEvent(event: .pictureAdded, momentId: moment, pictureId: picture,
                               payload: Catalog.json(["picture_id": .integer(picture), "moment_id": moment.map { .integer($0) } ?? .null,
                                                      "thumb_hash": thumbHash.map { .string($0) } ?? .null]), createdAt: at)
        case .pictureRemoved(let picture, let moment):
            return OutboxEvent(event: .pictureRemoved, momentId: moment, pictureId: picture,
                               payload: Catalog.json(["picture_id": .integer(picture), "moment_id": moment.map { .integer($0) } ?? .null]), createdAt: at)
        case .coverChanged(let moment, let picture, let reason):
            return OutboxEvent(event: .momentCoverChanged, momentId: moment, pictureId: picture,
                               payload: Catalog.json(["moment_id": .integer(moment), "picture_id": picture.map { .integer($0) } ?? .null, "reason": .string(reason)]),
                               createdAt: at)
        case .candidateRecorded(let picture, let moment):
            return OutboxEvent(event: .momentCandidate, momentId: moment, pictureId: picture,
                               payload: Catalog.json(["moment_id": .integer(moment), "picture_id": .integer(picture), "candidate": .bool(true)]), createdAt: at)
        case .candidateWithdrawn(let picture, let moment):
            return OutboxEvent(event: .momentCandidate, momentId: moment, pictureId: picture,
                               payload: Catalog.json(["moment_id": .integer(moment), "picture_id": .integer(picture), "candidate": .bool(false)]), createdAt: at)
        }
    }

    /// Instants in events, as `2024-05-07T09:33:04Z` (a value type: no formatter object per event).
    private static let iso8601 = Date.ISO8601FormatStyle()

    static func describe(_ moment: Moment) -> [String: JSONValue] {
        [
            "moment_id": .integer(moment.id), "kind": .string(moment.kind.rawValue), "place_id": .integer(moment.placeId),
            "start": .string(moment.start.formatted(Self.iso8601)),
            "end": .string(moment.end.formatted(Self.iso8601)),
            "creator": moment.creator.map { .string($0) } ?? .null, "visibility": .string(moment.visibility.rawValue),
            "title": moment.title.map { .string($0) } ?? .null,
        ]
    }
}
