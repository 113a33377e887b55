import Foundation

/// A cell of a grid over Earth-centred Cartesian space: `size` metres on a side at `level`.
///
/// Cartesian cells have no date line and no poles, and the straight-line distance between two
/// points never exceeds their great-circle distance, so "all cells meeting the cube of half-side
/// r around p" is a safe superset of "all points within r of p".
struct GridCell: Hashable, Sendable {
    var level: Int8
    var x: Int32
    var y: Int32
    var z: Int32
}

/// The ranges of cell indices a cube around a point covers at one cell size.
struct CellRange: Sendable {
    var x: ClosedRange<Int32>
    var y: ClosedRange<Int32>
    var z: ClosedRange<Int32>

    /// How many cells the range holds (as a Double: a huge range must not overflow).
    var count: Double { Double(x.count) * Double(y.count) * Double(z.count) }

    /// Every cell of the range at `level`.
    func cells(level: Int8) -> [GridCell] {
        var result: [GridCell] = []
        result.reserveCapacity(Int(min(count, 4096)))
        for i in x { for j in y { for k in z { result.append(GridCell(level: level, x: i, y: j, z: k)) } } }
        return result
    }
}

/// Grid arithmetic shared by the indexes.
enum GridMath {
    /// Cubes are widened by this much so rounding never drops a point exactly on a circle.
    static let slackMetres = 1.0

    /// Cell sizes of the multi-level grids: 128 m × 8^k, up to beyond the Earth's diameter.
    static let levelSizes: [Double] = (0..<7).map { 128 * pow(8, Double($0)) }

    /// The index of the cell holding coordinate value `v`.
    static func index(_ v: Double, size: Double) -> Int32 {
        Int32(clamping: floorToInt64(v / size))
    }

    /// `floor(x)` as an Int64, saturating at the ends and 0 for NaN, so no input can trap.
    static func floorToInt64(_ x: Double) -> Int64 {
        guard !x.isNaN else { return 0 }
        let f = x.rounded(.down)
        if f >= 9.2e18 { return .max }
        if f <= -9.2e18 { return .min }
        return Int64(f)
    }

    /// The cell of a point at one size.
    static func cell(of point: Coordinate, size: Double, level: Int8) -> GridCell {
        let p = Geo.cartesian(point)
        return GridCell(level: level, x: index(p.x, size: size), y: index(p.y, size: size), z: index(p.z, size: size))
    }

    /// The cells meeting the cube of half-side `radius` (plus slack) around `point`, clamped to
    /// the Earth so a huge radius stays a bounded range.
    static func range(around point: Coordinate, radius: Double, size: Double) -> CellRange {
        let p = Geo.cartesian(point)
        let half = min(max(0, radius), 2 * Geo.meanEarthRadiusMetres) + slackMetres
        let bound = Geo.meanEarthRadiusMetres + slackMetres
        func axis(_ v: Double) -> ClosedRange<Int32> {
            index(max(-bound, v - half), size: size)...index(min(bound, v + half), size: size)
        }
        return CellRange(x: axis(p.x), y: axis(p.y), z: axis(p.z))
    }

    /// The smallest level whose cells are at least `metres` wide (the largest level if none).
    static func level(atLeast metres: Double) -> Int {
        levelSizes.firstIndex { $0 >= metres } ?? levelSizes.count - 1
    }
}

/// Points (pictures, place centres) filed at every level of a multi-level grid, so that a query
/// of any radius reads at most 27 cells of the level matching its radius.
struct PointGrid: Sendable {
    private var cells: [GridCell: Set<Int64>] = [:]

    /// Files `id` at `point`.
    mutating func insert(_ id: Int64, at point: Coordinate) {
        for (level, size) in GridMath.levelSizes.enumerated() {
            cells[GridMath.cell(of: point, size: size, level: Int8(level)), default: []].insert(id)
        }
    }

    /// Unfiles `id` from `point` (where it was inserted).
    mutating func remove(_ id: Int64, at point: Coordinate) {
        for (level, size) in GridMath.levelSizes.enumerated() {
            let cell = GridMath.cell(of: point, size: size, level: Int8(level))
            cells[cell]?.remove(id)
            if cells[cell]?.isEmpty == true { cells[cell] = nil }
        }
    }

    /// The ids filed within `radius` of `point`, and maybe a few more.
    func candidates(near point: Coordinate, radius: Double) -> Set<Int64> {
        let level = GridMath.level(atLeast: radius)
        let range = GridMath.range(around: point, radius: radius, size: GridMath.levelSizes[level])
        var result = Set<Int64>()
        for cell in range.cells(level: Int8(level)) { if let ids = cells[cell] { result.formUnion(ids) } }
        return result
    }
}

/// Circles (places, declared moments) each filed at the level where it spans at most two cells
/// per axis, so that "which circles may hold this point" reads one cell per level.
struct DiscGrid: Sendable {
    private var cells: [GridCell: Set<Int64>] = [:]
    private var discsPerLevel = [Int](repeating: 0, count: GridMath.levelSizes.count)

    private static func cells(center: Coordinate, radius: Double) -> [GridCell] {
        let level = GridMath.level(atLeast: 2 * (radius + GridMath.slackMetres))
        return GridMath.range(around: center, radius: radius, size: GridMath.levelSizes[level]).cells(level: Int8(level))
    }

    /// Files the circle `id`.
    mutating func insert(_ id: Int64, center: Coordinate, radius: Double) {
        let cells = Self.cells(center: center, radius: radius)
        for cell in cells { self.cells[cell, default: []].insert(id) }
        if let level = cells.first?.level { discsPerLevel[Int(level)] += 1 }
    }

    /// Unfiles the circle `id` (with the geometry it was inserted with).
    mutating func remove(_ id: Int64, center: Coordinate, radius: Double) {
        let cells = Self.cells(center: center, radius: radius)
        for cell in cells {
            self.cells[cell]?.remove(id)
            if self.cells[cell]?.isEmpty == true { self.cells[cell] = nil }
        }
        if let level = cells.first?.level { discsPerLevel[Int(level)] -= 1 }
    }

    /// The circles that may hold `point`.
    func candidates(containing point: Coordinate) -> Set<Int64> {
        var result = Set<Int64>()
        for (level, size) in GridMath.levelSizes.enumerated() where discsPerLevel[level] > 0 {
            if let ids = cells[GridMath.cell(of: point, size: size, level: Int8(level))] { result.formUnion(ids) }
        }
        return result
    }
}
