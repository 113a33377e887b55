import Catalog
import Crypto
import Foundation
import Imaging
import Logging
import ObjectStorage
import Settings
import Storage

/// `darkroom library check`: the configured store (a directory or a bucket) against the catalog.
///
/// Finds orphans (files under `originals/` and `variants/` that no picture or variant names),
/// and pictures whose files are missing or not the size the catalog records. The catalog is
/// read before the store is listed and again after: a file is missing only when the first
/// reading names it and the listing lacks it (a worker writes a photo's files before it commits,
/// so a picture committed meanwhile has its files listed), and an orphan only when the second
/// reading does not name it (a picture committed during the listing is in that one).
///
/// With `repair`: an orphan written more than `orphanAge` seconds ago is removed (a younger one
/// may be a photo whose commit is on its way, and is kept); a lost variant is rendered again
/// from its original as the worker would (the picture's orientation, focal point and stored feed
/// crop, the recipes of pipeline.json) and stored, when the recipe still gives the same path and
/// size in pixels; a lost original is put back from `library.backup_dir` when that holds a file
/// with the picture's SHA-256.
public struct LibraryCheck: Sendable {
    public let store: any MaintainedStore
    public let catalog: any CatalogStore
    public let references: any LibraryReferenceReading
    public let configuration: Configuration
    public let repair: Bool
    /// Seconds since its last write after which `repair` removes an orphan.
    public let orphanAge: Double
    public let logger: Logger

    public static let defaultOrphanAge = 3600.0

    public init(store: any MaintainedStore, catalog: any CatalogStore, references: any LibraryReferenceReading,
                configuration: Configuration, repair: Bool, orphanAge: Double = Self.defaultOrphanAge, logger: Logger) {
        self.store = store
        self.catalog = catalog
        self.references = references
        self.configuration = configuration
        self.repair = repair
        self.orphanAge = orphanAge
        self.logger = logger
    }

    /// Checks (and repairs); throws only when the store or the catalog cannot be read.
    public func run(now: Date = Date()) async throws(LibraryMaintenanceError) -> LibraryCheckReport {
        let before = try readReferences()
        let listed: [StoredObject]
        do {
            listed = try await store.listLibrary()
        } catch {
            throw Self.storeError(error, doing: "list \(store.location)")
        }
        let after = try readReferences()
        let unfinished: [UnfinishedUpload]
        do {
            unfinished = try await store.unfinishedUploads()
        } catch {
            throw Self.storeError(error, doing: "list the unfinished uploads of \(store.location)")
        }
        let stored = Dictionary(listed.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })

        var orphans = listed.filter { !after.contains($0.path) }.sorted { $0.path < $1.path }.map { object in
            LibraryFinding(problem: .orphan, path: object.path, storedSize: object.size, modified: object.modified,
                           ageSeconds: object.modified.map { max(0, now.timeIntervalSince($0)) })
        }
        var lost: [LibraryFinding] = []
        for reference in before.all {
            let file = reference.variant ?? "original"
            if let object = stored[reference.path] {
                guard object.size != reference.size else { continue }
                lost.append(LibraryFinding(problem: .damaged, path: reference.path, pictureId: reference.pictureId, file: file,
                                           storedSize: object.size, recordedSize: reference.size))
            } else {
                lost.append(LibraryFinding(problem: .missing, path: reference.path, pictureId: reference.pictureId, file: file,
                                           recordedSize: reference.size))
            }
        }
        lost.sort { ($0.pictureId ?? 0, $0.file == "original" ? "" : $0.file ?? "") < ($1.pictureId ?? 0, $1.file == "original" ? "" : $1.file ?? "") }

        var uploads = unfinished.sorted { $0.key < $1.key }.map { upload in
            LibraryFinding(problem: .unfinished, path: upload.key, modified: upload.initiated,
                           ageSeconds: upload.initiated.map { max(0, now.timeIntervalSince($0)) }, uploadId: upload.uploadId)
        }

        if repair {
            for index in orphans.indices { orphans[index] = await removeIfOld(orphans[index]) }
            for index in uploads.indices { uploads[index] = await removeIfOld(uploads[index]) }
            lost = await restore(lost)
        }
        return LibraryCheckReport(store: store.location, objects: listed.count, pictures: after.pictures, variants: after.variants,
                                  repair: repair, orphanAgeSeconds: orphanAge, findings: orphans + uploads + lost)
    }

    private func readReferences() throws(LibraryMaintenanceError) -> LibraryReferences {
        do {
            return try references.libraryReferences()
        } catch {
            let transient: Bool
            switch error {
            case .unavailable, .busy: transient = true
            default: transient = false
            }
            throw LibraryMaintenanceError("cannot read the catalog: \(error)", category: .catalog, isTransient: transient)
        }
    }

    static func storeError(_ error: any Error, doing what: String) -> LibraryMaintenanceError {
        if let error = error as? LibraryMaintenanceError { return error }
        let transient = (error as? ObjectStorageError)?.isTransient ?? (error as? FileSystemError)?.isTransient ?? false
        return LibraryMaintenanceError("cannot \(what): \(error)", isTransient: transient)
    }

    // MARK: - Repair

    /// Removes an orphan written (or aborts an unfinished upload begun) more than `orphanAge`
    /// seconds ago; keeps a younger one.
    func removeIfOld(_ orphan: LibraryFinding) async -> LibraryFinding {
        var orphan = orphan
        guard let age = orphan.ageSeconds else {
            orphan.action = .kept
            orphan.note = "the store does not say when it was written"
            return orphan
        }
        guard age >= orphanAge else {
            orphan.action = .kept
            orphan.note = orphan.problem == .unfinished
                ? "younger than --orphan-age \(LibraryCopyProgress.duration(orphanAge)): it may still be under way"
                : "younger than --orphan-age \(LibraryCopyProgress.duration(orphanAge)): its picture's commit may be on its way"
            return orphan
        }
        if orphan.problem == .unfinished, let id = orphan.uploadId {
            do {
                try await store.abort(UnfinishedUpload(key: orphan.path, uploadId: id, initiated: orphan.modified))
                orphan.action = .aborted
                logger.info("aborted an unfinished upload", metadata: ["path": "\(orphan.path)"])
            } catch {
                orphan.action = .unrepaired
                orphan.note = "could not abort it: \(error)"
            }
            return orphan
        }
        do {
            try await store.remove(orphan.path)
            orphan.action = .removed
            logger.info("removed an orphan", metadata: ["path": "\(orphan.path)", "size": "\(orphan.storedSize ?? 0)"])
        } catch {
            orphan.action = .unrepaired
            orphan.note = "could not remove it: \(error)"
        }
        return orphan
    }

    /// Puts lost originals back from the backup directory, then renders lost variants again
    /// from their originals; each finding says what was done, or what can be.
    func restore(_ lost: [LibraryFinding]) async -> [LibraryFinding] {
        var lost = lost
        var originalGone = Set<Int64>()
        for index in lost.indices where lost[index].file == "original" {
            lost[index] = await restoreOriginal(lost[index])
            if !lost[index].isResolved, let id = lost[index].pictureId { originalGone.insert(id) }
        }
        let variantsByPicture = Dictionary(grouping: lost.indices.filter { lost[$0].file != "original" }) { lost[$0].pictureId ?? 0 }
        for (pictureId, indices) in variantsByPicture.sorted(by: { $0.key < $1.key }) {
            guard !originalGone.contains(pictureId) else {
                for index in indices {
                    lost[index].action = .unrepaired
                    lost[index].note = "its original is lost too: once the original is back, run again to render it"
                }
                continue
            }
            let outcomes = await rerender(pictureId: pictureId, findings: indices.map { lost[$0] })
            for (index, outcome) in zip(indices, outcomes) { lost[index] = outcome }
        }
        return lost
    }

    /// A lost original back from `library.backup_dir`, when that holds the picture's bytes.
    func restoreOriginal(_ finding: LibraryFinding) async -> LibraryFinding {
        var finding = finding
        finding.action = .unrepaired
        let copyHint = "copy the photo (the same bytes: its SHA-256 is the file name) to that path, then run again to render its variants"
        guard let backupRoot = configuration.backupDir else {
            finding.note = "no library.backup_dir to restore it from: \(copyHint)"
            return finding
        }
        let backup = backupRoot + "/" + finding.path
        guard let status = FileSystem.status(backup) else {
            finding.note = "not in library.backup_dir (\(backupRoot)): \(copyHint)"
            return finding
        }
        do {
            let picture = try catalog.picture(id: finding.pictureId ?? 0)
            guard let picture, status.size == picture.byteSize else {
                finding.note = "the copy in library.backup_dir is not the picture's size: \(copyHint)"
                return finding
            }
            let hash = try await offload { () throws(LibraryMaintenanceError) -> String in
                do {
                    return SHA256.hash(data: try FileSystem.read(backup)).map { String(format: "%02x", $0) }.joined()
                } catch {
                    throw .localFile(backup, "\(error)")
                }
            }
            guard hash == picture.sha256 else {
                finding.note = "the copy in library.backup_dir holds other bytes (SHA-256 \(hash)): \(copyHint)"
                return finding
            }
            try await store.copyFile(backup, to: finding.path)
            finding.action = .restored
            finding.note = "from library.backup_dir"
            logger.info("restored an original", metadata: ["picture": "\(picture.id ?? 0)", "path": "\(finding.path)"])
        } catch {
            finding.note = "could not restore it from library.backup_dir: \(error)"
        }
        return finding
    }

    /// Renders a picture's lost variants again from its original, as the worker rendered them,
    /// and stores those whose recipe still gives the same path and size in pixels.
    func rerender(pictureId: Int64, findings: [LibraryFinding]) async -> [LibraryFinding] {
        func unrepaired(_ note: String) -> [LibraryFinding] {
            findings.map { finding in
                var finding = finding
                finding.action = .unrepaired
                finding.note = note
                return finding
            }
        }
        let picture: PictureRecord
        let records: [VariantRecord]
        do {
            guard let found = try catalog.picture(id: pictureId) else { return unrepaired("the picture is no longer in the catalog") }
            picture = found
            records = try catalog.variants(ofPicture: pictureId)
        } catch {
            return unrepaired("could not read the picture from the catalog: \(error)")
        }
        let rendered: RenderResult
        do {
            let original = try await store.read(picture.originalPath)
            let focal = picture.focalX.flatMap { x in picture.focalY.map { FocalPoint(x: x, y: $0) } }
            var crops: [String: CropRect] = [:]
            if let x = picture.feedCropX, let y = picture.feedCropY, let width = picture.feedCropWidth, let height = picture.feedCropHeight {
                crops[configuration.feedRecipe.name] = CropRect(x: x, y: y, width: width, height: height)
            }
            let options = configuration.renderOptions(orientation: picture.orientation, focalPoint: focal, crops: crops)
            let recipes = configuration.variants
            rendered = try await offload { () throws(LibraryMaintenanceError) -> RenderResult in
                do {
                    return try Imaging.render(original, recipes: recipes, options: options)
                } catch {
                    throw LibraryMaintenanceError("\(error)")
                }
            }
        } catch {
            return unrepaired("could not render it from its original: \(error)")
        }
        var outcomes: [LibraryFinding] = []
        for var finding in findings {
            finding.action = .unrepaired
            let record = records.first { $0.path == finding.path }
            guard let record, let variant = rendered.variants.first(where: { $0.name == record.name }) else {
                finding.note = "pipeline.json has no recipe named \(finding.file ?? "?") any more"
                outcomes.append(finding)
                continue
            }
            let path = Library.variantPath(sha256: picture.sha256, variant: variant.name, extension: variant.format.fileExtension)
            guard path == record.path, variant.width == record.width, variant.height == record.height else {
                finding.note = "the recipe \(variant.name) of pipeline.json now renders \(variant.width)x\(variant.height) \(variant.format.rawValue), "
                    + "the catalog records \(record.width)x\(record.height) \(record.format): it changed since, and a render would not be this file"
                outcomes.append(finding)
                continue
            }
            do {
                try await store.write(variant.bytes, at: path)
                finding.action = .rerendered
                finding.note = "rendered again from its original, \(variant.bytes.count) bytes"
                logger.info("rendered a lost variant again", metadata: ["picture": "\(pictureId)", "path": "\(path)"])
            } catch {
                finding.note = "rendered again, but could not store it: \(error)"
            }
            outcomes.append(finding)
        }
        return outcomes
    }
}
