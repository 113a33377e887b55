#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `multipart/form-data` body (RFC 7578) parsed as it streams in: each chunk is fed as it
/// arrives and the parser reports the parts' starts, contents and ends, holding at most one
/// part's header block and a delimiter's length of content between chunks. The limits
/// (`Limits`) are checked as the bytes arrive, so a body of a million empty parts, or one
/// endless header, is refused as soon as it passes one, not after it has been read whole.
///
/// Why not vapor's multipart-kit (4.7.1): its `MultipartParser` streams too and hands content
/// out as buffer slices, but it reads headers a byte at a time into name and value arrays with
/// no bound (one endless header name grows until the body limit) and counts no parts; it is a
/// non-Sendable class driven by callbacks, so every limit here would still have to be kept
/// outside it, one callback late. This parser is the state machine those limits need, and
/// finds delimiters with memchr rather than byte by byte.
public struct MultipartStream {
    /// How much one form may hold.
    public struct Limits: Sendable, Equatable {
        /// Parts in one form: a photo and every field of an upload, with room to spare.
        public var parts = 16
        /// The header block of one part (its Content-Disposition and Content-Type lines).
        public var headerBytes = 4096
        /// The padding and preamble skipped before the first part.
        public var preambleBytes = 4096

        public static let upload = Limits()

        public init() {}
    }

    /// What the parser found in the bytes fed so far.
    public enum Event: Equatable {
        /// A part begins, with its headers.
        case partStarted(name: String, fileName: String?, contentType: String?)
        /// Bytes of the current part's content.
        case content(ArraySlice<UInt8>)
        /// The current part is complete.
        case partEnded
    }

    public typealias Problem = MultipartForm.Problem

    private enum State {
        case preamble, afterDelimiter, headers, content, epilogue
    }

    private let delimiter: [UInt8]
    private let limits: Limits
    private var state = State.preamble
    private var buffer: [UInt8]
    private var parts = 0
    private var preambleSeen = 0

    /// A parser for parts delimited by `boundary`.
    public init(boundary: String, limits: Limits = .upload) {
        delimiter = Self.crlf + Array("--\(boundary)".utf8)
        self.limits = limits
        // The first delimiter may open the body with no line end before it.
        buffer = Self.crlf
    }

    /// Feeds the next bytes of the body, calling `handle` for each event they complete.
    public mutating func feed(_ bytes: some Sequence<UInt8>, _ handle: (Event) throws -> Void) throws {
        guard state != .epilogue else { return }
        buffer.append(contentsOf: bytes)
        var start = 0
        defer { buffer.removeFirst(start) }
        while true {
            switch state {
            case .epilogue:
                start = buffer.count
                return
            case .preamble:
                if let found = find(delimiter, from: start) {
                    start = found + delimiter.count
                    state = .afterDelimiter
                } else {
                    let keep = max(start, buffer.count - (delimiter.count - 1))
                    preambleSeen += keep - start
                    start = keep
                    guard preambleSeen <= limits.preambleBytes else {
                        throw Problem.malformed("no boundary within the first \(limits.preambleBytes) bytes")
                    }
                    return
                }
            case .afterDelimiter:
                guard buffer.count - start >= 2 else { return }
                if buffer[start] == 45 && buffer[start + 1] == 45 {
                    state = .epilogue
                    continue
                }
                var index = start
                while index < buffer.count, buffer[index] == 32 || buffer[index] == 9 { index += 1 }
                guard index - start <= limits.headerBytes else { throw Problem.tooMany("padding after a boundary longer than \(limits.headerBytes) bytes") }
                guard index < buffer.count else { return }
                start = index
                parts += 1
                guard parts <= limits.parts else { throw Problem.tooMany("more than \(limits.parts) parts") }
                state = .headers
            case .headers:
                // The line end after the delimiter starts the block, so an empty block is found too.
                guard let end = find(Self.headerEnd, from: start) else {
                    guard buffer.count - start <= limits.headerBytes + Self.headerEnd.count else {
                        throw Problem.tooMany("a part's headers are longer than \(limits.headerBytes) bytes")
                    }
                    return
                }
                guard end - start <= limits.headerBytes else { throw Problem.tooMany("a part's headers are longer than \(limits.headerBytes) bytes") }
                guard buffer[start..<min(start + 2, buffer.count)].elementsEqual(Self.crlf) else {
                    throw Problem.malformed("a boundary is followed by more than a line end")
                }
                try handle(try Self.partStart(buffer[min(start + 2, end)..<end]))
                start = end + Self.headerEnd.count
                state = .content
            case .content:
                if let found = find(delimiter, from: start) {
                    if found > start { try handle(.content(buffer[start..<found])) }
                    try handle(.partEnded)
                    start = found + delimiter.count
                    state = .afterDelimiter
                } else {
                    // The last bytes may be the start of a delimiter: keep them for the next chunk.
                    let safe = buffer.count - (delimiter.count - 1)
                    if safe > start {
                        try handle(.content(buffer[start..<safe]))
                        start = safe
                    }
                    return
                }
            }
        }
    }

    /// Checks the body ended with the closing delimiter.
    public func finish() throws(Problem) {
        switch state {
        case .epilogue: return
        case .preamble: throw .malformed("the boundary never appears")
        case .content: throw .malformed("a part is not closed by the boundary")
        case .headers: throw .malformed("a part has no blank line after its headers")
        case .afterDelimiter: throw .malformed("the body ends after a boundary without closing the form")
        }
    }

    private static let crlf: [UInt8] = [13, 10]
    private static let headerEnd = crlf + crlf

    /// The index of `needle` in the buffer at or after `start`: memchr finds each candidate
    /// first byte at memory speed, so a photo's content is scanned quickly even in debug builds.
    private func find(_ needle: [UInt8], from start: Int) -> Int? {
        guard let first = needle.first, buffer.count - start >= needle.count else { return nil }
        return buffer.withUnsafeBytes { haystack -> Int? in
            guard let base = haystack.baseAddress else { return nil }
            let last = haystack.count - needle.count
            var index = start
            while index <= last {
                guard let hit = memchr(base + index, Int32(first), last - index + 1) else { return nil }
                index = base.distance(to: UnsafeRawPointer(hit))
                if memcmp(base + index, needle, needle.count) == 0 { return index }
                index += 1
            }
            return nil
        }
    }

    /// A part's header block (lines without the final blank line) read into its start event.
    private static func partStart(_ bytes: ArraySlice<UInt8>) throws(Problem) -> Event {
        let head = String(decoding: bytes, as: UTF8.self)
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
        return .partStarted(name: name, fileName: fileName, contentType: contentType)
    }
}
