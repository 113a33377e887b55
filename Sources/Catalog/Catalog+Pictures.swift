import Foundation
import GRDB
import Moments

/// What committing a processed photo did.
public enum CommitOutcome: Sendable, Equatable {
    /// A new picture, with its id and the moment it joined (if any).
    case added(pictureId: Int64, momentId: Int64?)
    /// The same bytes were already a picture: recorded as a duplicate of it.
    case duplicate(of: Int64)
}

extension Catalog {
    /// Commits a processed photo in one transaction: the picture, its variants, its moment,
    /// the job that brought it and the outbox events, or, when the bytes are already catalogued,
    /// only the job, as a duplicate. Call it after the files are durable in the library.
    public func commitPicture(_ picture: PictureRecord, variants: [VariantRecord], job: JobRecord) throws(CatalogError) -> CommitOutcome {
        try write { db in
            var job = job
            if let existingId = try PictureRecord.id(ofSHA256: picture.sha256, in: db) {
                job.outcome = .duplicate
                job.pictureId = existingId
                try job.insert(db)
                try complete(existingId, by: picture.captureFacts, at: job.finishedAt, db)
                return .duplicate(of: existingId)
            }
            var picture = picture
            try picture.insert(db)
            guard let pictureId = picture.id else { throw CatalogError.other("inserted picture has no id") }
            for var variant in variants {
                variant.pictureId = pictureId
                try variant.insert(db)
            }
            job.outcome = .added
            job.pictureId = pictureId
            try job.insert(db)
            // The picture joins its moment in this same transaction: serialised with
            // every other writer, so two photos of one new moment make one moment.
            var store = CatalogMomentStore(db: db)
            let events = try MomentEngine(rules: momentRules, naming: GazetteerNaming.standard).ingest(picture.momentFacts, into: &store)
            try OutboxWriter(db: db, at: job.finishedAt).record(events)
            return .added(pictureId: pictureId, momentId: try store.momentId(ofPicture: pictureId))
        }
    }

    /// Records a photo whose bytes are already a picture: a duplicate of it. Its sidecar
    /// is kept in the job row. With `facts` (what the duplicate's metadata says), the picture
    /// takes what it lacks from them in the same transaction (`PictureRecord.completed(by:)`)
    /// and moves to the moment those facts give it.
    public func recordDuplicate(_ job: JobRecord, of pictureId: Int64, facts: CaptureFacts?) throws(CatalogError) {
        try write { db in
            var job = job
            job.outcome = .duplicate
            job.pictureId = pictureId
            try job.insert(db)
            if let facts { try complete(pictureId, by: facts, at: job.finishedAt, db) }
        }
    }

    /// Records a duplicate without its metadata: the picture is left as it is.
    public func recordDuplicate(_ job: JobRecord, of pictureId: Int64) throws(CatalogError) {
        try recordDuplicate(job, of: pictureId, facts: nil)
    }

    /// Completes picture `id` from a duplicate's facts, if they give it anything: the engine
    /// files it again with its new facts (it may leave its moment, join or create another, as a
    /// new picture with them would), the outbox records that as for an added picture, and the
    /// rest of the columns follow.
    private func complete(_ id: Int64, by facts: CaptureFacts, at instant: Double, _ db: Database) throws {
        guard let picture = try PictureRecord.fetchOne(db, key: id), let completed = picture.completed(by: facts) else { return }
        var store = CatalogMomentStore(db: db)
        let before = try store.momentId(ofPicture: id)
        // The engine compares the new facts with the row's: it runs before the row changes.
        let events = try MomentEngine(rules: momentRules, naming: GazetteerNaming.standard).ingest(completed.momentFacts, into: &store)
        try completed.update(db, columns: PictureRecord.completedColumns)
        try OutboxWriter(db: db, at: instant).record(MomentEvent.refiled(events, pictureId: id, before: before))
    }

    /// Records a photo that could not be processed (it is in `failed/` with its reason).
    public func recordFailure(_ job: JobRecord) throws(CatalogError) {
        try write { db in
            var job = job
            job.outcome = .failed
            try job.insert(db)
        }
    }

    /// The job that committed this claim, if any.
    public func finishedJob(claimPath: String) throws(CatalogError) -> JobRecord? {
        try read { db in try JobRecord.finished(claimPath: claimPath, in: db) }
    }

    /// The newest job recorded under this claim path (an import's file version), if any.
    public func latestJob(claimPath: String) throws(CatalogError) -> JobRecord? {
        try read { db in
            try JobRecord.filter(Column("claim_path") == claimPath).order(Column("id").desc).fetchOne(db)
        }
    }

    /// The latest job of a photo that arrived under any of these spool names, if one finished.
    public func latestJob(sourceNames: [String]) throws(CatalogError) -> JobRecord? {
        try read { db in try JobRecord.latest(sourceNames: sourceNames, in: db) }
    }

    /// A picture by id.
    public func picture(id: Int64) throws(CatalogError) -> PictureRecord? {
        try read { db in try PictureRecord.fetchOne(db, key: id) }
    }

    /// A picture by content hash.
    public func picture(sha256: String) throws(CatalogError) -> PictureRecord? {
        try read { db in try PictureRecord.withSHA256(sha256, in: db) }
    }

    /// The variants of one picture.
    public func variants(ofPicture id: Int64) throws(CatalogError) -> [VariantRecord] {
        try read { db in try VariantRecord.of(picture: id, in: db) }
    }
}
