import Catalog
import Foundation
import GRDB
import Logging
import PostgresCatalog
import PostgresStore

/// `darkroom catalog copy`: moves an SQLite catalog into an empty PostgreSQL one, table by
/// table in the order their references need, every row with its id (places, moments with their
/// covers, invitees, pictures, candidates, variants, jobs, the outbox with its ids, webhook
/// deliveries and their totals, import runs and their journal), then checks every count.
///
/// The source is read from one snapshot and never written. Rows go in batches, each committed
/// with the copy's progress (`CopyTarget`), so a copy killed at any point is continued by the
/// same command; what PostgreSQL derives from the rows (positions, boxes) is filled in the same
/// transactions by the catalog's own functions, and its identity columns end past the copied ids.
public struct CatalogCopy: Sendable {
    /// The SQLite catalog to copy.
    public let sourcePath: String
    /// The PostgreSQL catalog to copy into.
    public let target: PostgresLocation
    /// Rows per INSERT and transaction.
    public let batchSize: Int
    public let logger: Logger

    /// Rows per batch when none is asked for: few enough that a batch's statement stays well
    /// under PostgreSQL's parameter limit, many enough that round trips do not dominate.
    public static let defaultBatchSize = 500

    public init(sourcePath: String, target: PostgresLocation, batchSize: Int = CatalogCopy.defaultBatchSize, logger: Logger) {
        self.sourcePath = sourcePath
        self.target = target
        self.batchSize = max(1, batchSize)
        self.logger = logger
    }

    /// Copies (or continues, or only checks, a copy already made) and returns its summary;
    /// throws when it cannot, or when the counts differ at the end.
    public func run(progress: CopyProgress) throws(CatalogCopyError) -> CatalogCopySummary {
        let began = Date()
        let source = try CopySource(path: sourcePath)
        do {
            // The catalog's own tables, as any command opening it would make them.
            try PostgresCatalog(location: target, maximumConnections: 1, logger: logger).close()
        } catch {
            throw .target(error)
        }
        let destination = try CopyTarget(location: target)
        defer { destination.close() }
        logger.info("catalog copy", metadata: ["source": "\(source.path)", "target": "\(target)", "batch_size": "\(batchSize)"])
        do {
            let (summary, changed) = try destination.holdingLock {
                try source.snapshot { db in try copy(db, from: source, to: destination, progress: progress, began: began) }
            }
            var finished = summary
            finished.sourceChanged = changed
            finished.seconds = Date().timeIntervalSince(began)
            return finished
        } catch let error as CatalogCopyError {
            progress.end()
            throw error
        } catch {
            progress.end()
            throw CopyTarget.failure(error, table: "catalog_copies", target)
        }
    }

    private func copy(_ db: Database, from source: CopySource, to destination: CopyTarget, progress: CopyProgress,
                      began: Date) throws -> CatalogCopySummary {
        try source.check(db)
        var plans: [TablePlan] = []
        var leftBehind: [String] = []
        var sourceCounts: [String: Int] = [:]
        for table in CopiedTable.all {
            guard let columns = try source.columns(of: table.name, db) else {
                throw CatalogCopyError.sourceSchema(source.path, reason: "has no table \(table.name), which its migrations make: it may be damaged")
            }
            let rows = try source.count(table.name, db)
            guard let targetColumns = try destination.columns(of: table.name) else {
                // Running totals are derived from their table's rows, which are copied; any
                // other table must have nothing to lose.
                guard table.totals || rows == 0 else {
                    throw CatalogCopyError.schemaMismatch(table: table.name,
                        reason: "the PostgreSQL catalog has no such table, and the SQLite one holds \(rows) rows of it")
                }
                leftBehind.append(table.name)
                continue
            }
            let keys = table.totals ? try destination.keyColumns(of: table.name) : []
            plans.append(try TablePlan(table, sourceColumns: columns, targetColumns: targetColumns, keyColumns: keys, batchSize: batchSize))
            sourceCounts[table.name] = rows
        }
        let start = try prepare(plans, db, source: source, destination: destination)
        let record = try destination.record()?.tables ?? [:]

        let left = plans.filter { record[$0.table.name]?.finished != true }
            .reduce(0) { $0 + max(0, (sourceCounts[$1.table.name] ?? 0) - (record[$1.table.name]?.rowsCopied ?? 0)) }
        progress.begin(total: left)
        var written = 0
        for plan in plans {
            var state = record[plan.table.name] ?? CopyTarget.TableProgress(lastKey: nil, rowsCopied: 0, finished: false)
            guard !state.finished else { continue }
            while true {
                let rows: [Row]
                do {
                    rows = try source.rows(of: plan.table.name, columns: plan.columns.map(\.name), after: state.lastKey,
                                           limit: plan.batchRows, db)
                } catch {
                    throw CatalogCopyError.sourceRead(table: plan.table.name, reason: CopySource.reason(error))
                }
                guard let last = rows.last else { break }
                let key: Int64 = last[0]
                try destination.copy(plan, rows: rows, lastKey: key)
                state.lastKey = key
                state.rowsCopied += rows.count
                written += rows.count
                progress.advance(table: plan.table.name, rows: rows.count)
            }
            try destination.finish(plan, given: try source.highestIdGiven(plan.table.name, db))
            progress.finished(table: plan.table.name, rows: state.rowsCopied)
        }
        progress.end()

        try check(plans, db, source: source, destination: destination, counts: sourceCounts)
        if start != .alreadyDone { try destination.finishCopy() }
        return CatalogCopySummary(
            source: source.path, target: target.description, start: start,
            tables: plans.map { .init(table: $0.table.name, rows: sourceCounts[$0.table.name] ?? 0) },
            leftBehind: leftBehind, rowsWritten: written, seconds: Date().timeIntervalSince(began), sourceChanged: false)
    }

    /// Finds where the PostgreSQL catalog stands and records the copy there: a fresh copy
    /// needs it empty; a copy of this catalog already there continues if its source is
    /// unchanged, and starts over if not, provided nothing but the copy has written to it.
    private func prepare(_ plans: [TablePlan], _ db: Database, source: CopySource,
                         destination: CopyTarget) throws -> CatalogCopySummary.Start {
        let names = plans.map(\.table.name)
        let counted = plans.filter { !$0.table.totals }.map(\.table.name)
        let identity = try source.identity(db)
        let digest = try source.digest(plans.map { ($0.table.name, $0.columns.map(\.name)) }, db)
        let there = try destination.counts(counted)
        guard let record = try destination.record() else {
            let held = counted.filter { (there[$0] ?? 0) > 0 }.map { "\(there[$0] ?? 0) rows of \($0)" }
            guard held.isEmpty else {
                throw CatalogCopyError.targetNotEmpty(location: target.description, holds: held.joined(separator: ", "))
            }
            try destination.begin(source: source.path, identity: identity, digest: digest, tables: names, emptying: [])
            return .fresh
        }
        guard record.identity == identity else {
            throw CatalogCopyError.targetHoldsOtherCopy(location: target.description, copiedFrom: record.sourcePath)
        }
        for table in counted {
            let copied = record.tables[table]?.rowsCopied ?? 0
            if (there[table] ?? 0) != copied {
                throw CatalogCopyError.targetChanged(location: target.description, table: table, there: there[table] ?? 0, copied: copied)
            }
        }
        if record.digest != digest {
            logger.notice("catalog copy: the source has changed since it was copied; copying it again from the start",
                          metadata: ["source": "\(source.path)", "target": "\(target)"])
            try destination.begin(source: source.path, identity: identity, digest: digest, tables: names, emptying: names)
            return .restarted
        }
        try destination.track(names)
        if record.finishedAt != nil { return .alreadyDone }
        let done = record.tables.values.reduce(0) { $0 + $1.rowsCopied }
        logger.info("catalog copy: continuing an interrupted copy", metadata: ["rows_already_copied": "\(done)", "target": "\(target)"])
        return .resumed
    }

    /// Holds the copy to its source: every table's rows, PostgreSQL's derived values against
    /// SQLite's R*Tree entries, the running totals value for value.
    private func check(_ plans: [TablePlan], _ db: Database, source: CopySource, destination: CopyTarget,
                       counts: [String: Int]) throws {
        var differences: [CountDifference] = []
        let there = try destination.counts(plans.map(\.table.name))
        for plan in plans {
            let name = plan.table.name
            if (counts[name] ?? 0) != (there[name] ?? 0) {
                differences.append(CountDifference(table: name, source: counts[name] ?? 0, target: there[name] ?? 0))
            }
            if let derived = plan.table.derived?.counted {
                let expected = try source.count(derived.sqlite, db)
                let found = try destination.count(derived.postgres)
                if expected != found { differences.append(CountDifference(table: derived.name, source: expected, target: found)) }
            }
            if plan.table.totals {
                let columns = plan.columns.map(\.name)
                let mine = try source.textRows(of: name, columns: columns, db)
                let theirs = try destination.rows(of: name, columns: columns)
                for column in columns where mine.map({ $0[column] }) != theirs.map({ $0[column] }) {
                    differences.append(CountDifference(table: "\(name).\(column)", source: Int(mine.first?[column] ?? "") ?? 0,
                                                       target: Int(theirs.first?[column] ?? "") ?? 0))
                }
            }
        }
        guard differences.isEmpty else { throw CatalogCopyError.countsDiffer(differences) }
    }
}
