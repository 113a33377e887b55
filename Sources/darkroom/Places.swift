import ArgumentParser
import Catalog
import Foundation
import Moments
import Operations
import JSONValues

struct Places: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Declare and find places (a point with a radius in metres).",
        discussion: """
        A place is where moments happen: photos within its radius belong to it. The backend \
        declares places with its own ids; automatic moments create places of their own \
        (negative ids) when no declared place holds their photos.
        """,
        subcommands: [Add.self, Update.self, List.self, Around.self, Name.self])

    /// A point and a radius, validated. The value after each option is taken as it is, so that
    /// `--lat -33.8568` is a southern latitude rather than an unknown option `-3`.
    struct Circle: ParsableArguments {
        @Option(parsing: .unconditional, help: ArgumentHelp("Latitude in degrees, -90...90.", valueName: "degrees"))
        var lat: Double
        @Option(parsing: .unconditional, help: ArgumentHelp("Longitude in degrees, -180...180.", valueName: "degrees"))
        var long: Double
        @Option(parsing: .unconditional, help: ArgumentHelp("Radius in metres, above 0.", valueName: "metres"))
        var rad: Double

        func validate() throws {
            try checkOption { _ = try PlaceCircle.center(lat: lat, long: long, rad: rad) }
        }

        var center: Coordinate { Coordinate(latitude: lat, longitude: long) }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Declare a place.")
        @OptionGroup var options: ConfigOption
        @OptionGroup var circle: Circle
        @Option(help: "A name people recognise.") var name: String?
        @Option(help: "The backend's id for it, 1 to 2^53 - 1 (default: the next free id); an id already taken is refused.") var id: Int64?
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            try checkOption { try FieldError.checkBackendId(id) }
        }

        func run() throws {
            let catalog = try options.catalog()
            let place = try catalog.declarePlace(id: id, name: name, center: circle.center, radiusMetres: circle.rad)
            try Output.print(PlaceView(place), json: json) { "place \($0.id): \(PlacesText.line($0))" }
        }
    }

    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change an existing place's centre, radius and name.",
            discussion: "Every field is given again. The declared moments held there are re-evaluated: pictures now inside join them, those now outside leave.")
        @OptionGroup var options: ConfigOption
        @Argument(help: "The place's id.") var id: Int64
        @OptionGroup var circle: Circle
        @Option(help: "A name people recognise.") var name: String?
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            try checkOption { try FieldError.checkBackendId(id) }
        }

        func run() throws {
            let catalog = try options.catalog()
            let place = try catalog.updatePlace(id: id, name: name, center: circle.center, radiusMetres: circle.rad)
            try Output.print(PlaceView(place), json: json) { "place \($0.id) updated: \(PlacesText.line($0))" }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List every place.")
        @OptionGroup var options: ConfigOption
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let places = try options.readingCatalog().places().map(PlaceView.init)
            try Output.print(places, json: json) { $0.map(PlacesText.line).joined(separator: "\n") }
        }
    }

    struct Around: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Places whose centre lies within a radius of a point, nearest first (the app's places/around_location).")
        @OptionGroup var options: ConfigOption
        @OptionGroup var circle: Circle
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let places = try options.readingCatalog().places(around: circle.center, radiusMetres: circle.rad).map(PlaceView.init)
            try Output.print(places, json: json) { $0.isEmpty ? "no place within \(circle.rad) m" : $0.map(PlacesText.line).joined(separator: "\n") }
        }
    }
}

extension Places {
    struct Name: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Name the automatic places and title the automatic moments that have none.",
            discussion: """
            Automatic places take the nearest city's name from GeoNames' cities (within 30 km, \
            else the region and country); automatic moments the place and their local date \
            ("Brecon, 12 May 2024"). Declared places and moments keep the backend's names.
            """)
        @OptionGroup var options: ConfigOption
        @Flag(help: "Every automatic place and moment without a name (required: the only mode).") var all = false
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            guard all else { throw ValidationError("say --all: every automatic place and moment without a name is named") }
        }

        func run() throws {
            let outcome = try options.catalog().nameAutomatic()
            let counts: [String: Int] = ["places": outcome.places, "moments": outcome.moments]
            try Output.print(counts, json: json) { _ in
                "named \(outcome.places) automatic place(s) and titled \(outcome.moments) automatic moment(s)"
            }
        }
    }
}

enum PlacesText {
    static func line(_ place: PlaceView) -> String {
        "\(place.id)\t\(String(format: "%.6f, %.6f", place.lat, place.long))\t\(place.radiusMetres) m\t\(place.name ?? "")"
    }
}

/// Prints a value as JSON, or as text.
enum Output {
    static func print<T: Encodable>(_ value: T, json: Bool, text: (T) -> String) throws {
        if json {
            Swift.print(String(decoding: try StableJSON.encoder().encode(value), as: UTF8.self))
        } else {
            Swift.print(text(value))
        }
    }
}

extension ConfigOption {
    /// The configured catalog, opened (and created when missing).
    func catalog() throws -> any CatalogStore {
        try CatalogChoice.open(try load()).store
    }

    /// The configured catalog for a command that only reads: an SQLite catalog that is not
    /// there yet reads as an empty one, made in a scratch folder that is removed when the
    /// process exits, so that a listing creates nothing where it runs.
    func readingCatalog() throws -> any CatalogStore {
        var configuration = try load()
        if configuration.effectiveCatalogURL() == nil && !FileManager.default.fileExists(atPath: configuration.catalogPath) {
            configuration.catalogPath = ScratchFolder.path + "/catalog.sqlite"
        }
        return try CatalogChoice.open(configuration).store
    }
}

/// A temporary folder for what a read-only command must open but not keep, removed at exit.
enum ScratchFolder {
    static let path: String = {
        let path = NSTemporaryDirectory() + "darkroom-scratch-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: ScratchFolder.path) }
        return path
    }()
}
