import Foundation

/// Why a moment operation was refused. Each case reads as one line: what failed, and what to do.
public enum MomentError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A value of the "moments" configuration is out of range.
    case invalidRule(key: String, value: Double, expected: String)
    /// No moment has this id.
    case momentNotFound(id: Int64)
    /// The moment's place is missing from the store.
    case placeNotFound(id: Int64)
    /// A declared moment was refused (bad window, wrong kind, bad place).
    case invalidMoment(id: Int64, reason: String)
    /// Someone other than the creator tried to set the cover.
    case notCreator(momentId: Int64, user: String?)
    /// The chosen cover picture is not in the moment.
    case pictureNotInMoment(pictureId: Int64, momentId: Int64)
    /// A create named an id that is already taken: `existing` describes the record there.
    case idTaken(kind: String, id: Int64, existing: String)
    /// An id outside `Declaration.backendIds`.
    case idOutOfRange(kind: String, id: Int64)

    /// One line: what failed and what to do.
    public var description: String {
        switch self {
        case let .invalidRule(key, value, expected):
            "moments.\(key) is \(value) in pipeline.json; expected \(expected): fix the value or remove it to use the default"
        case let .momentNotFound(id):
            "moment \(id) does not exist in the catalog: declare it first, or check the id"
        case let .placeNotFound(id):
            "place \(id) does not exist in the catalog: declare the moment with its place"
        case let .invalidMoment(id, reason):
            "moment \(id) was refused: \(reason); fix the moment and declare it again"
        case let .notCreator(momentId, user):
            "user \(user ?? "(anonymous)") is not the creator of moment \(momentId): only the creator may set its cover"
        case let .pictureNotInMoment(pictureId, momentId):
            "picture \(pictureId) is not in moment \(momentId): a cover must be one of the moment's pictures"
        case let .idTaken(kind, id, existing):
            "\(kind) \(id) already exists (\(existing)); creating never replaces: update it (PUT /v1/\(kind)s/\(id), `darkroom \(kind)s update \(id)`) or create without an id"
        case let .idOutOfRange(kind, id):
            "\(kind) id \(id) is out of range: the backend's ids are 1 to \(Declaration.backendIds.upperBound) (2^53 - 1, exact in JSON)"
        }
    }
}
