import Foundation

/// A small JSON value for outbox payloads, encoded with sorted keys so payloads are stable.
public enum JSONValue: Sendable, Equatable, Encodable {
    case string(String), int(Int64), double(Double), bool(Bool), null
    case object([String: JSONValue]), array([JSONValue])

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let v): try container.encode(v)
        case .int(let v): try container.encode(v)
        case .double(let v): try container.encode(v)
        case .bool(let v): try container.encode(v)
        case .null: try container.encodeNil()
        case .object(let v): try container.encode(v)
        case .array(let v): try container.encode(v)
        }
    }
}

extension Catalog {
    /// Encodes an outbox payload.
    static func json(_ object: [String: JSONValue]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(JSONValue.object(object)) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
