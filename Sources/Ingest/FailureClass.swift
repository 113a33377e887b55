/// A short, stable class of a failed photo's reason, for metrics labels and summaries.
///
/// Reasons are one-line sentences that name files and codec messages, too many to label a
/// metric with; the class is derived from how each is worded where it is made:
/// `ProcessingFailure` (PhotoProcessor.swift, Worker.swift), `ImagingError`, `MetadataError`,
/// `FileSystemError` and `CatalogError`. A reason worded in a way not listed here is `other`.
public enum FailureClass: String, Sendable, CaseIterable {
    /// A zero-byte file.
    case empty
    /// Not a JPEG or PNG, or a JPEG the decoder cannot read (12-bit).
    case unsupportedFormat = "unsupported_format"
    /// A truncated or corrupt image, or one whose header is impossible.
    case corrupt
    /// Above the pixel limit (a possible decompression bomb) or beyond the memory at hand.
    case tooLarge = "too_large"
    /// Took longer than `worker.photo_timeout_seconds`.
    case timeout
    /// A sidecar that could not be read or used.
    case sidecar
    /// The library or spool's file system (disk full, permissions, I/O).
    case storage
    /// The catalog (busy beyond its timeout, damaged).
    case catalog
    /// A worker died on the photo more often than `worker.max_recoveries`.
    case crashed
    /// The configuration (an invalid variant recipe or background colour).
    case configuration
    /// Anything else.
    case other

    /// The class of a stored reason (`jobs.error`).
    public init(reason: String) {
        let text = reason.lowercased()
        self = Self.rules.first { rule in rule.markers.contains { text.contains($0) } }?.class ?? .other
    }

    /// Markers tried in order: the first rule with a marker found in the reason wins. Sidecar
    /// and catalog rules come before the last storage rule, whose reasons also begin with
    /// "cannot"; a full disk is storage even when the catalog was being written.
    private static let rules: [(class: FailureClass, markers: [String])] = [
        (.empty, ["empty file (0 bytes)", "file is empty (0 bytes)"]),
        (.sidecar, ["sidecar "]),
        (.unsupportedFormat, ["not a jpeg or png", "-bit jpeg is not supported"]),
        (.corrupt, ["is truncated", "data is corrupt", "declares a zero size"]),
        (.tooLarge, ["above the limit of", "not enough memory to decode"]),
        (.timeout, ["took longer than"]),
        (.crashed, ["a worker stopped while processing"]),
        (.configuration, ["variant recipe", "background colour"]),
        (.storage, ["disk full", "no space left on device"]),
        (.catalog, ["catalog"]),
        (.storage, ["cannot "]),
    ]
}
