import Foundation
import Hummingbird
import Settings

/// The id of one request: sent back in the `X-Request-Id` header of every answer and in the body
/// of every error, and logged with the full detail of a failure, so that an operator can find
/// what the answer leaves out (paths, host names, the database's own message).
enum RequestID {
    /// The response header that carries it.
    static let header = "X-Request-Id"
    static let headerName = HTTPFields.Element.Name(header)

    /// The id of the request being answered by the current task; nil outside a request.
    @TaskLocal static var current: String?

    /// A new id: 16 hexadecimal digits, random.
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// Takes out of an answer what only the server's operator should see: the absolute paths of
/// the spool, library and catalog (named by their role instead), and this machine's host name.
/// The answers are written without them in the first place (`APIError`); this is the net below,
/// for text that comes from elsewhere (a failed photo's reason, a lower layer's message).
struct Redaction: Sendable {
    private let replacements: [(String, String)]

    init(configuration: Configuration) {
        func absolute(_ path: String) -> String {
            URL(fileURLWithPath: path).standardizedFileURL.path
        }
        var pairs = [(absolute(configuration.spoolRoot), "<spool>"), (absolute(configuration.libraryRoot), "<library>"),
                     (absolute(configuration.catalogPath), "<catalog>")]
        let host = ProcessInfo.processInfo.hostName
        if host.count >= 3 { pairs.append((host, "<host>")) }
        // Longest first, so that a catalog inside the spool's folder is named as the catalog.
        replacements = pairs.filter { $0.0.count > 1 }.sorted { $0.0.count > $1.0.count }
    }

    /// The text with every known path and the host name replaced.
    func scrub(_ text: String) -> String {
        replacements.reduce(text) { $0.replacingOccurrences(of: $1.0, with: $1.1) }
    }
}
