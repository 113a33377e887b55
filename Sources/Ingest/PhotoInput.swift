import MetadataReading

/// One photo for the processor, wherever it comes from: a spool claim or a file of a library
/// being imported. Both take the same path through `PhotoProcessor.process(_:attempt:deadline:startedAt:)`.
public struct PhotoInput: Sendable {
    /// Where the photo's bytes are read.
    public var path: String
    /// The name it is recorded under (`pictures.source_name`, `jobs.source_name`).
    public var sourceName: String
    /// What identifies this arrival in the jobs table (`jobs.claim_path`).
    public var jobKey: String
    /// The worker processing it.
    public var worker: String
    /// What the uploader (or an imported library's sidecars) says about the photo.
    public var sidecar: Sidecar?
    /// The sidecar as kept in the job row.
    public var sidecarJson: String?
    /// Where the sidecar's values came from (an imported library's Takeout or XMP files), put
    /// first among the metadata's warnings so that the catalog shows it.
    public var notes: [String] = []
    /// Hard-link the original into the library from `path` rather than write a copy.
    public var linkOriginal = false
    /// The user asked the library to share the source's file (`import --link` or `--move`): it
    /// is linked whoever owns it. Else only a file the spool alone owns is linked.
    public var shareSource = false
    /// Whether the sidecar is the backend's own word (a spool sidecar: an upload's fields,
    /// `enqueue --sidecar`): its `taken_at` and location then win over EXIF. An imported
    /// library's sidecars (Takeout, XMP, written by other tools) only fill what EXIF lacks.
    public var sidecarOverridesExif = false

    public init(path: String, sourceName: String, jobKey: String, worker: String, sidecar: Sidecar?,
                sidecarJson: String?, notes: [String] = [], linkOriginal: Bool = false, sidecarOverridesExif: Bool = false) {
        self.path = path
        self.sourceName = sourceName
        self.jobKey = jobKey
        self.worker = worker
        self.sidecar = sidecar
        self.sidecarJson = sidecarJson
        self.notes = notes
        self.linkOriginal = linkOriginal
        self.sidecarOverridesExif = sidecarOverridesExif
    }
}
