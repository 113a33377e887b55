import Foundation
import MetadataReading
import Storage

/// What a photo of an imported library carries into the shared queue beside its bytes
/// (`queued/TOKEN/NAME.import.json`): the worker that claims it, on any machine, processes it as
/// the import itself would (the name it is shown under, the job key the import's journal finds
/// its commit by, its library's sidecars merged, which only fill what EXIF lacks), and a failure
/// leaves the photo where it is in the library, its reason in the catalog.
public struct ImportTicket: Codable, Sendable, Equatable {
    /// How the photo is shown and recorded: the imported folder's name, then the path below it.
    public var sourceName: String
    /// The job key the import's journal looks the commit up by (`jobs.claim_path`).
    public var jobKey: String
    /// The merged sidecar of its library (Takeout, XMP, Darkroom), nil when there is none.
    public var sidecar: Sidecar?
    /// The sidecar as kept in the job row.
    public var sidecarJson: String?
    /// Where the sidecar's values came from, first among the picture's warnings.
    public var notes: [String]
    /// Whether the library's original is to be the queued file itself (`--link`, `--move`).
    public var linkOriginal: Bool

    public init(sourceName: String, jobKey: String, sidecar: Sidecar?, sidecarJson: String?, notes: [String], linkOriginal: Bool) {
        self.sourceName = sourceName
        self.jobKey = jobKey
        self.sidecar = sidecar
        self.sidecarJson = sidecarJson
        self.notes = notes
        self.linkOriginal = linkOriginal
    }

    enum CodingKeys: String, CodingKey {
        case sourceName = "source_name", jobKey = "job_key", sidecar, sidecarJson = "sidecar_json", notes
        case linkOriginal = "link_original"
    }

    /// The ticket as written to the spool.
    public func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // A struct of strings, numbers and arrays of them always encodes.
        return Array((try? encoder.encode(self)) ?? Data())
    }

    /// A ticket read back; a permanent failure naming the file when it is not one.
    public static func decode(_ bytes: [UInt8], file: String) throws(ProcessingFailure) -> ImportTicket {
        do {
            return try JSONDecoder().decode(ImportTicket.self, from: Data(bytes))
        } catch {
            throw .permanent("import ticket \(file)\(Spool.importTicketSuffix) cannot be read (\(error)); import the photo again", .badInput)
        }
    }

    /// The photo as the processor takes it, its bytes read from `path` (the queued file).
    public func input(path: String, worker: String) -> PhotoInput {
        var input = PhotoInput(path: path, sourceName: sourceName, jobKey: jobKey, worker: worker, sidecar: sidecar,
                               sidecarJson: sidecarJson, notes: notes, linkOriginal: linkOriginal, sidecarOverridesExif: false)
        input.shareSource = linkOriginal
        return input
    }
}
