import Foundation
@testable import Imaging

/// The shared real-photo corpus (`<package root>/../shared/corpus`, or `DARKROOM_CORPUS`).
enum Corpus {
    static let root: URL? = {
        if let variable = ProcessInfo.processInfo.environment["DARKROOM_CORPUS"] {
            let url = URL(fileURLWithPath: variable)
            return FileManager.default.fileExists(atPath: url.path) ? url : nil
        }
        // <root>/Tests/ImagingTests/Corpus.swift -> <root>/../shared/corpus
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let url = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus")
        return FileManager.default.fileExists(atPath: url.appendingPathComponent("MANIFEST.tsv").path) ? url : nil
    }()

    static var isAvailable: Bool { root != nil }

    static func bytes(_ path: String) throws -> [UInt8] {
        guard let root else { throw CocoaError(.fileNoSuchFile) }
        return try [UInt8](Data(contentsOf: root.appendingPathComponent(path)))
    }

    /// Every file of the corpus but its texts (licences, READMEs, the manifest), as relative paths.
    static func imageFiles() -> [String] {
        guard let root, let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) else {
            return []
        }
        let textExtensions: Set<String> = ["txt", "md", "tsv", "markdown", "license", "readme"]
        var paths: [String] = []
        for case let url as URL in walker {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else { continue }
            let name = url.lastPathComponent
            if textExtensions.contains(url.pathExtension.lowercased()) || name.hasPrefix("LICENSE") || name.hasPrefix("README") {
                continue
            }
            paths.append(String(url.path.dropFirst(root.path.count + 1)))
        }
        return paths.sorted()
    }

    /// One MANIFEST.tsv row: the independent reader's values.
    struct Row {
        let path: String
        let width: Int?
        let height: Int?
        let orientation: Int?
        let format: String
        let notes: String

        var pillowDecodes: Bool { notes.hasSuffix("Pillow decode ok") }
    }

    static let manifest: [String: Row] = {
        guard let root, let text = try? String(contentsOf: root.appendingPathComponent("MANIFEST.tsv"), encoding: .utf8) else {
            return [:]
        }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        guard let header = lines.first else { return [:] }
        lines.removeFirst()
        func column(_ name: String) -> Int? { header.firstIndex(of: name) }
        guard let path = column("path"), let width = column("width"), let height = column("height"),
            let orientation = column("Orientation"), let format = column("format"), let notes = column("notes")
        else { return [:] }
        var rows: [String: Row] = [:]
        for fields in lines where fields.count > notes {
            rows[fields[path]] = Row(
                path: fields[path], width: Int(fields[width]), height: Int(fields[height]),
                orientation: Int(fields[orientation]), format: fields[format], notes: fields[notes])
        }
        return rows
    }()
}

/// Test helpers over the module's internals.
enum Pixels {
    /// Full-resolution decode of a JPEG, PNG or HEIF (no scaling), flattened on white.
    static func decode(_ bytes: [UInt8]) throws -> Raster {
        switch Imaging.sniff(bytes) {
        case .jpeg: return try JPEGCodec.decode(bytes, scaleNumerator: 8, pixelLimit: 0).1.raster
        case .png: return try PNGCodec.decode(bytes, pixelLimit: 0, background: .white).1.raster
        case let format? where format.isHEIF: return try HEIFCodec.decode(bytes, format: format, pixelLimit: 0).1.raster
        case _?: throw ImagingError.notAnImage(looksLike: "test data")
        case nil: throw ImagingError.notAnImage(looksLike: "test data")
        }
    }

    /// A raster from a function of (x, y) giving RGB.
    static func raster(width: Int, height: Int, _ colour: (Int, Int) -> (UInt8, UInt8, UInt8)) throws -> Raster {
        let raster = try Raster(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                let (r, g, b) = colour(x, y)
                let offset = (y * width + x) * 3
                raster.pixels[offset] = r
                raster.pixels[offset + 1] = g
                raster.pixels[offset + 2] = b
            }
        }
        return raster
    }

    /// A JPEG of a raster (quality 95, no profile).
    static func jpeg(_ raster: Raster, quality: Int = 95, icc: [UInt8]? = nil) throws -> [UInt8] {
        try JPEGCodec.encode(raster, quality: quality, iccProfile: icc, progressive: false, optimize: false, variant: "test")
    }

    /// Mean absolute difference per channel between two rasters of the same size.
    static func meanAbsoluteDifference(_ a: Raster, _ b: Raster) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        var total = 0
        for i in 0..<(a.width * a.height * 3) { total += abs(Int(a.pixels[i]) - Int(b.pixels[i])) }
        return Double(total) / Double(a.width * a.height * 3)
    }

    /// Peak signal-to-noise ratio in dB between two rasters of the same size.
    static func psnr(_ a: Raster, _ b: Raster) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        var squares = 0.0
        for i in 0..<(a.width * a.height * 3) {
            let d = Double(Int(a.pixels[i]) - Int(b.pixels[i]))
            squares += d * d
        }
        let mse = squares / Double(a.width * a.height * 3)
        return mse == 0 ? 99 : 10 * log10(255 * 255 / mse)
    }

    /// JPEG segments (marker, payload) before the scan: what a variant carries.
    static func markers(_ jpeg: [UInt8]) -> [(marker: UInt8, payload: [UInt8])] {
        var result: [(UInt8, [UInt8])] = []
        var index = 2
        while index + 4 <= jpeg.count, jpeg[index] == 0xFF {
            let marker = jpeg[index + 1]
            if marker == 0xDA { break }
            let length = Int(jpeg[index + 2]) << 8 | Int(jpeg[index + 3])
            let end = min(jpeg.count, index + 2 + length)
            result.append((marker, Array(jpeg[(index + 4)..<end])))
            index = end
        }
        return result
    }
}
