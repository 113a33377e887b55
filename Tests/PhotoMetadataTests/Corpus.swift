import Foundation

/// The shared real-photo corpus (`<package root>/../shared/corpus`, or `DARKROOM_CORPUS`) and its
/// MANIFEST.tsv of values read by an independent reader (ExifTool).
enum Corpus {
    static let root: URL = {
        if let path = ProcessInfo.processInfo.environment["DARKROOM_CORPUS"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // PhotoMetadataTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // package root
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus")
    }()

    static var manifestURL: URL { root.appendingPathComponent("MANIFEST.tsv") }

    static var isAvailable: Bool { FileManager.default.fileExists(atPath: manifestURL.path) }

    /// One row of MANIFEST.tsv, by column name.
    struct Row {
        var fields: [String: String]
        subscript(_ column: String) -> String { fields[column] ?? "" }
        var path: String { self["path"] }
    }

    static func manifest() throws -> [Row] {
        let text = try String(contentsOf: manifestURL, encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        guard !lines.isEmpty else { return [] }
        let header = lines.removeFirst().split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        return lines.map { line in
            let cells = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            var fields: [String: String] = [:]
            for (index, name) in header.enumerated() where index < cells.count {
                fields[name] = cells[index]
            }
            return Row(fields: fields)
        }
    }

    /// Every regular file under the corpus, relative paths, sorted.
    static func allFiles() -> [String] {
        guard let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        else { return [] }
        var paths: [String] = []
        let prefix = root.standardizedFileURL.path + "/"
        for case let url as URL in enumerator {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else { continue }
            paths.append(String(url.standardizedFileURL.path.dropFirst(prefix.count)))
        }
        return paths.sorted()
    }

    static func bytes(_ relativePath: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: root.appendingPathComponent(relativePath)))
    }
}
