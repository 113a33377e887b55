import Foundation
import Imaging
import MetadataReading
import PhotoMetadata
import Settings
import Storage

/// Everything `darkroom inspect` reports about one photo: its header and its metadata.
public struct PhotoReport: Sendable, Encodable {
    public var file: String
    public var format: String
    public var width: Int
    public var height: Int
    public var displayWidth: Int
    public var displayHeight: Int
    public var color: String
    public var hasIccProfile: Bool
    /// The picture's placeholder (a ThumbHash, base64), from the least decode that gives it: the
    /// worker's, made from a larger decode, may differ in its last bits. Nil when it cannot be made.
    public var thumbHash: String?
    public var metadata: CaptureMetadata
}

/// A photo that cannot be inspected or rendered: the file and the reason, on one line.
public struct PhotoError: Error, CustomStringConvertible, Sendable {
    public var file: String
    public var reason: String
    public var description: String { "\(file): \(reason)" }
}

/// Reads and renders single photos for the `inspect` and `render` commands: the same steps the
/// worker runs, without the spool and the catalog.
public struct Inspector: Sendable {
    public let configuration: Configuration

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Reads a photo's header and metadata (and its sidecar `FILE.json` when present, read as the
    /// spool reads it: its `taken_at` and location win over EXIF, and the camera's are shown too).
    public func inspect(_ path: String) throws(PhotoError) -> PhotoReport {
        let (bytes, sidecar) = try load(path)
        let info: ImageInfo
        do { info = try Imaging.probe(bytes) } catch { throw PhotoError(file: path, reason: "\(error)") }
        let metadata = PhotoMetadata.read(bytes, sidecar: sidecar, fileTime: Self.modificationTime(path),
                                          options: MetadataOptions(defaultTimeZone: configuration.defaultTimeZone, sidecarOverridesExif: true))
        // A HEIF header already gives the displayed size (its container turns the picture).
        let swaps = metadata.orientation >= 5 && !info.format.isHEIF
        let placeholder = try? Imaging.placeholder(bytes, options: configuration.renderOptions(orientation: metadata.orientation, focalPoint: nil))
        return PhotoReport(file: path, format: info.format.mimeType, width: info.width, height: info.height,
                           displayWidth: swaps ? info.height : info.width, displayHeight: swaps ? info.width : info.height,
                           color: info.colorDescription, hasIccProfile: info.hasICCProfile,
                           thumbHash: placeholder.map { Data($0).base64EncodedString() }, metadata: metadata)
    }

    /// Renders every configured variant of a photo into `directory` as `<stem>.<variant>.jpg`.
    public func render(_ path: String, into directory: String) throws(PhotoError) -> (RenderResult, [String]) {
        let (bytes, sidecar) = try load(path)
        let metadata = PhotoMetadata.read(bytes, sidecar: sidecar, fileTime: nil,
                                          options: MetadataOptions(defaultTimeZone: configuration.defaultTimeZone, sidecarOverridesExif: true))
        let result: RenderResult
        do {
            result = try Imaging.render(bytes, recipes: configuration.variants, options: configuration.renderOptions(
                orientation: metadata.orientation, focalPoint: metadata.focalPoint.map { FocalPoint(x: $0.x, y: $0.y) }))
        } catch {
            throw PhotoError(file: path, reason: "\(error)")
        }
        let stem = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        var written: [String] = []
        for variant in result.variants {
            let out = directory + "/" + stem + "." + variant.name + "." + variant.format.fileExtension
            do { try FileSystem.writeDurably(variant.bytes, to: out) } catch { throw PhotoError(file: path, reason: error.description) }
            written.append(out)
        }
        return (result, written)
    }

    private func load(_ path: String) throws(PhotoError) -> ([UInt8], Sidecar?) {
        let bytes: [UInt8]
        // Named by its kind when it is not a file: a FIFO is refused without waiting for a writer.
        let kind = EntryKind(following: path)
        if kind != .regular, kind != .missing {
            throw PhotoError(file: path, reason: "is \(kind.noun), not a photo file; give the path of a photo file")
        }
        do { bytes = try FileSystem.read(path) } catch {
            throw PhotoError(file: path, reason: "cannot read (\(String(cString: strerror(error.code)))); check the path")
        }
        guard Imaging.sniff(bytes) != nil else { throw PhotoError(file: path, reason: PhotoFormat.refusal(bytes)) }
        var sidecar: Sidecar?
        if let sidecarBytes = try? FileSystem.read(path + ".json") {
            do { sidecar = try Sidecar(jsonBytes: sidecarBytes) } catch {
                throw PhotoError(file: path + ".json", reason: "\(error)")
            }
        }
        return (bytes, sidecar)
    }

    private static func modificationTime(_ path: String) -> Date? {
        FileSystem.status(path).map { Date(timeIntervalSince1970: $0.modified) }
    }
}
