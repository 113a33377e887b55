import Foundation

/// The same four outputs made by vipsthumbnail (libvips), one process per output as a
/// thumbnailing service would run it: the comparison the render targets are set against.
public enum VipsComparison {
    public struct Result {
        public let millisecondsPerPhoto: Double
        public let medianMilliseconds: Double
        public let minimumMilliseconds: Double
        /// CPU time (user + system) of the four processes, per photo.
        public let cpuMillisecondsPerPhoto: Double
    }

    /// One photo's four runs: wall and CPU time in milliseconds.
    public struct Photo {
        public let wallMilliseconds: Double
        public let cpuMilliseconds: Double
    }

    /// vipsthumbnail arguments per default variant: contain fits shrink inside the box; cover
    /// fits fill it with libvips' attention crop. Qualities match the recipes; `strip` drops
    /// metadata as Darkroom does.
    public static let outputs: [(name: String, arguments: [String], quality: Int)] = [
        ("thumb", ["--size", "320x320", "--smartcrop", "attention"], 80),
        ("preview", ["--size", "1024x1024"], 82),
        ("mobile", ["--size", "2048x2048"], 85),
        ("feed", ["--size", "1080x1350", "--smartcrop", "attention"], 85),
    ]

    public static func executable() -> URL? {
        for directory in ["/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"] {
            let url = URL(fileURLWithPath: directory).appendingPathComponent("vipsthumbnail")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    /// The four outputs of `file`, written into `outputDirectory` under `prefix`; nil when
    /// vipsthumbnail is missing or fails.
    public static func measure(_ file: URL, outputDirectory: URL, prefix: String) -> Photo? {
        guard let vips = executable() else { return nil }
        try? FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        var wall = 0.0, cpu = 0.0
        for output in outputs {
            let target = outputDirectory.appendingPathComponent("\(prefix)-\(output.name).jpg").path
            let arguments = [file.path] + output.arguments + ["-o", "\(target)[Q=\(output.quality),strip]"]
            guard let child = try? ChildProcess.run(vips.path, arguments, watchMemory: false), child.status == 0 else { return nil }
            wall += child.wallSeconds * 1000
            cpu += child.cpuSeconds * 1000
        }
        return Photo(wallMilliseconds: wall, cpuMilliseconds: cpu)
    }

    public static func run(files: [URL], outputDirectory: URL) -> Result? {
        guard !files.isEmpty else { return nil }
        var photos: [Photo] = []
        for (index, file) in files.enumerated() {
            guard let photo = measure(file, outputDirectory: outputDirectory, prefix: String(index)) else { return nil }
            photos.append(photo)
        }
        let sorted = photos.map(\.wallMilliseconds).sorted()
        return Result(
            millisecondsPerPhoto: sorted.reduce(0, +) / Double(sorted.count), medianMilliseconds: sorted[sorted.count / 2],
            minimumMilliseconds: sorted[0], cpuMillisecondsPerPhoto: photos.map(\.cpuMilliseconds).reduce(0, +) / Double(photos.count))
    }
}
