import Catalog
import Foundation
import Moments
import PostgresNIO
import PostgresStore

extension PostgresCatalog: PictureCatalog {
    /// Commits a processed photo in one transaction, as the SQLite catalog does: the picture,
    /// its variants, its moment, the job and the outbox events; or, when the bytes are already
    /// a picture (a worker on another machine may have committed them a moment ago), the job
    /// as a duplicate.
    public func commitPicture(_ picture: PictureRecord, variants: [VariantRecord], job: JobRecord) throws(CatalogError) -> CommitOutcome {
        try commitPicture(picture, variants: variants, job: job, completing: nil)
    }

    /// The commit, completing a queue job in the same transaction when `completing` is given.
    func commitPicture(_ picture: PictureRecord, variants: [VariantRecord], job: JobRecord,
                       completing photo: QueuedPhoto?) throws(CatalogError) -> CommitOutcome {
        try write { session in
            try Self.complete(photo, session)
            var job = job
            var picture = picture
            picture.id = nil
            // The insert is the duplicate check: no id comes back when the bytes are already a
            // picture (one committed by another transaction since this one began is a lost race,
            // retried, which then finds it here). Its variants and its job go in the same
            // statement, which inserts them only with the picture.
            var added = job
            added.outcome = .added
            added.pictureId = 0  // replaced by the inserted picture's id
            let dependents = variants.map { PostgresRowCoding.Dependent($0, into: "variants", reference: "picture_id") }
                + [PostgresRowCoding.Dependent(added, into: "jobs", reference: "picture_id")]
            // The moments engine's first question about a located picture (its declared
            // moments, neighbours and places) is asked in the same statement.
            var store = PostgresMomentStore(session: session, rules: momentRules)
            let inserted = try session.rows(
                try PostgresRowCoding.insert(picture, into: "pictures", suffix: "ON CONFLICT (sha256) DO NOTHING", returning: "id",
                                             with: dependents, alongside: store.placingAlongside(of: picture.momentFacts, rules: momentRules),
                                             naming: Self.column))
            guard let pictureId = try inserted.first?.makeRandomAccess()[0].decode(Int64.self) else {
                guard let existing = try session.value("SELECT id FROM pictures WHERE sha256 = \(picture.sha256)", as: Int64.self) else {
                    throw CatalogError.other("picture \(picture.sha256) was neither inserted nor found")
                }
                job.outcome = .duplicate
                job.pictureId = existing
                try Self.insert(job, into: "jobs", session)
                try complete(existing, by: picture.captureFacts, at: job.finishedAt, session)
                return .duplicate(of: existing)
            }
            picture.id = pictureId
            job = added
            job.pictureId = pictureId
            store.knowNew(pictureId: pictureId)
            try store.knowPlacing(of: picture.momentFacts, rows: inserted, rules: momentRules)
            let events = try MomentEngine(rules: momentRules, naming: GazetteerNaming.standard).ingest(picture.momentFacts, into: &store)
            try Self.recordOutbox(events, at: job.finishedAt, session, known: [pictureId: picture.thumbHash])
            return .added(pictureId: pictureId, momentId: try store.momentId(ofPicture: pictureId))
        }
    }

    /// Records a photo whose bytes are already a picture; with `facts`, the picture takes what
    /// it lacks from them, as in SQLite (`Catalog.recordDuplicate(_:of:facts:)`).
    public func recordDuplicate(_ job: JobRecord, of pictureId: Int64, facts: CaptureFacts?) throws(CatalogError) {
        try recordDuplicate(job, of: pictureId, facts: facts, completing: nil)
    }

    /// Records a duplicate without its metadata: the picture is left as it is.
    public func recordDuplicate(_ job: JobRecord, of pictureId: Int64) throws(CatalogError) {
        try recordDuplicate(job, of: pictureId, facts: nil, completing: nil)
    }

    func recordDuplicate(_ job: JobRecord, of pictureId: Int64, facts: CaptureFacts?, completing photo: QueuedPhoto?) throws(CatalogError) {
        try write { session in
            try Self.complete(photo, session)
            var job = job
            job.outcome = .duplicate
            job.pictureId = pictureId
            try Self.insert(job, into: "jobs", session)
            if let facts { try complete(pictureId, by: facts, at: job.finishedAt, session) }
        }
    }

    /// Completes picture `id` from a duplicate's facts, if they give it anything, as SQLite
    /// does: the engine files it again with its new facts, the outbox records that as for an
    /// added picture, and the rest of the columns follow. The row is locked first: of two
    /// duplicates completing it at once, the later one waits, is retried as a serialisation
    /// conflict, and then finds nothing to add.
    private func complete(_ id: Int64, by facts: CaptureFacts, at instant: Double, _ session: PostgresSession) throws {
        guard let row = try session.rows("SELECT * FROM pictures WHERE id = \(id) FOR UPDATE").first,
              let completed = try Self.record(PictureRecord.self, row).completed(by: facts) else { return }
        var store = PostgresMomentStore(session: session, rules: momentRules)
        let before = try store.momentId(ofPicture: id)
        // The engine compares the new facts with the row's: it runs before the row changes.
        let events = try MomentEngine(rules: momentRules, naming: GazetteerNaming.standard).ingest(completed.momentFacts, into: &store)
        let p = completed
        try session.send("""
            UPDATE pictures SET captured_at = \(p.capturedAt), captured_local = \(p.capturedLocal),
              captured_offset = \(p.capturedOffset), time_source = \(p.timeSource), time_zone_source = \(p.timeZoneSource),
              time_trusted = \(p.timeTrusted), camera_captured_at = \(p.cameraCapturedAt), altitude = \(p.altitude),
              position_error = \(p.positionError), location_source = \(p.locationSource),
              camera_latitude = \(p.cameraLatitude), camera_longitude = \(p.cameraLongitude), metadata_json = \(p.metadataJson)
            WHERE id = \(id)
            """)
        try Self.recordOutbox(MomentEvent.refiled(events, pictureId: id, before: before), at: instant, session)
    }

    /// Records a photo that could not be processed.
    public func recordFailure(_ job: JobRecord) throws(CatalogError) {
        try recordFailure(job, completing: nil)
    }

    /// With `completing`, the queue job fails for good with the same reason (the worker has
    /// already tried again what could pass).
    func recordFailure(_ job: JobRecord, completing photo: QueuedPhoto?) throws(CatalogError) {
        try write { session in
            try Self.complete(photo, session, failure: job.error ?? "failed")
            var job = job
            job.outcome = .failed
            try Self.insert(job, into: "jobs", session)
        }
    }

    /// The job that committed this claim, if any.
    public func finishedJob(claimPath: String) throws(CatalogError) -> JobRecord? {
        try readOne { session in
            try session.rows("SELECT * FROM jobs WHERE claim_path = \(claimPath) ORDER BY id LIMIT 1").first.map { try Self.record(JobRecord.self, $0) }
        }
    }

    /// The newest job recorded under this claim path, if any.
    public func latestJob(claimPath: String) throws(CatalogError) -> JobRecord? {
        try readOne { session in
            try session.rows("SELECT * FROM jobs WHERE claim_path = \(claimPath) ORDER BY id DESC LIMIT 1").first.map { try Self.record(JobRecord.self, $0) }
        }
    }

    /// A picture by content hash.
    public func picture(sha256: String) throws(CatalogError) -> PictureRecord? {
        try readOne { session in
            try session.rows("SELECT * FROM pictures WHERE sha256 = \(sha256)").first.map { try Self.record(PictureRecord.self, $0) }
        }
    }

    /// A picture by id.
    public func picture(id: Int64) throws(CatalogError) -> PictureRecord? {
        try readOne { session in
            try session.rows("SELECT * FROM pictures WHERE id = \(id)").first.map { try Self.record(PictureRecord.self, $0) }
        }
    }

    /// The variants of one picture.
    public func variants(ofPicture id: Int64) throws(CatalogError) -> [VariantRecord] {
        try readOne { session in
            try session.rows("SELECT * FROM variants WHERE picture_id = \(id) ORDER BY name").map { try Self.record(VariantRecord.self, $0) }
        }
    }

    /// Every picture, by id (for checks and exports).
    public func allPictures() throws(CatalogError) -> [PictureRecord] {
        try readOne { session in try session.rows("SELECT * FROM pictures ORDER BY id").map { try Self.record(PictureRecord.self, $0) } }
    }

    /// Every job, by id.
    public func allJobs() throws(CatalogError) -> [JobRecord] {
        try readOne { session in try session.rows("SELECT * FROM jobs ORDER BY id").map { try Self.record(JobRecord.self, $0) } }
    }

    /// Every outbox event, by id.
    public func allOutboxEvents() throws(CatalogError) -> [OutboxEvent] {
        try readOne { session in try session.rows("SELECT * FROM outbox ORDER BY id").map { try Self.record(OutboxEvent.self, $0) } }
    }

    /// Inserts a record in a write transaction, without waiting for the answer (its COMMIT does).
    static func insert<R: Encodable>(_ record: R, into table: String, _ session: PostgresSession) throws {
        try session.send(try PostgresRowCoding.insert(record, into: table, naming: column))
    }

    /// The engine's events as outbox rows, in this transaction, in one statement. `known` holds
    /// placeholders already in hand (the picture being committed), which need no query.
    static func recordOutbox(_ events: [MomentEvent], at instant: Double, _ session: PostgresSession,
                             known: [Int64: String?] = [:]) throws {
        let rows = try OutboxWriter.rows(for: events, at: instant) { picture in
            if let hash = known[picture] { return hash }
            return try session.value("SELECT thumb_hash FROM pictures WHERE id = \(picture)", as: String.self)
        }
        guard !rows.isEmpty else { return }
        var binds = PostgresBindings(capacity: rows.count * 5)
        var groups: [String] = []
        for row in rows {
            let first = binds.count + 1
            groups.append("($\(first), $\(first + 1), $\(first + 2), $\(first + 3), $\(first + 4))")
            binds.append(row.event.rawValue)
            binds.append(row.momentId)
            binds.append(row.pictureId)
            binds.append(row.payload)
            binds.append(row.createdAt)
        }
        try session.send(PostgresQuery(unsafeSQL: "INSERT INTO outbox (event, moment_id, picture_id, payload, created_at) VALUES "
                                          + groups.joined(separator: ", "), binds: binds))
    }
}
