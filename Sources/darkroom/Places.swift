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
        subcommands: [Add.self, Update.self, List.self, Around.self])

    /// A point and a radius, validated.
    struct Circle: ParsableArguments {
        @Option(help: ArgumentHelp("Latitude in degrees, -90...90.", valueName: "degrees"))
        var lat: Double
        @Option(help: ArgumentHelp("Longitude in degrees, -180...180.", valueName: "degrees"))
        var long: Double
        @Option(help: ArgumentHelp("Radius in metres, above 0.", valueName: "metres"))
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
            let places = try options.catalog().places().map(PlaceView.init)
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
            let places = try options.catalog().places(around: circle.center, radiusMetres: circle.rad).map(PlaceView.init)
            try Output.print(places, json: json) { $0.isEmpty ? "no place within \(circle.rad) m" : $0.map(PlacesText.line).joined(separator: "\n") }
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
}
