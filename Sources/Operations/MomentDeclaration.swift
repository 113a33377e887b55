import Foundation
import Moments

/// A moment as the backend declares it (`darkroom moments create`, `POST /v1/moments`): times as
/// ISO 8601 text, visibility as a word, checked into a `Moment` for `Catalog.declareMoment`.
public enum MomentDeclaration {
    /// The visibility of a moment declared without one.
    public static let defaultVisibility = Visibility.public.rawValue

    /// The moment declared; throws the first field that cannot be used. `id` nil takes the next
    /// free id when the catalog saves it.
    public static func moment(id: Int64?, placeId: Int64, start: String, end: String, creator: String?,
                              visibility: String, invitees: [String], title: String?) throws(FieldError) -> Moment {
        let startDate = try TimeField.instant(start, field: "start", example: "2024-05-07T18:00:00+02:00")
        let endDate = try TimeField.instant(end, field: "end", example: "2024-05-07T20:00:00+02:00")
        guard endDate >= startDate else { throw FieldError("end", "must not be before", other: "start") }
        guard let kind = Visibility(rawValue: visibility) else {
            throw FieldError("visibility", "must be public or private (got \(visibility))")
        }
        if kind == .private && creator == nil { throw FieldError("creator", "is needed for a private moment") }
        try FieldError.checkBackendId(id)
        try FieldLimits.check("creator", creator)
        try FieldLimits.check("title", title)
        try FieldLimits.check(invitees: invitees)
        return Moment(id: id ?? 0, kind: .declared, placeId: placeId, start: startDate, end: endDate, creator: creator,
                      visibility: kind, invitees: Set(invitees), title: title)
    }
}
