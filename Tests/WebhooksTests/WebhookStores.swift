import Catalog
import Foundation
import GRDB
@testable import PostgresCatalog
import PostgresHarness
import PostgresStore
import Testing

/// The two catalog stores a dispatcher delivers from, for the tests that run against each.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres

    /// SQLite always; PostgreSQL where its server programs are installed (`make deps`).
    static let available: [StoreKind] = SharedCluster.available ? allCases : [.sqlite]

    var testDescription: String { rawValue }

    /// A new, empty catalog of this store.
    func open() throws -> any HookStore {
        switch self {
        case .sqlite:
            let path = NSTemporaryDirectory() + "darkroom-webhooks-" + UUID().uuidString + "/catalog.sqlite"
            return SQLiteHooks(catalog: try Catalog(path: path))
        case .postgres:
            return try Self.openPostgres()
        }
    }

    /// A new catalog in a fresh database of the shared test cluster.
    static func openPostgres() throws -> PostgresHooks {
        PostgresHooks(catalog: try PostgresCatalog(location: try SharedCluster.freshDatabase()))
    }
}

/// A catalog under test: its webhook state, and what the tests write and count in it directly.
protocol HookStore: Sendable {
    var store: any WebhookStore { get }
    /// Writes outbox events (of moment 1, 2, ... or of none), each with `picture_id` 7, as the
    /// moment engine writes them, in one transaction; returns their ids.
    func addEvents(_ events: [(OutboxEvent.Name, Int64?)]) throws -> [Int64]
    /// The outbox ids not yet marked delivered, in order.
    func undelivered() throws -> [Int64]
    /// The deliveries table counted row by row, to hold the running totals to.
    func recount() throws -> (rows: Int, attempts: Int, delivered: Int)
    /// Removes outbox events (their deliveries go with them).
    func delete(events ids: [Int64]) throws
    /// Another handle on the same catalog: a second process, or machine.
    func another() throws -> Self
}

extension HookStore {
    /// An event's payload as the receivers read it.
    static func payload(moment: Int64?) -> String {
        moment.map { #"{"moment_id":\#($0),"picture_id":7}"# } ?? #"{"moment_id":null,"picture_id":7}"#
    }

    /// Whether the statistics `/metrics` reads agree with a count of the deliveries table.
    func statisticsAgree() throws -> Bool {
        let stats = try store.webhookStatistics(now: Date())
        let counted = try recount()
        return (stats.delivered, stats.failedAttempts, stats.pending)
            == (counted.delivered, counted.attempts - counted.delivered, counted.rows - counted.delivered)
    }
}

struct SQLiteHooks: HookStore {
    let catalog: Catalog
    var store: any WebhookStore { catalog }

    func addEvents(_ events: [(OutboxEvent.Name, Int64?)]) throws -> [Int64] {
        let rows = events.map { name, moment in
            OutboxEvent(event: name, momentId: moment, pictureId: 7, payload: Self.payload(moment: moment), createdAt: Date().timeIntervalSince1970)
        }
        return try catalog.write { db in
            try rows.map { row in
                var event = row
                try event.insert(db)
                guard let id = event.id else { throw CatalogError.other("no id") }
                return id
            }
        }
    }

    func undelivered() throws -> [Int64] {
        try catalog.read { db in try OutboxEvent.filter(Column("delivered_at") == nil).order(Column("id")).fetchAll(db).compactMap(\.id) }
    }

    func recount() throws -> (rows: Int, attempts: Int, delivered: Int) {
        try catalog.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT COUNT(*), COALESCE(SUM(attempts), 0), COUNT(delivered_at) FROM webhook_deliveries")
            return (row?[0] ?? 0, row?[1] ?? 0, row?[2] ?? 0)
        }
    }

    func delete(events ids: [Int64]) throws {
        try catalog.write { db in _ = try OutboxEvent.deleteAll(db, keys: ids) }
    }

    func another() throws -> SQLiteHooks { SQLiteHooks(catalog: try Catalog(path: catalog.path)) }
}

struct PostgresHooks: HookStore {
    let catalog: PostgresCatalog
    var store: any WebhookStore { catalog }

    /// Inserts one event in `session`'s transaction; returns its id.
    static func insert(_ name: OutboxEvent.Name, moment: Int64?, _ session: PostgresSession) throws -> Int64 {
        guard let id = try session.value("""
            INSERT INTO outbox (event, moment_id, picture_id, payload, created_at)
            VALUES (\(name.rawValue), \(moment), 7, \(payload(moment: moment)), \(Date().timeIntervalSince1970)) RETURNING id
            """, as: Int64.self) else { throw CatalogError.other("no id") }
        return id
    }

    func addEvents(_ events: [(OutboxEvent.Name, Int64?)]) throws -> [Int64] {
        try catalog.write { session in try events.map { name, moment in try Self.insert(name, moment: moment, session) } }
    }

    func undelivered() throws -> [Int64] {
        try catalog.readOne { session in try session.values("SELECT id FROM outbox WHERE delivered_at IS NULL ORDER BY id", as: Int64.self) }
    }

    func recount() throws -> (rows: Int, attempts: Int, delivered: Int) {
        try catalog.readOne { session in
            guard let row = try session.rows("""
                SELECT COUNT(*), COALESCE(SUM(attempts), 0)::bigint, COUNT(delivered_at) FROM webhook_deliveries
                """).first else { return (0, 0, 0) }
            let (rows, attempts, delivered) = try row.decode((Int64, Int64, Int64).self)
            return (Int(rows), Int(attempts), Int(delivered))
        }
    }

    func delete(events ids: [Int64]) throws {
        try catalog.write { session in try session.execute("DELETE FROM outbox WHERE id = ANY(\(ids))") }
    }

    func another() throws -> PostgresHooks { PostgresHooks(catalog: try PostgresCatalog(location: catalog.location)) }
}
