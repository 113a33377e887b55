/// What kind of failure stopped a photo: a short, stable name that metrics, `darkroom status`
/// and the import report group by. Each error type of Darkroom says its category where it is
/// made; the message beside it is for people and may be reworded freely.
public enum FailureCategory: String, Sendable, Codable, CaseIterable, Comparable {
    /// The photo or its sidecar is damaged, empty or contradictory: fix the file.
    case badInput = "bad_input"
    /// Not a format Darkroom reads (a video, a document, a 12-bit JPEG).
    case unsupportedFormat = "unsupported_format"
    /// Above the pixel limit or the memory at hand (a possible decompression bomb).
    case tooLarge = "too_large"
    /// The spool's or the library's file system: disk full, permissions, I/O.
    case storage
    /// The catalog: busy beyond its timeout, damaged, unreachable.
    case catalog
    /// Took longer than `worker.photo_timeout_seconds`.
    case timeout
    /// A worker died on the photo more often than `worker.max_recoveries`.
    case crashed
    /// The configuration cannot render it (an invalid variant recipe or colour).
    case configuration
    /// Anything else: a fault of Darkroom itself.
    case `internal`

    public static func < (lhs: FailureCategory, rhs: FailureCategory) -> Bool {
        (allCases.firstIndex(of: lhs) ?? 0) < (allCases.firstIndex(of: rhs) ?? 0)
    }
}

/// An error that knows its category.
public protocol CategorizedError: Error {
    /// What kind of failure this is.
    var category: FailureCategory { get }
}

extension FailureCategory {
    /// The category of any error: its own where it has one, `internal` otherwise.
    public init(of error: any Error) {
        self = (error as? any CategorizedError)?.category ?? .internal
    }
}

/// An error that knows whether the same work may succeed when tried again (a full disk, a busy
/// catalog, a bucket answering 503) or never will (a damaged file, a refused signature).
public protocol TransientAwareError: CategorizedError {
    /// True for conditions that may pass.
    var isTransient: Bool { get }
}
