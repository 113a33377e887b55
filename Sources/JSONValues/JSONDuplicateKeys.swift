import Foundation

/// Finds a key written twice in one object of a JSON text. JSON parsers disagree on such a text
/// (Foundation keeps one of the values, others the first or the last): a caller that refuses it
/// means the same thing whichever program reads it after.
public enum JSONDuplicateKeys {
    /// The first key found twice in one object of `bytes` (compared after its escapes are read,
    /// so `"a"` and `"\u0061"` are the same key), or nil when there is none. `bytes` must be a
    /// JSON text a parser accepted: this only follows its structure.
    public static func first(in bytes: [UInt8]) -> String? {
        // One entry per open object or array: its keys so far, and whether a key comes next.
        var stack: [(isObject: Bool, keys: Set<String>, keyNext: Bool)] = []
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "{"):
                stack.append((true, [], true))
                index += 1
            case UInt8(ascii: "["):
                stack.append((false, [], false))
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if !stack.isEmpty { stack.removeLast() }
                index += 1
            case UInt8(ascii: ","):
                if let last = stack.indices.last, stack[last].isObject { stack[last].keyNext = true }
                index += 1
            case UInt8(ascii: "\""):
                let (text, next) = string(bytes, from: index)
                if let last = stack.indices.last, stack[last].isObject, stack[last].keyNext {
                    stack[last].keyNext = false
                    if !stack[last].keys.insert(text).inserted { return text }
                }
                index = next
            default:
                index += 1
            }
        }
        return nil
    }

    /// The string starting at the quote at `start`, its escapes read, and the index after its
    /// closing quote.
    private static func string(_ bytes: [UInt8], from start: Int) -> (String, Int) {
        var index = start + 1
        var escaped = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\\") {
                escaped = true
                index += 2
                continue
            }
            if byte == UInt8(ascii: "\"") { break }
            index += 1
        }
        let end = min(index, bytes.count - 1)
        let raw = Array(bytes[start...end])
        if escaped, let decoded = try? JSONDecoder().decode(String.self, from: Data(raw)) {
            return (decoded, index + 1)
        }
        return (String(decoding: raw.dropFirst().dropLast(), as: UTF8.self), index + 1)
    }
}
