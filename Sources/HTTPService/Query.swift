import Hummingbird
import Operations

/// A request's query string, read field by field with one-line errors.
struct Query: Sendable {
    let request: Request

    /// A text field; nil when absent.
    func string(_ name: String) -> String? {
        request.uri.queryParameters[name[...]].map(String.init)
    }

    /// A whole-number field; nil when absent.
    func integer(_ name: String) throws(FieldError) -> Int64? {
        guard let text = string(name) else { return nil }
        guard let value = Int64(text) else { throw FieldError(name, "must be a whole number (got \(text))") }
        return value
    }

    /// A number field that must be there.
    func requiredNumber(_ name: String) throws(FieldError) -> Double {
        guard let text = string(name) else { throw FieldError(name, "is needed") }
        guard let value = Double(text), value.isFinite else { throw FieldError(name, "must be a number (got \(text))") }
        return value
    }
}
