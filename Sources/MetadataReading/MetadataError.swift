import Failures

/// Why a sidecar could not be used. The photo itself is never lost: the caller decides whether
/// to ingest it without the sidecar or to set it aside.
public enum MetadataError: CategorizedError, CustomStringConvertible, Equatable {
    /// The sidecar file exists but could not be read.
    case sidecarUnreadable(file: String, reason: String)
    /// The sidecar is not a JSON object.
    case sidecarNotJSON(file: String?, reason: String)
    /// A key of the sidecar holds a value of the wrong kind or out of range.
    case sidecarMalformed(file: String?, key: String, problem: String)

    /// One line: what failed, on which file, what to do.
    public var description: String {
        switch self {
        case .sidecarUnreadable(let file, let reason):
            "cannot read sidecar \(file): \(reason); check its permissions or remove it"
        case .sidecarNotJSON(let file, let reason):
            "sidecar \(file ?? "(bytes)") is not a JSON object: \(reason); fix or remove the sidecar"
        case .sidecarMalformed(let file, let key, let problem):
            "sidecar \(file ?? "(bytes)"): key \"\(key)\" \(problem); fix or remove the sidecar"
        }
    }

    /// A sidecar that cannot be used is always the input's fault.
    public var category: FailureCategory { .badInput }

    /// The same error attributed to a file.
    func attributed(to file: String) -> MetadataError {
        switch self {
        case .sidecarUnreadable: self
        case .sidecarNotJSON(_, let reason): .sidecarNotJSON(file: file, reason: reason)
        case .sidecarMalformed(_, let key, let problem): .sidecarMalformed(file: file, key: key, problem: problem)
        }
    }
}
