import Foundation

/// The one JSON form Darkroom writes for people and programs to read: pretty, keys sorted and
/// in snake_case, instants in ISO 8601, slashes unescaped. `inspect --json`, the metadata kept
/// in the catalog, the command line's `--json` listings and the HTTP API's answers all use it,
/// so the same value reads the same everywhere.
public enum StableJSON {
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// A value in the stable form, as text; "{}" when it cannot be encoded.
    public static func string(_ value: some Encodable) -> String {
        guard let data = try? encoder().encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
