import Foundation

/// One place of the gazetteer: a city, town or village of GeoNames with at least 1,000
/// inhabitants.
public struct City: Sendable, Hashable {
    /// Its name ("Brecon").
    public var name: String
    /// Its first-level region's name where the data has it ("Wales"; US states, Great Britain's
    /// four countries), else nil.
    public var region: String?
    /// ISO 3166 alpha-2 country code ("GB").
    public var countryCode: String
    /// The IANA time zone it lies in ("Europe/London").
    public var timeZone: String
    public var latitude: Double
    public var longitude: Double
    public var population: Int

    /// "Brecon, Wales, GB", or "Paris, FR" where the region has no name.
    public var displayName: String {
        ([name] + (region.map { [$0] } ?? []) + [countryCode]).joined(separator: ", ")
    }
}

/// The nearest city to a point, with its distance.
public struct NearbyCity: Sendable, Hashable {
    public var city: City
    /// Great-circle distance from the point, in metres.
    public var distanceMetres: Double
}

/// GeoNames' cities1000 (about 170,000 places), loaded from the compact file
/// `cities1000.bin` (written by `tools/gazetteer/convert.py`; see the README beside it):
/// the nearest place's name and a time zone for any point, offline.
///
/// A point's time zone is its nearest city's: right away from borders, sometimes wrong within
/// a few kilometres of one (the agreement with a polygon oracle is measured by
/// `tools/gazetteer/agreement.py` and `darkroom-bench gazetteer`).
public final class Gazetteer: Sendable {
    /// The file this build carries, loaded on first use; nil (with the reason in `loadProblem`)
    /// when it cannot be read. `DARKROOM_GAZETTEER` names another file.
    public static var shared: Gazetteer? { try? loaded.get() }

    /// Why `shared` is nil, or nil when it loaded.
    public static var loadProblem: String? {
        if case .failure(let error) = loaded { return error.description }
        return nil
    }

    private static let loaded: Result<Gazetteer, GazetteerError> = {
        do throws(GazetteerError) { return .success(try load()) } catch { return .failure(error) }
    }()

    private let data: Data
    private let count: Int
    private let rows: Int
    private let columns: Int
    private let cellsAt: Int
    private let latitudesAt: Int
    private let longitudesAt: Int
    private let populationsAt: Int
    private let zonesAt: Int
    private let regionsAt: Int
    private let countriesAt: Int
    private let names: StringTable
    private let zoneNames: [String]
    private let regionNames: [String]

    /// How many places the gazetteer holds.
    public var cityCount: Int { count }

    /// The file named by `DARKROOM_GAZETTEER`, else the first of `searchPaths` there is.
    public static func load() throws(GazetteerError) -> Gazetteer {
        if let path = ProcessInfo.processInfo.environment["DARKROOM_GAZETTEER"], !path.isEmpty {
            return try Gazetteer(contentsOf: URL(fileURLWithPath: path))
        }
        guard let path = searchPaths.first(where: { FileManager.default.isReadableFile(atPath: $0) }) else {
            throw GazetteerError(file: fileName, problem: "not found in \(searchPaths.joined(separator: ", ")); "
                                 + "install it with `make install` or name it with DARKROOM_GAZETTEER")
        }
        return try Gazetteer(contentsOf: URL(fileURLWithPath: path))
    }

    /// The data file's name.
    public static let fileName = "cities1000.bin"

    /// Where the data file is looked for: where `make install` puts it beside the binary
    /// (`PREFIX/share/darkroom/`, for a binary in `PREFIX/bin/`), then in this source folder (a
    /// binary run from its build tree). Never through a resource bundle, whose accessor ends
    /// the process when the bundle is missing.
    static var searchPaths: [String] {
        let executable = URL(fileURLWithPath: CommandLine.arguments.first.flatMap { $0.contains("/") ? $0 : nil }
                             ?? "/proc/self/exe").resolvingSymlinksInPath()
        let prefix = executable.deletingLastPathComponent().deletingLastPathComponent()
        return [prefix.appendingPathComponent("share/darkroom/\(fileName)").path,
                URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(fileName).path]
    }

    /// Reads a file written by `tools/gazetteer/convert.py` (memory-mapped).
    public convenience init(contentsOf url: URL) throws(GazetteerError) {
        let data: Data
        do {
            data = try Data(contentsOf: url, options: .alwaysMapped)
        } catch {
            throw GazetteerError(file: url.path, problem: "cannot be read (\(error.localizedDescription))")
        }
        try self.init(data: data, file: url.path)
    }

    init(data: Data, file: String) throws(GazetteerError) {
        func fail(_ problem: String) -> GazetteerError { GazetteerError(file: file, problem: problem) }
        guard data.count >= 28, data.prefix(4) == Data("DRGZ".utf8) else {
            throw fail("is not a gazetteer file (no DRGZ header); rebuild it with tools/gazetteer/convert.py")
        }
        let reader = ByteReader(data: data)
        guard reader.u32(4) == 1 else { throw fail("has version \(reader.u32(4)); this build reads version 1") }
        count = reader.u32(8)
        let zones = reader.u32(12)
        let regions = reader.u32(16)
        rows = reader.u32(20)
        columns = reader.u32(24)
        cellsAt = 28
        latitudesAt = cellsAt + (rows * columns + 1) * 4
        longitudesAt = latitudesAt + count * 4
        populationsAt = longitudesAt + count * 4
        zonesAt = populationsAt + count * 4
        regionsAt = zonesAt + count * 2
        countriesAt = regionsAt + count * 2
        let namesAt = countriesAt + count * 2
        guard rows == 180, columns == 360, namesAt + (count + 1) * 4 <= data.count else {
            throw fail("is truncated or has an unexpected grid; rebuild it with tools/gazetteer/convert.py")
        }
        names = StringTable(reader: reader, at: namesAt, count: count)
        let zoneTable = StringTable(reader: reader, at: names.end, count: zones)
        let regionTable = StringTable(reader: reader, at: zoneTable.end, count: regions)
        guard regionTable.end == data.count, names.end <= data.count else {
            throw fail("is truncated (\(data.count) bytes, \(regionTable.end) expected); rebuild it with tools/gazetteer/convert.py")
        }
        zoneNames = (0..<zones).map { zoneTable.string($0, reader) }
        regionNames = (0..<regions).map { regionTable.string($0, reader) }
        self.data = data
    }

    /// The city at an index of the file.
    public func city(at index: Int) -> City {
        let reader = ByteReader(data: data)
        let region = reader.u16(regionsAt + index * 2)
        let country = reader.bytes(countriesAt + index * 2, 2)
        return City(
            name: names.string(index, reader),
            region: region < regionNames.count ? regionNames[region] : nil,
            countryCode: String(decoding: country, as: UTF8.self),
            timeZone: zoneNames[reader.u16(zonesAt + index * 2)],
            latitude: Double(reader.i32(latitudesAt + index * 4)) / 100_000,
            longitude: Double(reader.i32(longitudesAt + index * 4)) / 100_000,
            population: reader.u32(populationsAt + index * 4))
    }

    /// The nearest city to a point, if one lies within `maximumMetres`.
    public func nearest(latitude: Double, longitude: Double, within maximumMetres: Double = .infinity) -> NearbyCity? {
        guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 else { return nil }
        guard let (index, distance) = nearestIndex(latitude: latitude, longitude: longitude, within: maximumMetres) else { return nil }
        return NearbyCity(city: city(at: index), distanceMetres: distance)
    }

    /// The IANA zone of a point: its nearest city's (within 1,000 km; beyond, the oceans' nautical
    /// zone `Etc/GMT±h` of its longitude).
    public func timeZone(latitude: Double, longitude: Double) -> String? {
        guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 else { return nil }
        if let (index, _) = nearestIndex(latitude: latitude, longitude: longitude, within: 1_000_000) {
            return zoneNames[ByteReader(data: data).u16(zonesAt + index * 2)]
        }
        let hours = Int((longitude / 15).rounded())
        // POSIX names are inverted: Etc/GMT+5 is five hours west of Greenwich.
        return hours == 0 ? "Etc/GMT" : "Etc/GMT\(hours > 0 ? "-" : "+")\(abs(hours))"
    }

    /// Rings of one-degree cells around the point's, widened until the nearest city found is
    /// nearer than anything the next ring could hold.
    private func nearestIndex(latitude: Double, longitude: Double, within maximumMetres: Double) -> (Int, Double)? {
        let reader = ByteReader(data: data)
        let row = min(rows - 1, max(0, Int(latitude + 90)))
        let column = min(columns - 1, max(0, Int(longitude + 180)))
        var best: (index: Int, metres: Double)?
        // One degree of latitude, the least a ring adds in every direction (north–south).
        let ringMetres = 111_195.0
        let maximumRing = min(Double(columns / 2), (maximumMetres / ringMetres).rounded(.up) + 1)
        var ring = 0
        while Double(ring) <= maximumRing {
            for r in (row - ring)...(row + ring) where r >= 0 && r < rows {
                let onEdgeRow = r == row - ring || r == row + ring
                var c = column - ring
                while c <= column + ring {
                    let wrapped = ((c % columns) + columns) % columns
                    let cell = r * columns + wrapped
                    let first = reader.u32(cellsAt + cell * 4)
                    let end = reader.u32(cellsAt + (cell + 1) * 4)
                    for index in first..<end {
                        let metres = Self.distanceMetres(
                            latitude, longitude,
                            Double(reader.i32(latitudesAt + index * 4)) / 100_000,
                            Double(reader.i32(longitudesAt + index * 4)) / 100_000)
                        if metres < (best?.metres ?? .infinity) { best = (index, metres) }
                    }
                    // Inner rows of the ring: only its two edge columns are new.
                    c += onEdgeRow || ring == 0 ? 1 : 2 * ring
                }
            }
            // Everything outside this ring is at least `ring` degrees of latitude away, or (east–west)
            // `ring` degrees of longitude at the point's latitude nearest the pole.
            let poleward = min(90, abs(latitude) + Double(ring + 1))
            let reach = Double(ring) * ringMetres * max(0.0, cos(poleward * .pi / 180))
            if let best, best.metres <= reach { break }
            ring += 1
        }
        guard let best, best.metres <= maximumMetres else { return nil }
        return best
    }

    /// Great-circle distance (haversine on the mean Earth radius), in metres.
    public static func distanceMetres(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let radians = Double.pi / 180
        let dLat = (lat2 - lat1) * radians
        let dLon = (lon2 - lon1) * radians
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(lat1 * radians) * cos(lat2 * radians) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * 6_371_008.8 * asin(min(1, sqrt(a)))
    }
}

/// The gazetteer file is missing or not what this build reads.
public struct GazetteerError: Error, CustomStringConvertible, Sendable {
    public var file: String
    public var problem: String
    public var description: String { "gazetteer \(file) \(problem)" }
}

/// Little-endian reads from the mapped file.
private struct ByteReader {
    let data: Data

    func u32(_ at: Int) -> Int {
        data.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt32.self))) }
    }

    func i32(_ at: Int) -> Int {
        data.withUnsafeBytes { Int(Int32(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: Int32.self))) }
    }

    func u16(_ at: Int) -> Int {
        data.withUnsafeBytes { Int(UInt16(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt16.self))) }
    }

    func bytes(_ at: Int, _ count: Int) -> [UInt8] {
        data.withUnsafeBytes { Array($0[at..<(at + count)]) }
    }
}

/// `count + 1` u32 offsets then the UTF-8 bytes they index.
private struct StringTable: Sendable {
    let at: Int
    let count: Int
    let bytesAt: Int
    let end: Int

    init(reader: ByteReader, at: Int, count: Int) {
        self.at = at
        self.count = count
        bytesAt = at + (count + 1) * 4
        end = at + (count + 1) * 4 > reader.data.count ? Int.max : bytesAt + reader.u32(at + count * 4)
    }

    func string(_ index: Int, _ reader: ByteReader) -> String {
        let start = reader.u32(at + index * 4)
        let stop = reader.u32(at + (index + 1) * 4)
        return String(decoding: reader.bytes(bytesAt + start, stop - start), as: UTF8.self)
    }
}
