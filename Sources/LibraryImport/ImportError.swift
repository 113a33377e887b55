/// Why `darkroom import` cannot start or finish: one line naming the file and what to do.
public enum ImportError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A folder to import is missing, unreadable or not a folder.
    case notAFolder(String, reason: String)
    /// The library or the catalog cannot be opened.
    case cannotOpen(String)
    /// The `--report` file cannot be written.
    case reportNotWritten(String, reason: String)

    public var description: String {
        switch self {
        case .notAFolder(let path, let reason):
            "\(path): cannot import it (\(reason)); name a folder you can read"
        case .cannotOpen(let reason):
            "cannot open the library or catalog: \(reason); check library.root and catalog.path in pipeline.json"
        case .reportNotWritten(let path, let reason):
            "cannot write the report \(path): \(reason); choose a writable path for --report"
        }
    }
}
