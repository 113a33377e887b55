import Catalog
import Foundation
import Hummingbird
import Multipart
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
    /// The id of a create is already taken (409); the reason names the existing record.
    case conflict(String)
    /// The body is larger than `server.max_upload_bytes` (413).
    case tooLarge(limit: Int)
    /// A body passes a limit other than its size in bytes: parts or headers of a form, or the
    /// size of a JSON body (413).
    case overLimit(String)
    /// The body is not a photo Darkroom reads (JPEG, PNG, HEIC, HEIF, AVIF), whatever its declared type (415).
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
        case .conflict: .conflict
        case .notFound, .noRoute: .notFound
        case .tooLarge, .overLimit: .contentTooLarge
        case .unsupportedMediaType: .unsupportedMediaType
        case .unavailable: .serviceUnavailable
        case .internal: .internalServerError
        }
    }

    /// One line: what was refused and what to do.
    var description: String {
        switch self {
        case .unauthorized: "missing or wrong bearer token: send Authorization: Bearer <server.token>"
        case .badRequest(let reason), .forbidden(let reason), .conflict(let reason), .notFound(let reason), .unsupportedMediaType(let reason),
             .unavailable(let reason), .internal(let reason), .overLimit(let reason):
            reason
        case .noRoute(let method, let path): "no route for \(method) \(path); see openapi.json for the API"
        case .tooLarge(let limit): "the body is larger than \(limit) bytes (server.max_upload_bytes)"
        }
    }

    /// What a 503 tells a client to wait before it asks again, in seconds.
    static let retryAfterSeconds = "5"

    /// The reason of a failure whose detail only the log should hold.
    static let seeTheLog = "internal error: the server's log has the details under this answer's request_id; report it with that id"

    /// The answer to a multipart body that cannot be read: 413 past a limit, 400 otherwise.
    static func form(_ problem: MultipartForm.Problem) -> APIError {
        if case .tooMany = problem { return .overLimit(problem.description) }
        return .badRequest(problem.description)
    }

    /// The error a failure of a lower layer answers as.
    init(_ error: any Error) {
        switch error {
        case let error as APIError: self = error
        case let error as FieldError: self = .badRequest(error.description)
        case let error as CatalogError: self = Self.catalog(error)
        case let error as FileSystemError:
            self = error.isTransient ? .unavailable(error.publicDescription) : .internal(error.publicDescription)
        case let error as HTTPError where error.status == .notFound: self = .notFound(error.body ?? "not found")
        case let error as any HTTPResponseError where (400..<500).contains(error.status.code):
            self = .badRequest("\(error.status.reasonPhrase): \(error)")
        default: self = .internal(Self.seeTheLog)
        }
    }

    private static func catalog(_ error: CatalogError) -> APIError {
        switch error {
        case .rule(.momentNotFound), .rule(.placeNotFound), .rule(.pictureNotInMoment): .notFound(error.description)
        case .rule(.notCreator): .forbidden(error.description)
        case .rule(.idTaken): .conflict(error.description)
        case .rule, .refused: .badRequest(error.description)
        case .busy, .diskFull, .ioError, .unavailable: .unavailable(error.publicDescription)
        case .corrupt, .other, .leaseLost: .internal(error.publicDescription)
        }
    }

    /// The JSON response: the reason (without the paths and host name `redaction` knows) and
    /// the request's id, under which the log holds the full detail.
    func response(requestID: String, redaction: Redaction) -> Response {
        var headers: HTTPFields = [:]
        if self == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        // A refusal that passes: when to ask again (an outage of the database, a full disk).
        if case .unavailable = self { headers[.retryAfter] = Self.retryAfterSeconds }
        return JSONBody.response(["error": redaction.scrub(description), "request_id": requestID], status: status, headers: headers)
    }
}
