/// A `multipart/form-data` body (RFC 7578), parsed from its bytes: the parts in order, each
/// with its name, its file name if any, and its content.
struct MultipartForm: Sendable, Equatable {
    /// One part of the form.
    struct Part: Sendable, Equatable {
        /// The `name` of its Content-Disposition.
        var name: String
        /// The `filename`, for a file part.
        var fileName: String?
        /// Its Content-Type, when given.
        var contentType: String?
        /// Its bytes.
        var content: [UInt8]
    }

    /// Why a body is not a form that can be read.
    enum Problem: Error, Equatable, CustomStringConvertible {
        /// The Content-Type names no boundary.
        case noBoundary
        /// The body does not hold the boundary where a part should start or end.
        case malformed(String)

        var description: String {
            switch self {
            case .noBoundary: "multipart/form-data without a boundary parameter in its Content-Type"
            case .malformed(let reason): "malformed multipart/form-data body: \(reason)"
            }
        }
    }

    /// The parts, in order.
    var parts: [Part]

    /// The boundary of a `multipart/form-data` Content-Type; nil for any other type.
    /// Throws when it is multipart/form-data without a usable boundary.
    static func boundary(contentType: String?) throws(Problem) -> String? {
        guard let contentType else { return nil }
        let parameters = contentType.split(separator: ";").map { $0.trimmingSpaces }
        guard let type = parameters.first, type.lowercased() == "multipart/form-data" else { return nil }
        for parameter in parameters.dropFirst() {
            guard let equals = parameter.firstIndex(of: "="),
                  parameter[..<equals].trimmingSpaces.lowercased() == "boundary" else { continue }
            var value = parameter[parameter.index(after: equals)...].trimmingSpaces
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
            // RFC 2046: 1 to 70 characters.
            guard (1...70).contains(value.count) else { break }
            return String(value)
        }
        throw .noBoundary
    }

    /// Parses `body` delimited by `boundary`.
    init(body: [UInt8], boundary: String) throws(Problem) {
        let delimiter = Array("--\(boundary)".utf8)
        guard var position = Self.find(delimiter, in: body, from: 0) else { throw .malformed("the boundary never appears") }
        var parts: [Part] = []
        while true {
            position += delimiter.count
            // "--" after a delimiter closes the form; anything after it is an epilogue.
            if body[position...].starts(with: Self.dashes) { break }
            position = Self.skipLineEnd(body, position)
            guard let next = Self.find(Self.crlf + delimiter, in: body, from: position) else {
                throw .malformed("a part is not closed by the boundary")
            }
            parts.append(try Self.part(body[position..<next]))
            position = next + Self.crlf.count
        }
        self.parts = parts
    }

    /// The first part named `name`.
    func part(named name: String) -> Part? { parts.first { $0.name == name } }

    private static let crlf: [UInt8] = [13, 10]
    private static let dashes: [UInt8] = [45, 45]
    private static let headerEnd = crlf + crlf

    /// One part: header lines, a blank line, the content.
    private static func part(_ bytes: ArraySlice<UInt8>) throws(Problem) -> Part {
        guard let blank = find(headerEnd, in: bytes, from: bytes.startIndex) else {
            throw .malformed("a part has no blank line after its headers")
        }
        let head = String(decoding: bytes[bytes.startIndex..<blank], as: UTF8.self)
        var name: String?
        var fileName: String?
        var contentType: String?
        for line in head.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let field = line[..<colon].trimmingSpaces.lowercased()
            let value = line[line.index(after: colon)...].trimmingSpaces
            if field == "content-type" { contentType = String(value) }
            guard field == "content-disposition" else { continue }
            for parameter in value.split(separator: ";").dropFirst() {
                guard let equals = parameter.firstIndex(of: "=") else { continue }
                let key = parameter[..<equals].trimmingSpaces.lowercased()
                var text = parameter[parameter.index(after: equals)...].trimmingSpaces
                if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = text.dropFirst().dropLast() }
                if key == "name" { name = String(text) }
                if key == "filename" { fileName = String(text) }
            }
        }
        guard let name else { throw .malformed("a part has no name in its Content-Disposition") }
        return Part(name: name, fileName: fileName, contentType: contentType, content: Array(bytes[(blank + headerEnd.count)...]))
    }

    /// Steps over the line end after a delimiter (and any transport padding before it).
    private static func skipLineEnd(_ body: [UInt8], _ position: Int) -> Int {
        var index = position
        while index < body.count, body[index] == 32 || body[index] == 9 { index += 1 }
        return body[index...].starts(with: crlf) ? index + crlf.count : index
    }

    /// The index of the first `needle` in `haystack` at or after `start`.
    private static func find<Bytes: RandomAccessCollection<UInt8>>(_ needle: [UInt8], in haystack: Bytes, from start: Int) -> Int?
    where Bytes.Index == Int {
        guard let first = needle.first, haystack.endIndex - start >= needle.count else { return nil }
        var index = start
        let last = haystack.endIndex - needle.count
        while index <= last {
            if haystack[index] == first, haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}
