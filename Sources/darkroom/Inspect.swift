import ArgumentParser
import Foundation
import Ingest
import Operations
import JSONValues

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print what Darkroom reads from photos: when, where, orientation, camera.",
        discussion: """
        For each FILE (JPEG, PNG, HEIC, HEIF or AVIF, with its sidecar FILE.json when present): format and size, \
        the capture time with its source (EXIF DateTimeOriginal, a GPS-derived offset, the \
        default zone, the sidecar or the file time), the location with its source, orientation, \
        camera, SHA-256, and any warnings. Exits 1 when a file could not be read.
        """)

    @OptionGroup var options: ConfigOption

    @Argument(help: ArgumentHelp("Photos to inspect.", valueName: "file"))
    var files: [String]

    @Flag(help: "Print a JSON array instead of text.")
    var json = false

    func run() throws {
        let inspector = Inspector(configuration: try options.load())
        var reports: [PhotoReport] = []
        var failed = false
        for file in files {
            do {
                let report = try inspector.inspect(file)
                if json { reports.append(report) } else { print(InspectText.render(report)) }
            } catch {
                failed = true
                FileHandle.standardError.write(Data("darkroom: \(error)\n".utf8))
            }
        }
        if json {
            let encoder = StableJSON.encoder()
            print(String(decoding: try encoder.encode(reports), as: UTF8.self))
        }
        if failed { throw ExitCode(1) }
    }
}

struct Render: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Render every variant of pipeline.json for one photo.",
        discussion: """
        Writes DIR/<name>.<variant>.jpg for each variant and prints its size, bytes and crop \
        (with how the crop was placed: focal point, attention or centre). Exits 1 when the photo \
        cannot be rendered, with the reason on one line.
        """)

    @OptionGroup var options: ConfigOption

    @Argument(help: ArgumentHelp("The photo to render.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("Where to write the variants (created when missing).", valueName: "dir"))
    var out: String

    func run() throws {
        let inspector = Inspector(configuration: try options.load())
        do {
            let (result, paths) = try inspector.render(file, into: out)
            print("\(file): \(result.info.width)x\(result.info.height) \(result.info.format.rawValue), shown \(result.displayWidth)x\(result.displayHeight), decoded at \(result.decodedWidth)x\(result.decodedHeight)")
            for (variant, path) in zip(result.variants, paths) {
                var line = "  \(variant.name.padding(toLength: 8, withPad: " ", startingAt: 0)) \(variant.width)x\(variant.height)  \(variant.bytes.count) bytes  \(path)"
                if let crop = variant.crop {
                    line += "  crop \(crop.x),\(crop.y) \(crop.width)x\(crop.height) (\(variant.cropSource.rawValue))"
                }
                print(line)
            }
        } catch {
            FileHandle.standardError.write(Data("darkroom: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
