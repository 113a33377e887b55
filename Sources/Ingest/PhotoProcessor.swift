import Catalog
import CRuntime
import Foundation
import Imaging
import MetadataReading
import PhotoMetadata
import Settings
import Storage

/// Turns one claimed photo into stored files and a committed catalog entry. Every step but the
/// last two is a function of the photo's bytes; the side effects sit at the end: the library
/// (durable files), then the catalog (one transaction).
public struct PhotoProcessor: Sendable {
    public let configuration: Configuration
    public let library: any BlobStore
    public let catalog: any PictureCatalog
    public let budget: PixelBudget
    /// Allocations below this size stay in the heap (a 12 MP decode at 5/8 scale is ~14 MB).
    public static let largeAllocationThreshold = 256 << 20

    /// The processor of every photo, for the spool's workers, the import and the HTTP hook alike.
    public init(configuration: Configuration, library: any BlobStore, catalog: any PictureCatalog, budget: PixelBudget) {
        self.configuration = configuration
        self.library = library
        self.catalog = catalog
        self.budget = budget
        Self.keepLargeAllocations()
    }

    /// Rasters of one photo are tens of MB: the heap keeps them for the next photo rather than
    /// mapping and unmapping them for every photo (see cruntime.h for the measured effect).
    /// Process-wide and idempotent; a processor does it when made, and so does a bench that
    /// renders without one.
    public static func keepLargeAllocations() {
        _ = darkroom_keep_large_allocations(largeAllocationThreshold, largeAllocationThreshold * 2)
    }

    /// Processes a claimed photo; throws a `ProcessingFailure` when it cannot.
    public func process(_ claim: Claim, attempt: Int, deadline: Date, startedAt: Date) throws -> PhotoOutcome {
        let sidecarBytes = try claim.sidecarPath.map { path throws in try Self.readSidecar(path, sourceName: claim.sourceName) }
        let sidecar = try sidecarBytes.map { bytes throws in
            do { return try Sidecar(jsonBytes: bytes) } catch {
                throw ProcessingFailure.permanent("sidecar \(claim.sourceName).json: \(error); fix it, then run `darkroom retry`", .badInput)
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
    public func process(_ input: PhotoInput, attempt: Int, deadline: Date, startedAt: Date) throws -> PhotoOutcome {
        StageProfile.begin()
        let bytes = try readPhoto(input)
        StageProfile.lap(.read)
        guard let format = Imaging.sniff(bytes) else {
            throw ProcessingFailure.permanent(PhotoFormat.refusal(bytes), bytes.isEmpty ? .badInput : .unsupportedFormat)
        }
        let fileTime = FileSystem.status(input.path).map { Date(timeIntervalSince1970: $0.modified) }
        var metadata = PhotoMetadata.read(bytes, sidecar: input.sidecar, fileTime: fileTime,
                                          options: MetadataOptions(defaultTimeZone: configuration.defaultTimeZone,
                                                                   sidecarOverridesExif: input.sidecarOverridesExif))
        StageProfile.lap(.metadata)
        metadata.warnings = input.notes + metadata.warnings
        var job = JobRecord(sourceName: input.sourceName, claimPath: input.jobKey, sha256: metadata.sha256,
                            outcome: .added, pictureId: nil, attempts: attempt, error: nil,
                            sidecarJson: input.sidecarJson,
                            worker: input.worker, startedAt: startedAt.timeIntervalSince1970, finishedAt: 0)

        // The same bytes twice make one picture: no need to decode a known photo again. What
        // this copy says of time and place completes the picture where it lacks them, so that
        // the catalog does not depend on which copy came first.
        if let existing = try catalog.picture(sha256: metadata.sha256), let id = existing.id {
            let facts = PictureRecordBuilder.captureFacts(metadata: metadata, sourceName: input.sourceName, now: Date())
            job.finishedAt = Date().timeIntervalSince1970
            try catalog.recordDuplicate(job, of: id, facts: facts)
            return .duplicate(of: id)
        }
        StageProfile.lap(.catalog)

        // The header alone tells the pixel count: the budget is taken before any raster exists,
        // and a bomb is refused by the pixel limit inside render, before any allocation.
        let info = try Imaging.probe(bytes)
        let pixels = info.width * info.height
        let rendered: RenderResult
        do {
            // The decoders stop at the deadline themselves: a photo past it is stopped, not waited for.
            rendered = try budget.withPixels(pixels) {
                try Deadline.during(deadline) {
                    try Imaging.render(bytes, recipes: configuration.variants,
                                       options: configuration.renderOptions(orientation: metadata.orientation,
                                                                            focalPoint: metadata.focalPoint.map { FocalPoint(x: $0.x, y: $0.y) }))
                }
            }
        } catch ImagingError.pastDeadline {
            throw timedOut
        }
        try checkDeadline(deadline)
        StageProfile.lap(.render)

        let ext = PhotoFormat.fileExtension(format)
        let original = OriginalBlob(bytes: bytes, fileExtension: ext, source: input.linkOriginal ? input.path : nil,
                                    sharing: input.shareSource)
        let (originalPath, paths) = try library.putPhoto(
            original: original, variants: rendered.variants.map { (name: $0.name, extension: $0.format.fileExtension, bytes: $0.bytes) },
            sha256: metadata.sha256)
        let variants = zip(rendered.variants, paths).map { variant, path in
            VariantRecord(pictureId: 0, name: variant.name, path: path, width: variant.width,
                          height: variant.height, bytes: Int64(variant.bytes.count), format: variant.format.rawValue)
        }
        try checkDeadline(deadline)
        StageProfile.lap(.library)

        defer { StageProfile.lap(.catalog) }
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
        if Date() > deadline { throw timedOut }
    }

    private var timedOut: ProcessingFailure {
        .permanent("took longer than \(String(format: "%g", configuration.photoTimeoutSeconds)) s (worker.photo_timeout_seconds) and was stopped; raise the limit to process it", .timeout)
    }
}
