import ArgumentParser
import Foundation
import MetadataReading
import Storage

struct Enqueue: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy photos into the spool the safe way, for scripts and backends.",
        discussion: """
        Each FILE is copied into spool/incoming/ under a hidden temporary name, flushed to disk, \
        then renamed into view, so that a worker never sees half a photo; an existing name is \
        never overwritten (a number is added). A sidecar is written first: --sidecar gives its \
        JSON (inline, or @file), else FILE.json beside the photo is taken along. --author, \
        --moment and --title set those sidecar keys. A photo that cannot be queued (a full \
        disk, an unreadable sidecar) is reported and the others are still queued; the exit \
        status is then 1, and nothing of the photos not queued is left in the spool.         --priority high puts the photos ahead of the drop folder's and bulk backlog, as the         upload route's are (for a backend that hands its users' uploads over through the spool).
        """)

    enum Priority: String, ExpressibleByArgument, CaseIterable {
        case normal, high
    }

    @OptionGroup var options: ConfigOption

    @Argument(help: ArgumentHelp("Photos to queue.", valueName: "file"))
    var files: [String]

    @Option(help: ArgumentHelp("The uploader's id (sidecar author_id).", valueName: "id"))
    var author: String?

    @Option(help: ArgumentHelp("A moment the photos are meant for (sidecar moment_id).", valueName: "id"))
    var moment: Int64?

    @Option(help: ArgumentHelp("A title (sidecar title).", valueName: "text"))
    var title: String?

    @Option(help: ArgumentHelp("Sidecar JSON for every photo, inline or @file.", valueName: "json"))
    var sidecar: String?

    @Option(help: ArgumentHelp("normal, or high: ahead of the backlog, as uploads are.", valueName: "priority"))
    var priority: Priority = .normal

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        if files.isEmpty { throw ValidationError("name at least one photo to queue") }
        for file in files where !FileManager.default.isReadableFile(atPath: file) {
            throw ValidationError("\(file): cannot read it; check the path")
        }
    }

    func run() throws {
        let configuration = try options.load()
        let spool = try Spool(root: configuration.spoolRoot, settleSeconds: configuration.settleSeconds)
        let base = try baseSidecar()
        var notQueued: [String] = []
        for file in files {
            do {
                let name = try queue(file, base: base, into: spool)
                if !quiet { print("queued \(file) as \(spool.incoming)/\(name)") }
            } catch {
                // One photo that cannot be queued (a full disk above all) does not stop the others.
                notQueued.append(file)
                FileHandle.standardError.write(Data("darkroom: \(file): not queued: \(error)\n".utf8))
            }
        }
        guard notQueued.isEmpty else {
            FileHandle.standardError.write(Data(("darkroom: \(notQueued.count) of \(files.count) photos not queued "
                + "(nothing of them is left in the spool; the files themselves are untouched): queue them again once fixed\n").utf8))
            throw ExitCode(1)
        }
    }

    /// Queues one photo with its sidecar; returns its name in the spool.
    private func queue(_ file: String, base: [String: Any], into spool: Spool) throws -> String {
        guard let bytes = FileManager.default.contents(atPath: file) else {
            throw ValidationError("cannot read it; check the path")
        }
        var object = base
        if sidecar == nil, let beside = FileManager.default.contents(atPath: file + ".json") {
            object = try Self.object(beside, source: file + ".json")
        }
        if let author { object["author_id"] = author }
        if let moment { object["moment_id"] = moment }
        if let title { object["title"] = title }
        let sidecarBytes = object.isEmpty ? nil : [UInt8](try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
        let name = try spool.enqueue(bytes: [UInt8](bytes), name: file, sidecar: sidecarBytes)
        if priority == .high { spool.markUrgent(name) }
        return name
    }

    private func baseSidecar() throws -> [String: Any] {
        guard let sidecar else { return [:] }
        if sidecar.hasPrefix("@") {
            let path = String(sidecar.dropFirst())
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ValidationError("--sidecar \(sidecar): cannot read \(path)")
            }
            return try Self.object(data, source: path)
        }
        return try Self.object(Data(sidecar.utf8), source: "--sidecar")
    }

    private static func object(_ data: Data, source: String) throws -> [String: Any] {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw ValidationError("\(source): not a JSON object; a sidecar looks like {\"author_id\": \"u42\"}")
        }
        return object
    }
}
