import GRDB

/// Column names from the records' property names: `sidecarJson` → `sidecar_json`.
///
/// GRDB's `convertToSnakeCase` goes through Foundation's character sets for every key of every
/// insert, which was a tenth of the cost of committing a photo; the record properties are
/// plain ASCII camel case, so this does the same in one pass over the bytes.
public enum ColumnName {
    /// The encoding strategy of every record type.
    public static let encoding = DatabaseColumnEncodingStrategy.custom { key in snakeCase(key.stringValue) }

    /// `camelCase` → `camel_case`; an acronym is one word (`imageURLPath` → `image_url_path`).
    /// The column a record's property is stored in: `sourceName` in `source_name`, `sha256` as it is.
    public static func snakeCase(_ name: String) -> String {
        let bytes = Array(name.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 4)
        for (i, byte) in bytes.enumerated() {
            guard isUpper(byte) else {
                out.append(byte)
                continue
            }
            let previous = i > 0 ? bytes[i - 1] : nil
            let next = i + 1 < bytes.count ? bytes[i + 1] : nil
            let startsWord = previous.map { !isUpper($0) && $0 != underscore } ?? false
            let endsAcronym = previous.map(isUpper) == true && next.map(isLower) == true
            if startsWord || endsAcronym { out.append(underscore) }
            out.append(byte + 32)
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let underscore = UInt8(ascii: "_")
    private static func isUpper(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") }
    private static func isLower(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
}
