import Catalog
import Moments
import PostgresCatalog

/// What the moments benchmark asks of a catalog, so that the same run measures SQLite and
/// PostgreSQL (`--postgres`).
protocol MomentsBenchStore {
    func declare(place: Place) throws -> Place
    func declare(moment: Moment, id: Int64) throws -> [MomentEvent]
    func commit(_ picture: PictureRecord, job: JobRecord) throws -> CommitOutcome
    func allCounts() throws -> CatalogCounts
    func momentSizes() throws -> [Int64: Int]
    func allMoments() throws -> [Moment]
    func rebuildCheck() throws -> [MomentEvent]
}

extension Catalog: MomentsBenchStore {
    func declare(place: Place) throws -> Place {
        try declarePlace(id: place.id, name: place.name, center: place.center, radiusMetres: place.radiusMetres)
    }
    func declare(moment: Moment, id: Int64) throws -> [MomentEvent] { try declareMoment(moment, id: id).1 }
    func commit(_ picture: PictureRecord, job: JobRecord) throws -> CommitOutcome { try commitPicture(picture, variants: [], job: job) }
    func allCounts() throws -> CatalogCounts { try counts() }
    func momentSizes() throws -> [Int64: Int] { try pictureCounts() }
    func allMoments() throws -> [Moment] { try moments() }
    func rebuildCheck() throws -> [MomentEvent] { try rebuildMoments(apply: false) }
}

extension PostgresCatalog: MomentsBenchStore {
    func declare(place: Place) throws -> Place {
        try declarePlace(id: place.id, name: place.name, center: place.center, radiusMetres: place.radiusMetres)
    }
    func declare(moment: Moment, id: Int64) throws -> [MomentEvent] { try declareMoment(moment, id: id).1 }
    func commit(_ picture: PictureRecord, job: JobRecord) throws -> CommitOutcome { try commitPicture(picture, variants: [], job: job) }
    func allCounts() throws -> CatalogCounts { try counts() }
    func momentSizes() throws -> [Int64: Int] { try pictureCounts() }
    func allMoments() throws -> [Moment] { try moments() }
    func rebuildCheck() throws -> [MomentEvent] { try rebuildMoments(apply: false) }
}
