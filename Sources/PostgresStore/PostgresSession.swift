import Foundation
import Logging
import PostgresNIO

/// One borrowed connection, used synchronously: each statement is sent and its rows collected
/// before the call returns. Values go to the server as bound parameters (the interpolations of
/// a `PostgresQuery` literal), never spliced into the text. Every wait has a deadline: a
/// statement's (`PostgresDeadlines.statement`) and the whole session's (`transaction`).
public struct PostgresSession {
    /// A transaction's isolation level.
    public enum Isolation: String, Sendable {
        case readCommitted = "READ COMMITTED"
        case repeatableRead = "REPEATABLE READ"
        case serializable = "SERIALIZABLE"
    }

    let link: WatchedConnection
    let logger: Logger
    let deadlines: PostgresDeadlines
    /// When the whole session (a transaction, or the statements of one call) must be over.
    let sessionDeadline: Date
    /// Statements sent by `send` whose outcome is not yet known.
    private let deferred = Deferred()

    /// Sent statements, each answered in turn (the connection runs one statement at a time,
    /// in the order they were given).
    private final class Deferred {
        var answers: [WatchedConnection.Answer] = []
        /// A write not yet sent (`hold`), with the key of the row it writes.
        var held: (key: Int64, query: PostgresQuery)?
    }

    init(link: WatchedConnection, deadlines: PostgresDeadlines, logger: Logger) {
        self.link = link
        self.logger = logger
        self.deadlines = deadlines
        sessionDeadline = Date().addingTimeInterval(deadlines.transaction)
    }

    /// When a statement sent now must have answered.
    private var statementDeadline: Date {
        min(Date().addingTimeInterval(deadlines.statement), sessionDeadline)
    }

    /// Every row the statement returns. A failure of a statement sent before it (`send`) is
    /// thrown first: it is the cause, and whatever followed it in a transaction failed with it.
    /// A write held back (`hold`) is sent before it, unless it is the write of row `unaffected`,
    /// which this statement is known not to read.
    @discardableResult
    public func rows(_ query: PostgresQuery, unaffectedBy unaffected: Int64? = nil) throws(PostgresError) -> [PostgresRow] {
        if unaffected == nil || deferred.held?.key != unaffected { sendHeld() }
        let answer = link.send(query, logger: logger)
        try settleSent()
        return Array(try link.wait(answer, deadline: statementDeadline).rows)
    }

    /// Runs a statement whose rows, if any, are not wanted.
    public func execute(_ query: PostgresQuery) throws(PostgresError) {
        try rows(query)
    }

    /// Sends a statement whose rows are not wanted without waiting for it: the connection runs
    /// it before any later statement, and the next call that waits (`rows`, `execute`, `value`,
    /// `values`, a transaction's COMMIT) throws its failure. A write in a transaction needs no
    /// answer until then, so the caller does not wait a round trip for each.
    public func send(_ query: PostgresQuery) throws(PostgresError) {
        sendHeld()
        deferred.answers.append(link.send(query, logger: logger))
        // A long run of writes (a rebuild) waits now and then, so that the sent statements
        // never pile up in memory.
        if deferred.answers.count >= Self.mostUnanswered { try settle() }
    }

    /// Holds back a write of the row keyed `key`, so that a later write of the same row can do
    /// its work too (`takeHeld`): one statement where there would be two. Any other statement
    /// sends it first, so what runs is what was asked, in order; so does a second `hold`.
    public func hold(_ query: PostgresQuery, key: Int64) {
        sendHeld()
        deferred.held = (key, query)
    }

    /// Whether a write of row `key` was held back; the caller's next statement does its work
    /// instead, and it is dropped.
    public func takeHeld(key: Int64) -> Bool {
        guard deferred.held?.key == key else { return false }
        deferred.held = nil
        return true
    }

    private func sendHeld() {
        guard let held = deferred.held else { return }
        deferred.held = nil
        deferred.answers.append(link.send(held.query, logger: logger))
    }

    /// How many sent statements may wait for their answers at once.
    static let mostUnanswered = 256

    /// Waits for every sent statement (already answered, when a later one has been) and throws
    /// the first failure among them.
    public func settle() throws(PostgresError) {
        sendHeld()
        try settleSent()
    }

    /// Waits for the statements already sent; a held write stays held.
    private func settleSent() throws(PostgresError) {
        guard !deferred.answers.isEmpty else { return }
        let answers = deferred.answers
        deferred.answers.removeAll()
        var first: PostgresError?
        for answer in answers {
            do {
                _ = try link.wait(answer, deadline: statementDeadline)
            } catch {
                if first == nil { first = error }
            }
        }
        if let first { throw first }
    }

    /// The first column of the first row, nil when there is no row (or the value is null).
    public func value<T: PostgresDecodable>(_ query: PostgresQuery, as type: T.Type = T.self) throws(PostgresError) -> T? {
        guard let row = try rows(query).first, let cell = row.first(where: { _ in true }), cell.bytes != nil else { return nil }
        do {
            return try cell.decode(T.self)
        } catch {
            throw PostgresError(error)
        }
    }

    /// The first column of every row.
    public func values<T: PostgresDecodable>(_ query: PostgresQuery, as type: T.Type = T.self) throws(PostgresError) -> [T] {
        do {
            return try rows(query).compactMap { row in try row.first(where: { _ in true })?.decode(T.self) }
        } catch let error as PostgresError {
            throw error
        } catch {
            throw PostgresError(error)
        }
    }

    /// Runs `body` between BEGIN and COMMIT (ROLLBACK when it throws, or always with `commit`
    /// false) at `isolation`.
    public func transaction<T>(_ isolation: Isolation, commit: Bool = true, _ body: (PostgresSession) throws -> T) throws -> T {
        // Its answer comes with the body's first statement that waits.
        try send(PostgresQuery(unsafeSQL: "BEGIN ISOLATION LEVEL \(isolation.rawValue)"))
        let result: T
        do {
            result = try body(self)
        } catch {
            deferred.held = nil
            try? execute("ROLLBACK")
            throw error
        }
        do {
            try execute(commit ? "COMMIT" : "ROLLBACK")
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        return result
    }
}
