import BenchKit
import Foundation
import Imaging

/// The benchmark's input: N JPEGs (12 megapixels by default) written to a directory.
public enum PhotoSet {
    public static let width = 4000
    public static let height = 3000
    public static let quality = 90
    /// A real camera photo (5760×3840, Canon EOS 5D Mark III EXIF) from the shared corpus, if present.
    public static let corpusPhoto = "jpeg/metadata-extractor/Issue_266.jpg"

    public struct Generated {
        public let files: [URL]
        public let origin: String
        /// Each file's bytes, in the order of `files`.
        public let photos: [[UInt8]]
    }

    public static func corpusDirectory() -> URL? {
        var candidates: [URL] = []
        if let variable = ProcessInfo.processInfo.environment["DARKROOM_CORPUS"] {
            candidates.append(URL(fileURLWithPath: variable))
        }
        // <root>/Sources/BenchInputs/PhotoSet.swift -> <root>/../shared/corpus
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(root.deletingLastPathComponent().appendingPathComponent("shared/corpus"))
        candidates.append(URL(fileURLWithPath: FileManager.default.currentDirectoryPath).deletingLastPathComponent()
            .appendingPathComponent("shared/corpus"))
        return candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent(corpusPhoto).path) }
    }

    /// Each photo is a different window of the source at `width`×`height` (the focal point
    /// moves across it), so no two files are the same bytes; each carries the source's EXIF
    /// block when the source has one.
    public static func generate(count: Int, into directory: URL, width: Int = width, height: Int = height,
                         quality: Int = quality) throws -> Generated {
        let source: [UInt8]
        var origin: String
        if let corpus = corpusDirectory() {
            source = try [UInt8](Data(contentsOf: corpus.appendingPathComponent(corpusPhoto)))
            origin = corpusPhoto + " (5760×3840): \(width)×\(height) windows resized with Imaging, JPEG q\(quality)"
        } else {
            source = SyntheticPhoto.png(width: width, height: height)
            origin = "synthetic picture (shared/corpus not found; set DARKROOM_CORPUS), \(width)×\(height) JPEG q\(quality)"
        }
        let exif = ExifSegment.find(in: source)
        if let exif { origin += ", with the source's \(exif.count)-byte EXIF block (Canon EOS 5D Mark III)" }
        let recipe = VariantRecipe(name: "source", fit: .cover, width: width, height: height, quality: quality)
        var files: [URL] = []
        var photos: [[UInt8]] = []
        for index in 0..<count {
            let position = count == 1 ? 0.5 : Double(index) / Double(count - 1)
            let options = RenderOptions(focalPoint: FocalPoint(x: position, y: 1 - position))
            let result = try Imaging.render(source, recipes: [recipe], options: options)
            guard let variant = result.variants.first else { continue }
            let bytes = exif.map { ExifSegment.insert($0, into: variant.bytes) } ?? variant.bytes
            let file = directory.appendingPathComponent(String(format: "photo-%03d.jpg", index))
            try Data(bytes).write(to: file)
            files.append(file)
            photos.append(bytes)
        }
        return Generated(files: files, origin: origin, photos: photos)
    }

    /// `generate` at full size into a new `directory`, saying what it does and where the pixels come from.
    public static func generateAnnounced(count: Int, into directory: URL) throws -> Generated {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        print("Generating \(count) distinct photos of \(width)×\(height)…")
        let generated = try generate(count: count, into: directory)
        print("  source: \(generated.origin)")
        return generated
    }

    /// `photo` made distinct by `index`: bytes after the JPEG end marker, which decoders ignore,
    /// so the photo renders the same but has its own SHA-256 (it is not a duplicate).
    public static func distinct(_ photo: [UInt8], index: Int) -> [UInt8] {
        var bytes = photo
        bytes += Array("darkroom-bench copy ".utf8) + Array(String(index).utf8)
        return bytes
    }
}
