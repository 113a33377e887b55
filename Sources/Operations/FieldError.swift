/// A value given on the command line or in an HTTP request that cannot be used: the field, as
/// the caller named it (`lat`, `start`, `moment_id`), and what is wrong with it.
///
/// The checks are written once, here in Pipeline; the command line shows the field as an option
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
    /// Checks an id the backend chose for a place or a moment (field `id`): above 0, since
    /// negative ids are the worker's own.
    public static func checkBackendId(_ id: Int64?) throws(FieldError) {
        if let id, id <= 0 { throw FieldError("id", "must be above 0 (negative ids are the worker's own)") }
    }
}
