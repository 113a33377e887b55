import Catalog
import CRuntime
import Foundation
import Imaging
import PhotoMetadata

/// Why a photo could not be processed, and whether trying again may help.
public struct ProcessingFailure: Error, CustomStringConvertible, Sendable {
    /// One line: what failed and what to do.
    public var reason: String
    /// True for conditions that may pass (disk full, catalog busy); false for the photo itself.
    public var isTransient: Bool

    public var description: String { reason }

    static func permanent(_ reason: String) -> ProcessingFailure { ProcessingFailure(reason: reason, isTransient: false) }

    init(reason: String, isTransient: Bool) {
        self.reason = reason
        self.isTransient = isTransient
    }

    /// Classifies any error thrown while processing one photo.
    init(_ error: any Error) {
        switch error {
        case let failure as ProcessingFailure: self = failure
        case let error as FileSystemError: self.init(reason: error.description, isTransient: error.isTransient)
        case let error as CatalogError: self.init(reason: error.description, isTransient: error.isTransient)
        case let error as ImagingError: self.init(reason: error.description, isTransient: false)
        case let error as MetadataError: self.init(reason: error.description, isTransient: false)
        default: self.init(reason: "\(error)", isTransient: false)
        }
    }
}

/// What became of one photo.
public enum PhotoOutcome: Sendable, Equatable {
    case added(pictureId: Int64, momentId: Int64?)
    case duplicate(of: Int64)

    var label: String {
        switch self {
        case .added: "added"
        case .duplicate: "duplicate"
        }
    }
}

/// One photo for the processor, wherever it comes from: a spool claim or a file of a library
/// being imported. Both take the same path through `PhotoProcessor.process(_:attempt:deadline:startedAt:)`.
struct PhotoInput: Sendable {
    /// Where the photo's bytes are read.
    var path: String
    /// The name it is recorded under (`pictures.source_name`, `jobs.source_name`).
    var sourceName: String
    /// What identifies this arrival in the jobs table (`jobs.claim_path`).
    var jobKey: String
    /// The worker processing it.
    var worker: String
    /// What the uploader (or an imported library's sidecars) says about the photo.
    var sidecar: Sidecar?
    /// The sidecar as kept in the job row.
    var sidecarJson: String?
    /// Where the sidecar's values came from (an imported library's Takeout or XMP files), put
    /// first among the metadata's warnings so that the catalog shows it.
    var notes: [String] = []
    /// Hard-link the original into the library from `path` rather than write a copy.
    var linkOriginal = false
    /// Whether the sidecar is the backend's own word (a spool sidecar: an upload's fields,
    /// `enqueue --sidecar`): its `taken_at` and location then win over EXIF. An imported
    /// library's sidecars (Takeout, XMP, written by other tools) only fill what EXIF lacks.
    var sidecarOverridesExif = false
}

/// Turns one claimed photo into stored files and a committed catalog entry. Every step but the
/// last two is a function of the photo's bytes; the side effects sit at the end: the library
/// (durable files), then the catalog (one transaction).
struct PhotoProcessor: Sendable {
    let configuration: Configuration
    let library: Library
    let catalog: Catalog
    let budget: PixelBudget
    /// Allocations below this size stay in the heap (a 12 MP decode at 5/8 scale is ~14 MB).
    static let largeAllocationThreshold = 256 << 20

    /// The processor of every photo, for the spool's workers, the import and the HTTP hook alike.
    init(configuration: Configuration, library: Library, catalog: Catalog, budget: PixelBudget) {
        self.configuration = configuration
        self.library = library
        self.catalog = catalog
        self.budget = budget
        // Rasters of one photo are tens of MB: reuse the heap rather than map and unmap them for
        // every photo (see cruntime.h for the measured effect). Process-wide, and idempotent.
        _ = darkroom_keep_large_allocations(Self.largeAllocationThreshold, Self.largeAllocationThreshold * 2)
    }

    /// Processes a claimed photo; throws a `ProcessingFailure` when it cannot.
    func process(_ claim: Claim, attempt: Int, deadline: Date, startedAt: Date) throws -> PhotoOutcome {
        let sidecarBytes = try claim.sidecarPath.map { path throws in try FileSystem.read(path) }
        let sidecar = try sidecarBytes.map { bytes throws in
            do { return try Sidecar(jsonBytes: bytes) } catch {
                throw ProcessingFailure.permanent("sidecar \(claim.sourceName).json: \(error); fix it, then run `darkroom retry`")
            }
        }
        // The claimed file is the spool's to consume (it is removed once committed): link it into
        // the library rather than write its bytes a second time, when the file systems allow.
        let input = PhotoInput(path: claim.path, sourceName: claim.sourceName, jobKey: claim.path, worker: claim.worker,
                               sidecar: sidecar, sidecarJson: sidecarBytes.map { String(decoding: $0, as: UTF8.self) },
                               linkOriginal: true, sidecarOverridesExif: true)
        return try process(input, attempt: attempt, deadline: deadline, startedAt: startedAt)
    }

    /// Processes one photo from any source; throws a `ProcessingFailure` when it cannot.
    func process(_ input: PhotoInput, attempt: Int, deadline: Date, startedAt: Date) throws -> PhotoOutcome {
        let bytes = try FileSystem.read(input.path)
        guard let format = Imaging.sniff(bytes) else {
            throw ProcessingFailure.permanent(PhotoFormat.refusal(bytes))
        }
        let fileTime = FileSystem.status(input.path).map { Date(timeIntervalSince1970: $0.modified) }
        var metadata = PhotoMetadata.read(bytes, sidecar: input.sidecar, fileTime: fileTime,
                                          options: MetadataOptions(defaultTimeZone: configuration.defaultTimeZone,
                                                                   sidecarOverridesExif: input.sidecarOverridesExif))
        metadata.warnings = input.notes + metadata.warnings
        var job = JobRecord(sourceName: input.sourceName, claimPath: input.jobKey, sha256: metadata.sha256,
                            outcome: .added, pictureId: nil, attempts: attempt, error: nil,
                            sidecarJson: input.sidecarJson,
                            worker: input.worker, startedAt: startedAt.timeIntervalSince1970, finishedAt: 0)

        // The same bytes twice make one picture: no need to decode a known photo again.
        if let existing = try catalog.picture(sha256: metadata.sha256), let id = existing.id {
            job.finishedAt = Date().timeIntervalSince1970
            try catalog.recordDuplicate(job, of: id)
            return .duplicate(of: id)
        }

        // The header alone tells the pixel count: the budget is taken before any raster exists,
        // and a bomb is refused by the pixel limit inside render, before any allocation.
        let info = try Imaging.probe(bytes)
        let pixels = info.width * info.height
        let rendered = try budget.withPixels(pixels) {
            try Imaging.render(bytes, recipes: configuration.variants,
                               options: configuration.renderOptions(orientation: metadata.orientation,
                                                                    focalPoint: metadata.focalPoint.map { FocalPoint(x: $0.x, y: $0.y) }))
        }
        try checkDeadline(deadline)

        let ext = PhotoFormat.fileExtension(format)
        let originalPath = input.linkOriginal
            ? try library.linkOriginal(from: input.path, bytes: bytes, sha256: metadata.sha256, extension: ext)
            : try library.storeOriginal(bytes, sha256: metadata.sha256, extension: ext)
        let paths = rendered.variants.map { Library.variantPath(sha256: metadata.sha256, variant: $0.name, extension: "jpg") }
        try library.store(zip(rendered.variants, paths).map { (bytes: $0.bytes, relative: $1) })
        let variants = zip(rendered.variants, paths).map { variant, path in
            VariantRecord(pictureId: 0, name: variant.name, path: path, width: variant.width,
                          height: variant.height, bytes: Int64(variant.bytes.count), format: variant.format.rawValue)
        }
        try checkDeadline(deadline)

        let picture = PictureRecordBuilder.make(metadata: metadata, info: info, rendered: rendered,
                                                sourceName: input.sourceName, originalPath: originalPath,
                                                feed: configuration.feedRecipe, now: Date())
        job.finishedAt = Date().timeIntervalSince1970
        return try outcome(catalog.commitPicture(picture, variants: variants, job: job))
    }

    private func outcome(_ commit: CommitOutcome) -> PhotoOutcome {
        switch commit {
        case .added(let id, let moment): .added(pictureId: id, momentId: moment)
        case .duplicate(let id): .duplicate(of: id)
        }
    }

    private func checkDeadline(_ deadline: Date) throws {
        if Date() > deadline {
            throw ProcessingFailure.permanent("took longer than \(Int(configuration.photoTimeoutSeconds)) s (worker.photo_timeout_seconds); raise the limit to process it")
        }
    }
}
