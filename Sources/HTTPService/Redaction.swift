import Foundation
import Settings

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
