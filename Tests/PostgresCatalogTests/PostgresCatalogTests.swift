import Catalog
import CatalogFixtures
import Foundation
import Moments
@testable import PostgresCatalog
import PostgresHarness
import PostgresStore
import SeededRandom
import Testing

/// The catalog in a real PostgreSQL server (a temporary cluster this test process starts and
/// stops), held to what the SQLite catalog does with the same photos.
@Suite("The catalog in PostgreSQL", .enabled(if: SharedCluster.available, Comment(rawValue: SharedCluster.skipReason)))
struct PostgresCatalogTests {
    static func catalog() throws -> PostgresCatalog {
        try PostgresCatalog(location: try SharedCluster.freshDatabase(), maximumConnections: 12)
    }

    static func sqlite() throws -> (Catalog, String) {
        let directory = NSTemporaryDirectory() + "darkroom-pg-parity-" + UUID().uuidString
        return (try Catalog(path: directory + "/catalog.sqlite"), directory)
    }

    /// The catalog tests' random outings, each with a placeholder to carry through.
    static func photos(seed: UInt64, count: Int) -> [PictureRecord] {
        SyntheticOutings.pictures(seed: seed, count: count).enumerated().map { i, picture in
            var picture = picture
            picture.thumbHash = "th\(i)"
            return picture
        }
    }

    static func job(_ i: Int) -> JobRecord {
        JobRecord(sourceName: "p\(i).jpg", claimPath: "c/\(i)", sha256: nil, outcome: .added, pictureId: nil, attempts: 1,
                  error: nil, sidecarJson: nil, worker: "w", startedAt: 10, finishedAt: 10.25)
    }

    /// Declares the same place and public moment in either store, so declared and automatic moments mix.
    static let centre = Coordinate(latitude: 48.8566, longitude: 2.3522)
    static let declared = Moment(id: 0, kind: .declared, placeId: 7, start: Date(timeIntervalSince1970: 1_700_000_000),
                                 end: Date(timeIntervalSince1970: 1_700_007_200))

    /// Moments as sets of picture hashes, with the moment's kind and cover: what must not
    /// depend on the store, the order or the number of workers.
    static func partition(_ catalog: PostgresCatalog) throws -> Set<[String]> {
        try catalog.read { session in
            var groups: [Int64: [String]] = [:]
            for row in try session.rows("""
                SELECT m.id, m.kind, p.sha256, COALESCE(c.sha256, '') FROM pictures p
                JOIN moments m ON m.id = p.moment_id LEFT JOIN pictures c ON c.id = m.cover_picture_id
                """) {
                let (id, kind, sha, cover) = try row.decode((Int64, String, String, String).self)
                groups[id, default: ["\(kind) \(id > 0 ? "\(id)" : "auto") cover:\(cover)"]].append(sha)
            }
            return Set(groups.values.map { [$0[0]] + $0.dropFirst().sorted() })
        }
    }

    static func partition(_ catalog: Catalog) throws -> Set<[String]> {
        var groups: [Int64: [String]] = [:]
        let moments = try catalog.moments()
        for moment in moments {
            let cover = try moment.coverPictureId.flatMap { try catalog.picture(id: $0)?.sha256 } ?? ""
            var members: [String] = []
            var cursor: PictureCursor?
            repeat {
                let page = try catalog.pictures(inMoment: moment.id, after: cursor, limit: 500)
                members += page.pictures.map(\.sha256)
                cursor = page.next
            } while cursor != nil
            guard !members.isEmpty else { continue }
            groups[moment.id] = ["\(moment.kind.rawValue) \(moment.id > 0 ? "\(moment.id)" : "auto") cover:\(cover)"] + members.sorted()
        }
        return Set(groups.values)
    }

    @Test("migrations are applied once each, by name, however often the catalog is opened")
    func migrationsByName() throws {
        let location = try SharedCluster.freshDatabase()
        let first = try PostgresCatalog(location: location)
        let second = try PostgresCatalog(location: location)
        defer { first.close(); second.close() }
        let names = PostgresCatalogSchema.migrations.migrations.map(\.name)
        #expect(names.starts(with: ["catalog-v1-pictures-moments-jobs-outbox", "v1-queue-jobs", "v2-queue-photo-files"]))
        #expect(try second.appliedMigrations() == names)
    }

    @Test("a committed picture reads back as it was written, with its variants, job and outbox event; the same bytes again are a duplicate")
    func commitReadsBack() throws {
        let catalog = try Self.catalog()
        defer { catalog.close() }
        var photo = Self.photos(seed: 9, count: 1)[0]
        photo.make = "Apple"
        photo.capturedOffset = -18_000
        photo.feedCropWidth = 1080
        let variants = [VariantRecord(pictureId: 0, name: "thumb", path: "v/t.jpg", width: 320, height: 320, bytes: 1234, format: "jpeg")]
        guard case .added(let id, _) = try catalog.commitPicture(photo, variants: variants, job: Self.job(1)) else {
            Issue.record("the first commit was not an addition")
            return
        }
        var stored = try #require(try catalog.picture(sha256: photo.sha256))
        #expect(stored.id == id)
        stored.id = nil
        var expected = photo
        expected.inMoments = photo.momentTime != nil || photo.latitude != nil || true
        #expect(stored.make == "Apple" && stored.capturedOffset == -18_000 && stored.feedCropWidth == 1080)
        #expect(stored.sha256 == photo.sha256 && stored.latitude == photo.latitude && stored.momentTime == photo.momentTime)
        #expect(stored.thumbHash == "th0" && stored.metadataJson == "{}" && stored.inMoments)
        var variant = variants[0]
        variant.pictureId = id
        #expect(try catalog.variants(ofPicture: id) == [variant])
        let job = try #require(try catalog.finishedJob(claimPath: "c/1"))
        #expect(job.outcome == .added && job.pictureId == id && job.durationMs == 250)
        let added = try catalog.allOutboxEvents().filter { $0.event == .pictureAdded }
        #expect(added.count == 1 && added[0].payload.contains("\"thumb_hash\":\"th0\""))

        #expect(try catalog.commitPicture(photo, variants: variants, job: Self.job(2)) == .duplicate(of: id))
        try catalog.recordFailure(JobRecord(sourceName: "bad.jpg", claimPath: "c/3", sha256: nil, outcome: .failed, pictureId: nil,
                                            attempts: 1, error: "not a photo", sidecarJson: nil, worker: "w",
                                            startedAt: 1, finishedAt: 2, failureCategory: .badInput))
        let counts = try catalog.counts()
        #expect(counts.pictures == 1 && counts.variants == 1 && counts.jobsAdded == 1 && counts.jobsDuplicate == 1 && counts.jobsFailed == 1)
        #expect(try catalog.latestJob(claimPath: "c/3")?.failureCategory == "bad_input")
    }

    @Test("the same photos make the same moments, covers and declared-moment members in PostgreSQL as in SQLite",
          arguments: [1, 2, 3] as [UInt64])
    func sameMomentsAsSQLite(seed: UInt64) throws {
        let photos = Self.photos(seed: seed, count: 120)
        let postgres = try Self.catalog()
        defer { postgres.close() }
        let (sqlite, directory) = try Self.sqlite()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try postgres.declarePlace(id: 7, name: "Centre", center: Self.centre, radiusMetres: 120)
        _ = try sqlite.declarePlace(id: 7, name: "Centre", center: Self.centre, radiusMetres: 120)
        _ = try postgres.declareMoment(Self.declared, id: 70)
        _ = try sqlite.declareMoment(Self.declared, id: 70)
        for (i, photo) in photos.enumerated() {
            _ = try postgres.commitPicture(photo, variants: [], job: Self.job(i))
            _ = try sqlite.commitPicture(photo, variants: [], job: Self.job(i))
        }
        #expect(try postgres.rebuildMoments(apply: false).isEmpty, "incremental state equals a rebuild (seed \(seed))")
        let mine = try Self.partition(postgres)
        #expect(mine == (try Self.partition(sqlite)), "seed \(seed): PostgreSQL and SQLite made different moments")
        #expect(mine.count > 3, "the scenario makes several moments")
        #expect(try postgres.counts().moments == (try sqlite.counts().moments))
        let around = try postgres.places(around: Self.centre, radiusMetres: 1000).map(\.id)
        let aroundInSQLite = try sqlite.places(around: Self.centre, radiusMetres: 1000).map(\.id)
        #expect(around.contains(7) && around == aroundInSQLite)
    }

    @Test("pages of a moment, a creator's cover and a moved place answer in PostgreSQL as in SQLite")
    func readsAndDeclarationsAsInSQLite() throws {
        let photos = Self.photos(seed: 31, count: 150)
        let postgres = try Self.catalog()
        defer { postgres.close() }
        let (sqlite, directory) = try Self.sqlite()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let stores: [any CatalogStore] = [postgres, sqlite]
        for store in stores {
            _ = try store.declarePlace(id: 7, name: "Centre", center: Self.centre, radiusMetres: 120)
            var declared = Self.declared
            declared.creator = "ana"
            // Four days, so that a good share of the photos at the centre join it.
            declared.end = Date(timeIntervalSince1970: 1_700_000_000 + 4 * 86_400)
            _ = try store.declareMoment(declared, id: 70, as: .create)
            for (i, photo) in photos.enumerated() { _ = try store.commitPicture(photo, variants: [], job: Self.job(i)) }
        }
        /// Every picture of moment 70, three to a page.
        func paged(_ store: any CatalogStore) throws -> [String] {
            var keys: [String] = []
            var cursor: PictureCursor?
            repeat {
                let page = try store.pictures(inMoment: 70, after: cursor, limit: 3)
                keys += page.pictures.map(\.sha256)
                cursor = page.next
            } while cursor != nil
            return keys
        }
        let pages = try paged(postgres)
        let count = try postgres.pictureCount(inMoment: 70)
        let pagesInSQLite = try paged(sqlite)
        #expect(pages.count > 3 && pages.count == count, "\(pages.count) pictures, \(count) counted")
        #expect(pages == pagesInSQLite, "the stable order and its cursor")

        // The creator picks the last picture of the page order as the cover.
        let last = try #require(pages.last)
        let chosen = try #require(try postgres.picture(sha256: last))
        let chosenInSQLite = try #require(try sqlite.picture(sha256: last))
        _ = try postgres.setCover(momentId: 70, pictureId: chosen.id, by: "ana")
        _ = try sqlite.setCover(momentId: 70, pictureId: chosenInSQLite.id, by: "ana")
        let cover = try #require(try postgres.moment(id: 70))
        let coverInSQLite = try #require(try sqlite.moment(id: 70))
        #expect(cover.coverPictureId == chosen.id && cover.coverSource == coverInSQLite.coverSource)

        // The place grows: more pictures join the declared moment, in both stores alike.
        for store in stores { _ = try store.updatePlace(id: 7, name: "Centre", center: Self.centre, radiusMetres: 400) }
        #expect(try postgres.place(id: 7)?.radiusMetres == 400)
        let grown = try Self.partition(postgres)
        let grownInSQLite = try Self.partition(sqlite)
        #expect(grown == grownInSQLite)
        #expect(try postgres.pictureCount(inMoment: 70) >= pages.count)
        #expect(try postgres.rebuildMoments(apply: false).isEmpty)
        // A second declaration of the same id is refused as on SQLite, naming the place that has it.
        do {
            _ = try postgres.declarePlace(id: 7, name: "Again", center: Self.centre, radiusMetres: 10)
            Issue.record("a taken place id was accepted")
        } catch {
            guard case .rule(.idTaken) = error else {
                Issue.record("refused as \(error), not as a taken id")
                return
            }
            #expect(error.description.contains("\"Centre\""))
        }
    }

    @Test("eight workers committing photos of the same places and times at once make the moments one worker makes",
          arguments: [11, 12] as [UInt64])
    func concurrentCommitsMakeTheSameMoments(seed: UInt64) throws {
        let photos = Self.photos(seed: seed, count: 240)
        let postgres = try Self.catalog()
        defer { postgres.close() }
        _ = try postgres.declarePlace(id: 7, name: "Centre", center: Self.centre, radiusMetres: 120)
        _ = try postgres.declareMoment(Self.declared, id: 70)
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for index in stride(from: worker, to: photos.count, by: 8) {
                do {
                    _ = try postgres.commitPicture(photos[index], variants: [], job: Self.job(index))
                } catch {
                    failures.add("photo \(index): \(error)")
                }
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(3))")
        #expect(try postgres.counts().pictures == photos.count)
        #expect(try postgres.rebuildMoments(apply: false).isEmpty, "incremental state equals a rebuild (seed \(seed))")

        let (sqlite, directory) = try Self.sqlite()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try sqlite.declarePlace(id: 7, name: "Centre", center: Self.centre, radiusMetres: 120)
        _ = try sqlite.declareMoment(Self.declared, id: 70)
        for (i, photo) in photos.enumerated() { _ = try sqlite.commitPicture(photo, variants: [], job: Self.job(i)) }
        #expect(try Self.partition(postgres) == (try Self.partition(sqlite)), "seed \(seed): concurrency changed the moments")
    }

    @Test("the same bytes committed by several workers at once make one picture and duplicates")
    func concurrentDuplicates() throws {
        let postgres = try Self.catalog()
        defer { postgres.close() }
        let photo = Self.photos(seed: 21, count: 1)[0]
        let outcomes = Failures()
        DispatchQueue.concurrentPerform(iterations: 6) { worker in
            do {
                switch try postgres.commitPicture(photo, variants: [], job: Self.job(worker)) {
                case .added: outcomes.add("added")
                case .duplicate: outcomes.add("duplicate")
                }
            } catch {
                outcomes.add("error: \(error)")
            }
        }
        #expect(outcomes.all.sorted() == ["added"] + Array(repeating: "duplicate", count: 5))
        #expect(try postgres.counts().pictures == 1)
    }

    @Test("a server that is not there is a transient catalog error naming the address, not a hang")
    func unreachableServer() throws {
        let cluster = try SharedCluster.cluster.get()
        #expect {
            _ = try PostgresCatalog(url: "postgres://postgres@127.0.0.1:\(cluster.port + 1)/none")
        } throws: { error in
            guard let error = error as? CatalogError else { return false }
            return error.isTransient && error.category == .catalog && error.description.contains("127.0.0.1:\(cluster.port + 1)")
        }
    }
}

/// Lines collected from several threads.
final class Failures: @unchecked Sendable {  // safe: `lines` is guarded by `lock`
    private let lock = NSLock()
    private var lines: [String] = []

    func add(_ line: String) {
        lock.lock()
        lines.append(line)
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }
}
