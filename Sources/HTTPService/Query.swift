import Hummingbird
import Operations

/// A request's query string, read field by field with one-line errors.
struct Query: Sendable {
    let request: Request

    /// A text field; nil when absent. A value holding a control character (a NUL, which would
    /// cut it short further on) is refused naming the field.
    func string(_ name: String) throws(FieldError) -> String? {
        guard let value = request.uri.queryParameters[name[...]].map(String.init) else { return nil }
        try FieldText.checkControls(name, value)
        return value
    }

    /// A whole-number field; nil when absent.
    func integer(_ name: String) throws(FieldError) -> Int64? {
        guard let text = try string(name) else { return nil }
        guard let value = Int64(text) else { throw FieldError(name, "must be a whole number (got \(text))") }
        return value
    }

    /// A number field that must be there, in plain decimal (`0x10` and `nan` are refused).
    func requiredNumber(_ name: String) throws(FieldError) -> Double {
        guard let text = try string(name) else { throw FieldError(name, "is needed") }
        guard let value = FieldText.decimal(text) else { throw FieldError(name, "must be a number in decimal (got \(text))") }
        return value
    }
}
