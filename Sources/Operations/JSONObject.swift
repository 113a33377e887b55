import Foundation
import JSONValues

/// A JSON object given by a caller (an HTTP request's body), read field by field: unknown keys
/// are refused, and every problem is a `FieldError` naming its key.
public struct JSONObject: Sendable {
    /// The object's fields.
    public let fields: [String: JSONValue]

    /// Parses bytes that must be one JSON object with only `known` keys.
    public init(bytes: [UInt8], known: [String]) throws(FieldError) {
        guard !bytes.isEmpty else { throw FieldError("body", "is empty; send a JSON object") }
        let parsed: JSONValue
        do {
            parsed = try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        } catch {
            throw FieldError("body", "is not valid JSON; send one JSON object")
        }
        guard case .object(let fields) = parsed else { throw FieldError("body", "must be a JSON object, not \(parsed.summary)") }
        if let key = JSONDuplicateKeys.first(in: bytes) {
            throw FieldError(key, "is given twice in the JSON body; give each field once")
        }
        for key in fields.keys.sorted() where !known.contains(key) {
            throw FieldError(key, "is not a field of this request; use \(known.joined(separator: ", "))")
        }
        self.fields = fields
    }

    /// Whether the key is present, even as null.
    public func has(_ key: String) -> Bool { fields[key] != nil }

    /// A string; nil when absent or null.
    public func string(_ key: String) throws(FieldError) -> String? {
        switch fields[key] {
        case nil, .null?: return nil
        case .string(let text)?:
            try FieldText.checkControls(key, text)
            return text
        case let other?: throw FieldError(key, "must be a string (got \(other.summary))")
        }
    }

    /// A whole number; nil when absent or null.
    public func integer(_ key: String) throws(FieldError) -> Int64? {
        switch fields[key] {
        case nil, .null?: return nil
        case .integer(let number)?: return number
        case let other?: throw FieldError(key, "must be a whole number (got \(other.summary))")
        }
    }

    /// A number; nil when absent or null.
    public func number(_ key: String) throws(FieldError) -> Double? {
        switch fields[key] {
        case nil, .null?: return nil
        case let value?:
            guard let number = value.double else { throw FieldError(key, "must be a number (got \(value.summary))") }
            return number
        }
    }

    /// A list of strings; nil when absent or null.
    public func strings(_ key: String) throws(FieldError) -> [String]? {
        switch fields[key] {
        case nil, .null?: return nil
        case .array(let items)?:
            return try items.map { item throws(FieldError) in
                guard case .string(let text) = item else { throw FieldError(key, "must be a list of strings (got \(item.summary) in it)") }
                try FieldText.checkControls(key, text)
                return text
            }
        case let other?: throw FieldError(key, "must be a list of strings (got \(other.summary))")
        }
    }

    /// A value that must be there.
    public static func required<T>(_ value: T?, _ key: String) throws(FieldError) -> T {
        guard let value else { throw FieldError(key, "is needed") }
        return value
    }
}
