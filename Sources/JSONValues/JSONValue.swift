import Foundation

/// Any JSON value: decoded without a schema, so that a sidecar's keys can be checked one by one
/// and each problem reported with its key; encoded for the outbox's payloads (with sorted keys
/// by the caller's encoder, so that payloads are stable).
public enum JSONValue: Codable, Equatable, Sendable {
    case null
    case bool(Bool)
    /// A number written without a fraction or exponent that fits in 64 bits, kept exact.
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Bool before numbers so that true is not read as 1; integers before doubles so that a
        // 64-bit id is not rounded.
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// A short description of the value for error messages.
    public var summary: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .integer(let value): "\(value)"
        case .number(let value): "\(value)"
        case .string(let value): "\"\(value.count > 40 ? String(value.prefix(40)) + "…" : value)\""
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// The value as a Double when it is a number.
    public var double: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .number(let value): value
        default: nil
        }
    }
}

extension JSONValue {
    /// Whether a value that `JSONSerialization` read is a JSON `true` or `false` rather than a
    /// number: Foundation boxes both as `NSNumber`, and only the box's class tells them apart.
    public static func isBoolean(_ value: Any) -> Bool {
        type(of: value) == booleanBox
    }

    private static let booleanBox: Any.Type = type(of: NSNumber(value: true))
}
