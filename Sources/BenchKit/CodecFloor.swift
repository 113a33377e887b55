import Foundation

/// What the JPEG codec alone costs for a photo's work, with libjpeg-turbo's own tools: `djpeg`
/// decoding at the scale the render decodes at, plus `cjpeg` encoding the four outputs' pixels at
/// their qualities. Each figure is the tool's CPU time less its start-up (measured on an 8×8
/// picture), so it is the codec's work only, the floor any renderer on libjpeg-turbo stands on.
public enum CodecFloor {
    public struct Tools {
        public let djpeg: String
        public let cjpeg: String
        /// CPU milliseconds of one run on an 8×8 picture: the start-up subtracted from each run.
        public let djpegStartup: Double
        public let cjpegStartup: Double
    }

    /// The tools (libjpeg-turbo-progs), their start-up measured in `scratch`; nil when missing.
    public static func tools(scratch: URL) -> Tools? {
        let found = ["djpeg", "cjpeg"].map { name in
            ["/usr/bin", "/usr/local/bin"].map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        }
        guard let djpeg = found[0], let cjpeg = found[1] else { return nil }
        let ppm = scratch.appendingPathComponent("tiny.ppm"), jpeg = scratch.appendingPathComponent("tiny.jpg")
        var tiny = Data("P6\n8 8\n255\n".utf8)
        tiny.append(Data((0..<192).map { UInt8(truncatingIfNeeded: $0 &* 37) }))
        guard (try? tiny.write(to: ppm)) != nil,
              let made = try? ChildProcess.run(cjpeg, ["-outfile", jpeg.path, ppm.path], watchMemory: false), made.status == 0
        else { return nil }
        // The least of several runs: start-up is a fixed cost, the rest is noise.
        func least(_ tool: String, _ arguments: [String]) -> Double {
            (0..<7).compactMap { _ in try? ChildProcess.run(tool, arguments, watchMemory: false) }
                .filter { $0.status == 0 }.map { $0.cpuSeconds * 1000 }.min() ?? 0
        }
        return Tools(djpeg: djpeg, cjpeg: cjpeg,
                     djpegStartup: least(djpeg, ["-outfile", "/dev/null", jpeg.path]),
                     cjpegStartup: least(cjpeg, ["-outfile", "/dev/null", ppm.path]))
    }

    /// CPU milliseconds of decoding `file` at `numerator`/8 (start-up subtracted), or nil.
    public static func decode(_ file: URL, numerator: Int, tools: Tools) -> Double? {
        guard let run = try? ChildProcess.run(tools.djpeg, ["-scale", "\(numerator)/8", "-outfile", "/dev/null", file.path],
                                              watchMemory: false), run.status == 0 else { return nil }
        return max(0, run.cpuSeconds * 1000 - tools.djpegStartup)
    }

    /// CPU milliseconds of encoding the PPM `pixels` at `quality` (start-up subtracted), or nil.
    public static func encode(_ pixels: URL, quality: Int, tools: Tools) -> Double? {
        guard let run = try? ChildProcess.run(tools.cjpeg, ["-quality", String(quality), "-outfile", "/dev/null", pixels.path],
                                              watchMemory: false), run.status == 0 else { return nil }
        return max(0, run.cpuSeconds * 1000 - tools.cjpegStartup)
    }

    /// Writes the pixels of the JPEG `file` to `ppm` (untimed: the encode step's input).
    public static func writePixels(of file: URL, to ppm: URL, tools: Tools) -> Bool {
        (try? ChildProcess.run(tools.djpeg, ["-outfile", ppm.path, file.path], watchMemory: false))?.status == 0
    }
}
