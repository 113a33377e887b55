import Foundation

/// Names for what the worker creates: an automatic place's name from where it is, and an
/// automatic moment's title from its place and local date ("Brecon, 12 May 2024"). The
/// catalogs give the gazetteer's; without one, automatic places and moments stay unnamed.
public protocol AutomaticNaming: Sendable {
    /// A name for a place centred at `center` ("Brecon, Wales, GB"), or nil.
    func placeName(at center: Coordinate) -> String?
    /// The time zone of a point, for a moment's local date; nil for UTC.
    func timeZone(at point: Coordinate) -> TimeZone?
}

extension AutomaticNaming {
    /// "Brecon, 12 May 2024": the place name's first part and the local date of `start`.
    public func title(placeName: String, start: Date, at point: Coordinate) -> String {
        let town = placeName.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? placeName
        return "\(town), \(MomentTitleDate.format(start, in: timeZone(at: point) ?? .gmt))"
    }
}

/// "12 May 2024", in English whatever the machine's locale, so that titles are the same everywhere.
public enum MomentTitleDate {
    private static let months = ["January", "February", "March", "April", "May", "June", "July", "August",
                                 "September", "October", "November", "December"]

    public static func format(_ date: Date, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return "\(parts.day ?? 1) \(months[(parts.month ?? 1) - 1]) \(parts.year ?? 1970)"
    }
}
