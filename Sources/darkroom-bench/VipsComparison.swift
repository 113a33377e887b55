import BenchKit
import Foundation

/// The same four outputs made by vipsthumbnail (libvips), one process per output as a
/// thumbnailing service would run it: the comparison of the issue.
enum VipsComparison {
    struct Result {
        let millisecondsPerPhoto: Double
        let medianMilliseconds: Double
        let minimumMilliseconds: Double
    }

    /// vipsthumbnail arguments per default variant: contain fits shrink inside the box; cover
    /// fits fill it with libvips' attention crop. Qualities match the recipes; `strip` drops
    /// metadata as Darkroom does.
    static let outputs: [(name: String, arguments: [String], quality: Int)] = [
        ("thumb", ["--size", "320x320", "--smartcrop", "attention"], 80),
        ("preview", ["--size", "1024x1024"], 82),
        ("mobile", ["--size", "2048x2048"], 85),
        ("feed", ["--size", "1080x1350", "--smartcrop", "attention"], 85),
    ]

    static func executable() -> URL? {
        for directory in ["/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"] {
            let url = URL(fileURLWithPath: directory).appendingPathComponent("vipsthumbnail")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    static func run(files: [URL], outputDirectory: URL) -> Result? {
        guard let vips = executable(), !files.isEmpty else { return nil }
        try? FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        var perPhoto: [Double] = []
        for (index, file) in files.enumerated() {
            let start = Date()
            for output in outputs {
                let target = outputDirectory.appendingPathComponent("\(index)-\(output.name).jpg").path
                let process = Process()
                process.executableURL = vips
                process.arguments = [file.path] + output.arguments + ["-o", "\(target)[Q=\(output.quality),strip]"]
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                do { try process.run() } catch { return nil }
                process.waitUntilExit()
                if process.terminationStatus != 0 { return nil }
            }
            perPhoto.append(Date().timeIntervalSince(start) * 1000)
        }
        let sorted = perPhoto.sorted()
        return Result(
            millisecondsPerPhoto: perPhoto.reduce(0, +) / Double(perPhoto.count), medianMilliseconds: sorted[sorted.count / 2],
            minimumMilliseconds: sorted[0])
    }
}
