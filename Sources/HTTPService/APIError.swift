import Catalog
import Foundation
import Hummingbird
import Moments
import Operations
import Storage

/// Why a request was refused: the status it answers and one line of reason, sent as
/// `{"error": "..."}`.
enum APIError: Error, CustomStringConvertible, Sendable, Equatable {
    /// No bearer token, or not the configured one (401).
    case unauthorized
    /// A parameter, a field or a body that cannot be used (400).
    case badRequest(String)
    /// The caller may not do this (403).
    case forbidden(String)
    /// No such upload, picture, moment or file (404).
    case notFound(String)
    /// No route has this method and path (404).
    case noRoute(method: String, path: String)
    /// The body is larger than `server.max_upload_bytes` (413).
    case tooLarge(limit: Int)
    /// The body is not a JPEG or PNG, whatever its declared type (415).
    case unsupportedMediaType(String)
    /// The catalog or the disk cannot take the request now; it may be tried again (503).
    case unavailable(String)
    /// A failure of the service itself (500); the log has the details.
    case `internal`(String)

    /// The status answered.
    var status: HTTPResponse.Status {
        switch self {
        case .unauthorized: .unauthorized
        case .badRequest: .badRequest
        case .forbidden: .forbidden
        case .notFound, .noRoute: .notFound
        case .tooLarge: .contentTooLarge
        case .unsupportedMediaType: .unsupportedMediaType
        case .unavailable: .serviceUnavailable
        case .internal: .internalServerError
        }
    }

    /// One line: what was refused and what to do.
    var description: String {
        switch self {
        case .unauthorized: "missing or wrong bearer token: send Authorization: Bearer <server.token>"
        case .badRequest(let reason), .forbidden(let reason), .notFound(let reason), .unsupportedMediaType(let reason),
             .unavailable(let reason), .internal(let reason):
            reason
        case .noRoute(let method, let path): "no route for \(method) \(path); see openapi.json for the API"
        case .tooLarge(let limit): "the body is larger than \(limit) bytes (server.max_upload_bytes)"
        }
    }

    /// The error a failure of a lower layer answers as.
    init(_ error: any Error) {
        switch error {
        case let error as APIError: self = error
        case let error as FieldError: self = .badRequest(error.description)
        case let error as CatalogError: self = Self.catalog(error)
        case let error as FileSystemError: self = error.isTransient ? .unavailable(error.description) : .internal(error.description)
        case let error as HTTPError where error.status == .notFound: self = .notFound(error.body ?? "not found")
        case let error as any HTTPResponseError where (400..<500).contains(error.status.code):
            self = .badRequest("\(error.status.reasonPhrase): \(error)")
        default: self = .internal("internal error: \(error)")
        }
    }

    private static func catalog(_ error: CatalogError) -> APIError {
        switch error {
        case .rule(.momentNotFound), .rule(.placeNotFound): .notFound(error.description)
        case .rule(.notCreator): .forbidden(error.description)
        case .rule, .refused: .badRequest(error.description)
        case .busy, .diskFull: .unavailable(error.description)
        case .corrupt, .other: .internal(error.description)
        }
    }

    /// The JSON response.
    func response() -> Response {
        var headers: HTTPFields = [:]
        if self == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        return JSONBody.response(["error": description], status: status, headers: headers)
    }
}
