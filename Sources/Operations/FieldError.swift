import Moments

/// A value given on the command line or in an HTTP request that cannot be used: the field, as
/// the caller named it (`lat`, `start`, `moment_id`), and what is wrong with it.
///
/// The checks are written once, here in Operations; the command line shows the field as an option
/// (`--lat must be between -90 and 90 (got 200.0)`), the HTTP API as is.
public struct FieldError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The field's name, without any `--`.
    public var field: String
    /// What is wrong, starting with a verb: "must be between -90 and 90 (got 200.0)".
    public var problem: String
    /// Another field the problem ends by naming ("must not be before" `start`), named the same way.
    public var other: String?

    /// An error about `field`, whose problem ends with the name of `other` when given.
    public init(_ field: String, _ problem: String, other: String? = nil) {
        self.field = field
        self.problem = problem
        self.other = other
    }

    /// One line: the field, then the problem.
    public var description: String { "\(field) \(problem)" + (other.map { " " + $0 } ?? "") }

    /// The line as the command line names the fields (`--lat must be ...`).
    public var asOption: String { "--\(field) \(problem)" + (other.map { " --" + $0 } ?? "") }
}

extension FieldError {
    /// Checks an id the backend chose for a place or a moment (field `id`): 1 to 2^53 - 1, since
    /// negative ids are the worker's own and larger ones are not exact in a JSON number.
    public static func checkBackendId(_ id: Int64?, field: String = "id") throws(FieldError) {
        guard let id else { return }
        if id <= 0 { throw FieldError(field, "must be above 0 (negative ids are the worker's own) (got \(id))") }
        if id > Declaration.backendIds.upperBound {
            throw FieldError(field, "must be at most \(Declaration.backendIds.upperBound), 2^53 - 1, the largest id exact in JSON (got \(id))")
        }
    }
}

/// The longest values the backend may send in a field, in UTF-8 bytes (and the most invitees):
/// a request is refused with the field's name past any of them, before anything is stored.
/// They bound what one request can make the service hold and write into every sidecar, row and
/// outbox event, and are far above what an app shows.
public enum FieldLimits {
    /// A user id: `author_id`, `creator`, each invitee.
    public static let userIdBytes = 256
    /// A title of a photo or moment, or a place's name.
    public static let titleBytes = 1024
    /// Any other field of an upload (numbers, times, words).
    public static let otherFieldBytes = 256
    /// Invitees of one moment.
    public static let invitees = 1000

    /// The limit of an upload's or declaration's field by name.
    public static func bytes(of field: String) -> Int {
        switch field {
        case "author_id", "creator", "invitees": userIdBytes
        case "title", "name": titleBytes
        default: otherFieldBytes
        }
    }

    /// Refuses a value longer than its field's limit, or holding a control character (`FieldText`).
    public static func check(_ field: String, _ value: String?) throws(FieldError) {
        guard let value else { return }
        let limit = bytes(of: field)
        if value.utf8.count > limit { throw FieldError(field, "is longer than \(limit) bytes (got \(value.utf8.count))") }
        try FieldText.checkControls(field, value)
    }

    /// Refuses an invitee list with too many users or a user id too long.
    public static func check(invitees: [String]) throws(FieldError) {
        if invitees.count > Self.invitees {
            throw FieldError("invitees", "may name at most \(Self.invitees) users (got \(invitees.count))")
        }
        for user in invitees { try check("invitees", user) }
    }
}
