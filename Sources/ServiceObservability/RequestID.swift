import Hummingbird

/// The id of one request: sent back in the `X-Request-Id` header of every answer and in the body
/// of every error, and logged with the full detail of a failure, so that an operator can find
/// what the answer leaves out (paths, host names, the database's own message).
package enum RequestID {
    /// The response header that carries it.
    package static let header = "X-Request-Id"
    package static let headerName = HTTPFields.Element.Name(header)

    /// The id of the request being answered by the current task; nil outside a request.
    @TaskLocal package static var current: String?

    /// A new id: 16 hexadecimal digits, random.
    package static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
