import ArgumentParser
import BuildInfo
import Foundation

/// `darkroom version`: which build is running, for a bug report or an upgrade check.
struct Version: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print Darkroom's version, the commit and date of its build, and its C libraries.",
        discussion: """
        `darkroom --version` prints the first line alone. With --json: {"version", "commit", \
        "built", "libraries": {"libjpeg-turbo", "libpng", "libexif", "sqlite", "libheif", \
        "libwebp", "lcms2"}}. `/metrics` of \
        `darkroom serve` carries the same as darkroom_build_info{version, commit}.
        """)
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        if json {
            let libraries = Dictionary(uniqueKeysWithValues: BuildInfo.libraries.map { ($0.name, $0.version) })
            let object: [String: Any] = ["version": BuildInfo.version, "commit": BuildInfo.commit, "built": BuildInfo.date,
                                         "libraries": libraries]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(BuildInfo.line)
            for library in BuildInfo.libraries { print("  \(library.name) \(library.version)") }
        }
    }
}
