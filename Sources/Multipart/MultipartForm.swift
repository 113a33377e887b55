/// A `multipart/form-data` body (RFC 7578) held whole: the parts in order, each with its name,
/// its file name if any, and its content. Uploads do not build one (they stream the body through
/// `MultipartStream`); it is the stream's parts collected, for small forms and tests.
public struct MultipartForm: Sendable, Equatable {
    /// One part of the form.
    public struct Part: Sendable, Equatable {
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
    public enum Problem: Error, Equatable, CustomStringConvertible {
        /// The Content-Type names no boundary.
        case noBoundary
        /// The body does not hold the boundary where a part should start or end.
        case malformed(String)
        /// The form passes one of `MultipartStream.Limits` (answered 413).
        case tooMany(String)

        public var description: String {
            switch self {
            case .noBoundary: "multipart/form-data without a boundary parameter in its Content-Type"
            case .malformed(let reason): "malformed multipart/form-data body: \(reason)"
            case .tooMany(let reason): "multipart/form-data body refused: \(reason)"
            }
        }
    }

    /// The parts, in order.
    public var parts: [Part]

    /// The boundary of a `multipart/form-data` Content-Type; nil for any other type.
    /// Throws when it is multipart/form-data without a usable boundary.
    public static func boundary(contentType: String?) throws(Problem) -> String? {
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
    public init(body: [UInt8], boundary: String, limits: MultipartStream.Limits = .upload) throws(Problem) {
        var stream = MultipartStream(boundary: boundary, limits: limits)
        var parts: [Part] = []
        do {
            try stream.feed(body) { event in
                switch event {
                case let .partStarted(name, fileName, contentType):
                    parts.append(Part(name: name, fileName: fileName, contentType: contentType, content: []))
                case .content(let bytes): parts[parts.count - 1].content += bytes
                case .partEnded: break
                }
            }
        } catch let problem as Problem {
            throw problem
        } catch {
            throw .malformed("\(error)")
        }
        try stream.finish()
        self.parts = parts
    }

    /// The first part named `name`.
    public func part(named name: String) -> Part? { parts.first { $0.name == name } }
}
