import Foundation
import JSONValues

/// The point of a photo the uploader wants kept in crops, in fractions of the width and height
/// from the top-left corner (0…1).
public struct SidecarFocalPoint: Sendable, Codable, Equatable {
    /// Fraction of the width from the left edge, 0…1.
    public var x: Double
    /// Fraction of the height from the top edge, 0…1.
    public var y: Double

    /// A focal point at (`x`, `y`).
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}

/// What the uploader knows about a photo, from the JSON file next to it (`IMG_1.jpg.json`).
/// Every key is optional and unknown keys are ignored, so that other tools' sidecars
/// (Google Takeout's, for one) read as empty rather than as errors.
public struct Sidecar: Sendable, Codable, Equatable {
    /// The uploader's user id (`author_id`).
    public var authorId: String?
    /// The moment the uploader meant the photo for (`moment_id`).
    public var momentId: Int64?
    /// A title for the photo.
    public var title: String?
    /// Where the photo was taken, when the file does not say (degrees, −90…90).
    public var latitude: Double?
    /// Where the photo was taken, when the file does not say (degrees, −180…180).
    public var longitude: Double?
    /// Metres above sea level.
    public var altitude: Double?
    /// When the photo was taken, ISO 8601 (`2024-05-07T09:33:04+08:00`; without an offset the
    /// default zone is assumed).
    public var takenAt: String?
    /// The point to keep in crops.
    public var focalPoint: SidecarFocalPoint?
    /// `public` or `private`.
    public var visibility: String?

    /// The largest sidecar read, in bytes: what the uploader knows fits in far less, and a bigger
    /// file is not a sidecar.
    public static let maxBytes = 256 << 10

    /// A sidecar with the given fields.
    public init(authorId: String? = nil, momentId: Int64? = nil, title: String? = nil, latitude: Double? = nil,
                longitude: Double? = nil, altitude: Double? = nil, takenAt: String? = nil,
                focalPoint: SidecarFocalPoint? = nil, visibility: String? = nil) {
        self.authorId = authorId
        self.momentId = momentId
        self.title = title
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.takenAt = takenAt
        self.focalPoint = focalPoint
        self.visibility = visibility
    }

    enum CodingKeys: String, CodingKey {
        case authorId = "author_id"
        case momentId = "moment_id"
        case title, latitude, longitude, altitude
        case takenAt = "taken_at"
        case focalPoint = "focal_point"
        case visibility
    }

    /// Where the sidecar of the photo at `photo` lives: the photo's name with `.json` appended.
    public static func url(forPhotoAt photo: URL) -> URL {
        photo.deletingLastPathComponent().appendingPathComponent(photo.lastPathComponent + ".json")
    }

    /// Reads the sidecar file at `url` (see `url(forPhotoAt:)`), or returns nil when there is no
    /// file there. Throws `MetadataError` naming the file when it exists but cannot be used.
    public static func load(from url: URL) throws -> Sidecar? {
        let path = url.path
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data: Data
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            // One byte over the limit is enough to know the file is too big.
            data = try handle.read(upToCount: maxBytes + 1) ?? Data()
        } catch {
            throw MetadataError.sidecarUnreadable(file: path, reason: "\(error)")
        }
        guard data.count <= maxBytes else {
            throw MetadataError.sidecarNotJSON(file: path, reason: "larger than \(maxBytes) bytes")
        }
        do {
            return try Sidecar(jsonBytes: [UInt8](data))
        } catch let error as MetadataError {
            throw error.attributed(to: path)
        }
    }

    /// Parses and checks sidecar JSON. Throws `MetadataError.sidecarMalformed` naming the first key
    /// whose value is of the wrong kind or out of range, or `.sidecarNotJSON`.
    public init(jsonBytes: [UInt8]) throws {
        guard jsonBytes.count <= Self.maxBytes else {
            throw MetadataError.sidecarNotJSON(file: nil, reason: "larger than \(Self.maxBytes) bytes")
        }
        if let problem = Self.utf8Problem(jsonBytes) {
            throw MetadataError.sidecarNotJSON(file: nil, reason: problem)
        }
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: Data(jsonBytes))
        } catch {
            throw MetadataError.sidecarNotJSON(file: nil, reason: Self.firstLine(of: error))
        }
        guard case .object(let object) = root else {
            throw MetadataError.sidecarNotJSON(file: nil, reason: "the top level is \(root.summary)")
        }
        if let key = JSONDuplicateKeys.first(in: jsonBytes) {
            throw MetadataError.sidecarMalformed(file: nil, key: key, problem: "is given twice; give each key once")
        }
        let reader = SidecarFieldReader(object: object)
        self.init(
            authorId: try reader.string("author_id"),
            momentId: try reader.integer("moment_id"),
            title: try reader.string("title"),
            latitude: try reader.number("latitude", range: -90...90),
            longitude: try reader.number("longitude", range: -180...180),
            altitude: try reader.number("altitude", range: -20_000...100_000),
            takenAt: try reader.dateTime("taken_at"),
            focalPoint: try reader.focalPoint("focal_point"),
            visibility: try reader.choice("visibility", among: ["public", "private"]))
        if (latitude == nil) != (longitude == nil) {
            let given = latitude == nil ? "longitude" : "latitude"
            let missing = latitude == nil ? "latitude" : "longitude"
            throw MetadataError.sidecarMalformed(file: nil, key: given, problem: "is given without \(missing)")
        }
    }

    /// Why `bytes` are not UTF-8 text (JSON's only encoding), naming the first bad byte and its
    /// offset; nil when they are.
    static func utf8Problem(_ bytes: [UInt8]) -> String? {
        guard String(validating: bytes, as: UTF8.self) == nil else { return nil }
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var offset = 0
        loop: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput: break loop
            case .error: break loop
            }
        }
        let byte = offset < bytes.count ? String(format: ", and byte 0x%02X at offset %d is not", bytes[offset], offset) : ""
        return "it must be UTF-8 text\(byte); save it as UTF-8 (convert a Latin-1 or Windows-1252 file)"
    }

    private static func firstLine(of error: any Error) -> String {
        let text: String
        if case DecodingError.dataCorrupted(let context) = error {
            text = context.underlyingError.map { "\($0)" } ?? context.debugDescription
        } else {
            text = "\(error)"
        }
        return String(text.prefix(while: { $0 != "\n" }).prefix(200))
    }
}

/// Reads the known keys of a sidecar object, each with its own check and error.
private struct SidecarFieldReader {
    let object: [String: JSONValue]

    private func value(_ key: String) -> JSONValue? {
        guard let value = object[key], value != .null else { return nil }
        return value
    }

    private func malformed(_ key: String, _ problem: String) -> MetadataError {
        .sidecarMalformed(file: nil, key: key, problem: problem)
    }

    func string(_ key: String) throws -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value else { throw malformed(key, "must be a string, found \(value.summary)") }
        if let problem = ControlCharacters.problem(in: text) { throw malformed(key, problem) }
        return text
    }

    func integer(_ key: String) throws -> Int64? {
        guard let value = value(key) else { return nil }
        guard case .integer(let number) = value else {
            throw malformed(key, "must be a whole number, found \(value.summary)")
        }
        return number
    }

    func number(_ key: String, range: ClosedRange<Double>) throws -> Double? {
        guard let value = value(key) else { return nil }
        guard let number = value.double, number.isFinite else {
            throw malformed(key, "must be a number, found \(value.summary)")
        }
        guard range.contains(number) else {
            throw malformed(key, "must be between \(range.lowerBound) and \(range.upperBound), found \(number)")
        }
        return number
    }

    func dateTime(_ key: String) throws -> String? {
        guard let text = try string(key), !text.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        // Calendar validity only (`TimeText`, the reader of every time the backend gives); the
        // plausible years are the reader's option and are checked there.
        if let problem = TimeText.problem(text, offsetRequired: false) {
            throw malformed(key, "must be an ISO 8601 date-time like 2024-05-07T09:33:04+08:00: \(problem)")
        }
        return text
    }

    func focalPoint(_ key: String) throws -> SidecarFocalPoint? {
        guard let value = value(key) else { return nil }
        guard case .object(let fields) = value else {
            throw malformed(key, "must be an object {\"x\": 0…1, \"y\": 0…1}, found \(value.summary)")
        }
        let inner = SidecarFieldReader(object: fields)
        let x: Double?
        let y: Double?
        do {
            x = try inner.number("x", range: 0...1)
            y = try inner.number("y", range: 0...1)
        } catch MetadataError.sidecarMalformed(_, let innerKey, let problem) {
            throw malformed("\(key).\(innerKey)", problem)
        }
        guard let x, let y else { throw malformed(key, "must have both x and y") }
        return SidecarFocalPoint(x: x, y: y)
    }

    func choice(_ key: String, among choices: [String]) throws -> String? {
        guard let text = try string(key) else { return nil }
        guard choices.contains(text) else {
            throw malformed(key, "must be one of \(choices.map { "\"\($0)\"" }.joined(separator: ", ")), found \"\(text)\"")
        }
        return text
    }
}
