import Catalog
import CatalogFixtures
import CatalogImports
import Foundation
import GRDB
import Moments

/// An SQLite catalog holding something of everything a copy moves: pictures with variants and
/// jobs (a duplicate and a failure among them), automatic moments, a declared place and a
/// private moment with an invitee (so candidates too), a cover its creator set, outbox events,
/// webhook deliveries (some delivered, some failed, some not yet tried, to two endpoints) and
/// import runs with their journal.
struct SourceCatalog: Sendable {
    let catalog: Catalog
    let directory: String
    var path: String { catalog.path }

    static let placeId: Int64 = 7
    static let momentId: Int64 = 42
    static let centre = Coordinate(latitude: 48.8566, longitude: 2.3522)
    static let endpoints = ["https://hooks.example/a", "https://hooks.example/b"]
    /// The time every record of the fixture is dated by, so that counts "in the last hour" agree.
    static let now = 1_700_400_000.0

    /// A new catalog in a temporary folder of its own; `seed` makes its pictures (another seed,
    /// another catalog).
    static func make(pictures count: Int, seed: UInt64, webhooks: Bool = true) throws -> SourceCatalog {
        let directory = NSTemporaryDirectory() + "darkroom-copy-" + UUID().uuidString
        let catalog = try Catalog(path: directory + "/catalog.sqlite")
        let source = SourceCatalog(catalog: catalog, directory: directory)
        _ = try catalog.declarePlace(id: placeId, name: "Louvre", center: centre, radiusMetres: 300)
        let declared = Moment(id: momentId, kind: .declared, placeId: placeId, start: Date(timeIntervalSince1970: 1_700_000_000),
                              end: Date(timeIntervalSince1970: 1_700_007_200), creator: "ana", visibility: .private,
                              invitees: ["ben"], title: "Opening night")
        _ = try catalog.declareMoment(declared, id: momentId, as: .create)
        try source.add(pictures: count, seed: seed)
        if let cover = try catalog.pictures(inMoment: momentId, after: nil, limit: 3).pictures.last?.id {
            _ = try catalog.setCover(momentId: momentId, pictureId: cover, by: "ana")
        }
        if webhooks { try source.deliverSome() }
        try source.recordImports(seed: seed)
        return source
    }

    /// Commits `count` pictures, each with two variants and its job, then a duplicate and a failure.
    func add(pictures count: Int, seed: UInt64) throws {
        for (i, picture) in SyntheticOutings.pictures(seed: seed, count: count).enumerated() {
            var picture = picture
            picture.thumbHash = "th\(seed)-\(i)"
            picture.title = i % 7 == 0 ? "title \(i)" : nil
            picture.cameraCapturedAt = i % 11 == 0 ? 1_699_999_000 : nil
            let variants = ["thumb", "preview"].map { name in
                VariantRecord(pictureId: 0, name: name, path: "variants/\(name)/\(picture.sha256).jpg", width: 320, height: 240,
                              bytes: Int64(1000 + i), format: "jpeg")
            }
            // Every hundredth arrived as an upload, named by its upload id (what GET /v1/uploads/{id} finds).
            let name = i % 100 == 0 ? Self.uploadId(seed, i) + ".jpg" : "p\(seed)-\(i).jpg"
            _ = try catalog.commitPicture(picture, variants: variants, job: Self.job(name, outcome: .added))
        }
        guard let first = try catalog.read({ db in try Int64.fetchOne(db, sql: "SELECT MIN(id) FROM pictures") }) else { return }
        try catalog.recordDuplicate(Self.job(Self.uploadId(seed, 1_000_000) + ".jpg", outcome: .duplicate), of: first)
        var failed = Self.job(Self.uploadId(seed, 1_000_001) + ".jpg", outcome: .failed)
        failed.error = "not a photo: the bytes look like a PDF"
        failed.failureCategory = "unsupported_format"
        try catalog.recordFailure(failed)
    }

    /// An upload id (32 hexadecimal digits) of the fixture's.
    static func uploadId(_ seed: UInt64, _ i: Int) -> String {
        String(format: "%016llx%016llx", seed ^ 0xF00D, UInt64(i))
    }

    static func job(_ name: String, outcome: JobRecord.Outcome) -> JobRecord {
        JobRecord(sourceName: name, claimPath: "processing/w.1/" + name, sha256: nil, outcome: outcome, pictureId: nil, attempts: 1,
                  error: nil, sidecarJson: outcome == .added ? "{\"author_id\":\"ana\"}" : nil, worker: "host.1",
                  startedAt: now - 30, finishedAt: now - 29.5)
    }

    /// Webhook progress as a dispatcher leaves it: to the first endpoint 200 events delivered,
    /// 40 failed (due again later) and the rest not yet taken on; to the second, 30 delivered.
    func deliverSome() throws {
        let (a, b) = (Self.endpoints[0], Self.endpoints[1])
        let claimed = try catalog.claimWebhookDeliveries(endpoint: a, dueBy: Self.now + 1e9, leaseUntil: Self.now + 60, limit: 240)
        for (i, claim) in claimed.enumerated() {
            guard let id = claim.event.id else { continue }
            if i < 200 {
                try catalog.recordWebhookDelivered(outboxId: id, endpoint: a, status: 204, at: Self.now, endpoints: Self.endpoints)
            } else {
                try catalog.recordWebhookFailure(outboxId: id, endpoint: a, status: 503, reason: "503 Service Unavailable", retryAt: Self.now + 120)
            }
        }
        for claim in try catalog.claimWebhookDeliveries(endpoint: b, dueBy: Self.now + 1e9, leaseUntil: Self.now + 60, limit: 30) {
            guard let id = claim.event.id else { continue }
            try catalog.recordWebhookDelivered(outboxId: id, endpoint: b, status: 200, at: Self.now + 1, endpoints: Self.endpoints)
        }
    }

    /// A finished import run with a journal row per picture of its first 30, and one killed
    /// while running.
    func recordImports(seed: UInt64) throws {
        let run = try catalog.startImport(ImportRunRecord(roots: "[\"/photos/\(seed)\"]", mode: "copy", worker: "host.1", startedAt: Self.now - 600))
        let pictures = try catalog.read { db in try PictureRecord.all(in: db, limit: 30) }
        for (i, picture) in pictures.enumerated() {
            try catalog.recordImportedFile(ImportFileRecord(
                sourcePath: "/photos/\(seed)/\(i).jpg", directory: "/photos/\(seed)", size: 1000 + Int64(i), modifiedNs: 1_690_000_000_000_000_000,
                outcome: .added, sha256: picture.sha256, pictureId: picture.id, jobId: picture.id, error: nil,
                sidecars: i % 2 == 0 ? "[\"takeout:\(i).jpg.json\"]" : nil, importId: run, finishedAt: Self.now - 500))
        }
        try catalog.finishImport(id: run, outcome: .finished, reportJSON: "{\"added\":\(pictures.count)}", at: Self.now - 400)
        _ = try catalog.startImport(ImportRunRecord(roots: "[\"/photos/later\"]", mode: "link", worker: "host.2", startedAt: Self.now - 300))
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
