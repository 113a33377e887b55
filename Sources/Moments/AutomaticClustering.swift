import Foundation

/// The automatic-moment relation and its connected components.
///
/// Two photos are *linked* when they have the same author, lie within the automatic radius of
/// each other and were taken within the automatic time gap of each other. Automatic moments are
/// the connected components of that relation (single linkage) over the photos that have a time
/// and a location and no declared moment: a set-level definition, hence order-independent.
public enum AutomaticClustering {
    /// Whether two photos are linked (both need a time and a location).
    public static func linked(_ a: PhotoFacts, _ b: PhotoFacts, rules: MomentRules) -> Bool {
        guard a.author == b.author, let p = a.timeAndPlace, let q = b.timeAndPlace else { return false }
        return abs(p.time.timeIntervalSince(q.time)) <= rules.automaticTimeGap
            && Geo.distanceMetres(p.location, q.location) <= rules.automaticRadiusMetres
    }

    /// The connected components of the linked relation over `photos` (those without a time or
    /// a location are left out). Each component is in the stable picture order, and components
    /// are ordered by their anchor (first picture), so the result depends only on the set.
    public static func components(of photos: [PhotoFacts], rules: MomentRules) -> [[PhotoFacts]] {
        let eligible = photos.filter { $0.timeAndPlace != nil }
        var index = NeighbourIndex(rules: rules)
        for (i, photo) in eligible.enumerated() { index.insert(Int64(i), photo: photo) }
        var parent = Array(eligible.indices)
        func root(_ i: Int) -> Int {
            var i = i
            while parent[i] != i { parent[i] = parent[parent[i]]; i = parent[i] }
            return i
        }
        for (i, photo) in eligible.enumerated() {
            for j in index.candidates(near: photo, rules: rules) where Int(j) > i {
                if linked(photo, eligible[Int(j)], rules: rules) {
                    let (a, b) = (root(i), root(Int(j)))
                    if a != b { parent[max(a, b)] = min(a, b) }
                }
            }
        }
        var groups: [Int: [PhotoFacts]] = [:]
        for (i, photo) in eligible.enumerated() { groups[root(i), default: []].append(photo) }
        return groups.values.map(PictureOrder.sorted).sorted { PictureOrder.precedes($0[0], $1[0]) }
    }
}

/// A space-time grid of photos per author: the index behind automatic neighbour queries.
///
/// Cells are `cellMetres` on a side in Earth-centred space and `cellSeconds` long in time, so a
/// query with the radius and gap the index was built for reads 3 × 3 × 3 × 3 cells. A query
/// with much larger rules falls back to the author's photos, which is still correct.
struct NeighbourIndex: Sendable {
    private struct Cell: Hashable, Sendable {
        var author: String?
        var space: GridCell
        var time: Int64
    }

    /// A query that would read more cells than this reads the author's photos instead.
    private static let maxCellsPerQuery = 4096

    let cellMetres: Double
    let cellSeconds: Double
    private var cells: [Cell: Set<Int64>] = [:]
    private var byAuthor: [String?: Set<Int64>] = [:]

    /// An empty index with cells sized for `rules`.
    init(rules: MomentRules) {
        cellMetres = max(rules.automaticRadiusMetres, 1)
        cellSeconds = max(rules.automaticTimeGap, 1)
    }

    private func cell(author: String?, location: Coordinate, time: Date) -> Cell {
        Cell(author: author, space: GridMath.cell(of: location, size: cellMetres, level: 0),
             time: timeIndex(time.timeIntervalSince1970))
    }

    private func timeIndex(_ seconds: Double) -> Int64 {
        GridMath.floorToInt64(seconds / cellSeconds)
    }

    /// Files `id`, a photo with a time and a location (others are ignored).
    mutating func insert(_ id: Int64, photo: PhotoFacts) {
        guard let tp = photo.timeAndPlace else { return }
        cells[cell(author: photo.author, location: tp.location, time: tp.time), default: []].insert(id)
        byAuthor[photo.author, default: []].insert(id)
    }

    /// Unfiles `id`, filed earlier with the same facts.
    mutating func remove(_ id: Int64, photo: PhotoFacts) {
        guard let tp = photo.timeAndPlace else { return }
        let key = cell(author: photo.author, location: tp.location, time: tp.time)
        cells[key]?.remove(id)
        if cells[key]?.isEmpty == true { cells[key] = nil }
        byAuthor[photo.author]?.remove(id)
        if byAuthor[photo.author]?.isEmpty == true { byAuthor[photo.author] = nil }
    }

    /// The ids by the same author that may be linked to `photo` under `rules`.
    func candidates(near photo: PhotoFacts, rules: MomentRules) -> Set<Int64> {
        guard let tp = photo.timeAndPlace else { return [] }
        let space = GridMath.range(around: tp.location, radius: rules.automaticRadiusMetres, size: cellMetres)
        let t = tp.time.timeIntervalSince1970
        let times = timeIndex(t - rules.automaticTimeGap)...timeIndex(t + rules.automaticTimeGap)
        let timeCells = Double(times.upperBound) - Double(times.lowerBound) + 1
        guard space.count * timeCells <= Double(Self.maxCellsPerQuery) else { return byAuthor[photo.author] ?? [] }
        var result = Set<Int64>()
        for spaceCell in space.cells(level: 0) {
            for time in times {
                if let ids = cells[Cell(author: photo.author, space: spaceCell, time: time)] { result.formUnion(ids) }
            }
        }
        return result
    }
}
