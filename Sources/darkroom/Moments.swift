import ArgumentParser
import Catalog
import Foundation
import Imaging
import Moments
import Operations

struct MomentsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "moments",
        abstract: "Declare, list, show and export moments; set covers; rebuild.",
        discussion: """
        A moment is a place and a time window. Declared moments (from the backend) receive the \
        photos taken within their place's radius and window (with the configured grace); a \
        private one only from its creator and invitees. Photos that match none form automatic \
        moments, private to their author, of photos within the automatic radius and time gap of \
        each other. Each moment has a cover: the creator's choice, else the policy's \
        (moments.cover_policy).
        """,
        subcommands: [Create.self, Update.self, List.self, Show.self, SetCover.self, Rebuild.self, Export.self])

    /// The fields of a declared moment, shared by `create` and `update`.
    struct Fields: ParsableArguments {
        @Option(help: "The place (see `darkroom places`).") var place: Int64
        @Option(help: ArgumentHelp("Start, ISO 8601 with offset (2024-05-07T18:00:00+02:00).", valueName: "time")) var start: String
        @Option(help: ArgumentHelp("End, ISO 8601 with offset.", valueName: "time")) var end: String
        @Option(help: "The creator's user id.") var creator: String?
        @Option(help: ArgumentHelp("public or private.", valueName: "visibility")) var visibility: String = MomentDeclaration.defaultVisibility
        @Option(name: .customLong("invite"), help: ArgumentHelp("A user invited to a private moment (repeatable).", valueName: "user"))
        var invitees: [String] = []
        @Option(help: "A title.") var title: String?

        func declared(id: Int64?) throws -> Moment {
            try MomentDeclaration.moment(id: id, placeId: place, start: start, end: end, creator: creator,
                                         visibility: visibility, invitees: invitees, title: title)
        }

        /// Declares the moment and prints it, with how many pictures joined.
        func save(id: Int64?, as declaration: Declaration, options: ConfigOption, json: Bool) throws {
            let catalog = try options.catalog()
            let (saved, events) = try catalog.declareMoment(try declared(id: id), id: id, as: declaration)
            let view = try MomentCatalog(catalog: catalog).moment(id: saved.id)
            try Output.print(view, json: json) { _ in
                let joined = events.filter { if case .pictureAdded(_, saved.id) = $0 { return true } else { return false } }.count
                let verb = declaration == .create ? "declared" : "updated"
                return "moment \(saved.id) \(verb); \(joined) picture\(joined == 1 ? "" : "s") joined it"
            }
        }
    }

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Declare a new moment.",
            discussion: "Pictures it matches join it at once, even those uploaded before (after-the-fact pictures). An --id already taken is refused: `moments update` changes a moment.")
        @OptionGroup var options: ConfigOption
        @OptionGroup var fields: Fields
        @Option(help: "The backend's id for it, 1 to 2^53 - 1 (default: the next free id).") var id: Int64?
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            try checkOption { _ = try fields.declared(id: id) }
        }

        func run() throws {
            try fields.save(id: id, as: .create, options: options, json: json)
        }
    }

    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change an existing declared moment.",
            discussion: "Every field is given again (a field left out takes its default). Pictures it now matches join it; those it no longer matches go back to the other rules.")
        @OptionGroup var options: ConfigOption
        @Argument(help: "The moment's id.") var id: Int64
        @OptionGroup var fields: Fields
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            try checkOption { _ = try fields.declared(id: id) }
        }

        func run() throws {
            try fields.save(id: id, as: .update, options: options, json: json)
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List moments by start time.")
        @OptionGroup var options: ConfigOption
        @Option(help: "Only the moments of this place.") var place: Int64?
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let views = try MomentCatalog(catalog: try options.readingCatalog()).moments(atPlace: place)
            try Output.print(views, json: json) { views in
                views.isEmpty ? "no moment" : views.map(MomentsText.line).joined(separator: "\n")
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a moment and a page of its pictures, in a stable order.",
            discussion: "Pictures come by capture time, then content hash (those without a time last). Pass the printed cursor to --after for the next page.")
        @OptionGroup var options: ConfigOption
        @Argument(help: "The moment's id.") var id: Int64
        @Option(help: "Pictures per page.") var limit = MomentCatalog.defaultPageSize
        @Option(help: ArgumentHelp("The cursor printed at the end of the previous page.", valueName: "cursor")) var after: String?
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            try checkOption { _ = try MomentCatalog.pageRequest(limit: limit, after: after) }
        }

        func run() throws {
            let moments = MomentCatalog(catalog: try options.readingCatalog())
            let cursor = try MomentCatalog.pageRequest(limit: limit, after: after)
            guard let shown = try moments.page(ofMoment: id, after: cursor, limit: limit) else {
                throw ValidationError("moment \(id) does not exist; `darkroom moments list` lists them")
            }
            try Output.print(shown, json: json) { shown in
                var lines = [MomentsText.line(shown.moment), "  cover: \(shown.moment.coverPictureId.map(String.init) ?? "none") (\(shown.moment.coverReason ?? shown.moment.coverSource))"]
                for p in shown.pictures {
                    lines.append("  \(p.id)\t\(p.capturedAt.map { ISO8601DateFormatter().string(from: $0) } ?? "no time")\t\(p.author ?? "-")\t\(p.sourceName)\t\(p.variants["thumb"] ?? "")")
                }
                if let next = shown.next { lines.append("  more: --after \(next)") }
                return lines.joined(separator: "\n")
            }
        }
    }

    struct SetCover: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-cover",
            abstract: "Set a moment's cover as its creator; the worker then leaves it.",
            discussion: "Only the creator may, with one of the moment's pictures. --clear hands the cover back to the policy.")
        @OptionGroup var options: ConfigOption
        @Argument(help: "The moment's id.") var moment: Int64
        @Argument(help: "The picture's id.") var picture: Int64?
        @Option(name: .customLong("as"), help: ArgumentHelp("The user doing it: must be the moment's creator.", valueName: "user")) var user: String
        @Flag(help: "Hand the cover back to the policy.") var clear = false

        func validate() throws {
            if clear == (picture != nil) { throw ValidationError("name a picture, or pass --clear") }
        }

        func run() throws {
            let events = try options.catalog().setCover(momentId: moment, pictureId: clear ? nil : picture, by: user)
            print(events.isEmpty ? "cover unchanged" : "cover of moment \(moment) set by \(user)")
        }
    }

    struct Rebuild: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Recompute every moment from scratch and report what differs.",
            discussion: """
            The moments of the same photos must not depend on the order they arrived in: \
            this recomputes them from all pictures and declared moments and lists every change. \
            Nothing listed means the incremental state was right. --check only reports (exit 1 \
            when something differs); without it the changes are applied.
            """)
        @OptionGroup var options: ConfigOption
        @Flag(help: "Report differences without applying them; exit 1 when there are any.") var check = false

        func run() throws {
            let events = try CatalogChoice.open(try options.load()).store.rebuildMoments(apply: !check)
            if events.isEmpty {
                print("moments agree with a rebuild from scratch: nothing to change")
                return
            }
            for event in events { print(MomentsText.describe(event)) }
            print("\(events.count) change\(events.count == 1 ? "" : "s") \(check ? "found (not applied)" : "applied")")
            if check { throw ExitCode(1) }
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the moments as a static HTML page to share, or as GeoJSON.",
            discussion: """
            --html DIR writes DIR/index.html and the images it shows (DIR/media/): a page to open \
            in a browser with no server, or to copy anywhere. Moments by month with their place \
            names, local times and a small map; each photo opens larger (arrow keys, Escape, swipe); \
            photos in no moment in a section of their own. Images an earlier export left in \
            DIR/media/ that the page no longer shows are removed. --geojson FILE writes the moments \
            as points for any map tool. Private moments, and photos marked private, are left out \
            of both unless --include-private.
            """)
        @OptionGroup var options: ConfigOption
        @Option(help: ArgumentHelp("Directory for index.html and its images.", valueName: "dir")) var html: String?
        @Option(help: ArgumentHelp("GeoJSON file to write.", valueName: "file")) var geojson: String?
        @Flag(help: "Include private moments and photos marked private (left out by default).") var includePrivate = false

        func validate() throws {
            if html == nil && geojson == nil { throw ValidationError("pass --html DIR, --geojson FILE, or both") }
        }

        func run() throws {
            let configuration = try options.load()
            let catalog = try options.readingCatalog()
            let bySize = configuration.variants.sorted { $0.width * $0.height < $1.width * $1.height }
            let thumb = bySize.first?.name ?? configuration.feedVariant
            // The larger view: the variant named preview, else the largest that keeps the whole frame.
            let large = configuration.variants.first { $0.name == "preview" }?.name
                ?? bySize.last { $0.fit == .contain }?.name ?? configuration.feedVariant
            let export = MomentExport(moments: MomentCatalog(catalog: catalog), library: configuration.libraryRoot,
                                      coverVariant: configuration.feedVariant, thumbVariant: thumb, largeVariant: large,
                                      includePrivate: includePrivate)
            if let html {
                let written = try export.html(into: html)
                var line = "wrote \(html)/index.html (\(written.moments) moment\(written.moments == 1 ? "" : "s"), \(written.photos) photo\(written.photos == 1 ? "" : "s")"
                if written.photosInNoMoment > 0 { line += ", \(written.photosInNoMoment) in no moment" }
                line += ")"
                let leftOut = written.privateMomentsLeftOut + written.privatePhotosLeftOut
                if leftOut > 0 {
                    line += "; left out: \(written.privateMomentsLeftOut) private moment(s), \(written.privatePhotosLeftOut) private photo(s) (--include-private adds them)"
                }
                print(line)
            }
            if let geojson {
                let count = try export.geoJSON(to: geojson)
                print("wrote \(geojson) (\(count) moment\(count == 1 ? "" : "s"))")
            }
        }
    }
}

enum MomentsText {
    static func line(_ m: MomentView) -> String {
        let formatter = ISO8601DateFormatter()
        return "\(m.id)\t\(m.kind)\t\(m.visibility)\t\(formatter.string(from: m.start)) – \(formatter.string(from: m.end))\t\(m.pictures) pictures\tplace \(m.place.map { String($0.id) } ?? "-")\t\(m.title ?? "")"
    }

    static func describe(_ event: MomentEvent) -> String {
        switch event {
        case .momentCreated(let m): "moment \(m.id) created (\(m.kind.rawValue))"
        case .momentUpdated(let m): "moment \(m.id) updated"
        case .momentMerged(let from, let into): "moment \(from) merged into \(into)"
        case .momentDeleted(let id): "moment \(id) deleted"
        case .pictureAdded(let p, let m): "picture \(p) moved to \(m.map { "moment \($0)" } ?? "no moment")"
        case .pictureRemoved(let p, let m): "picture \(p) removed from \(m.map { "moment \($0)" } ?? "no moment")"
        case .coverChanged(let m, let p, let reason): "cover of moment \(m) is now \(p.map { "picture \($0)" } ?? "none") (\(reason))"
        case .candidateRecorded(let p, let m): "picture \(p) recorded as a candidate of moment \(m)"
        case .candidateWithdrawn(let p, let m): "picture \(p) no longer a candidate of moment \(m)"
        }
    }
}
