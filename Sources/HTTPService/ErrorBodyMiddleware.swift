import Hummingbird
import Logging
import NIOHTTP1
import ServiceObservability

/// Gives every request an id (`RequestID`, sent back in the `X-Request-Id` header) and turns
/// every error of the routes below it into a JSON answer, `{"error": "...", "request_id": "..."}`
/// with its status. The answer says what went wrong and what to do, never a path, host name or
/// process id (`Redaction`); the log keeps the full detail under the same id.
///
/// A refused request that has a body is answered with `Connection: close`, and its connection
/// closes once the answer is out (`ConnectionGuard`): the rest of its body is never read. A
/// known path asked with a method no route has is answered 405 with `Allow`.
struct ErrorBodyMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger
    let redaction: Redaction
    /// The routes of this listener (for `Allow`).
    var routes: [APIRoute] = APIRoute.allCases

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let id = RequestID.make()
        var response = await RequestID.$current.withValue(id) { () async -> Response in
            do {
                return try await next(request, context)
            } catch {
                var answer = APIError(error)
                var headers: HTTPFields = [:]
                let noRoute = context.endpointPath == "NotFound"
                if case .notFound = answer, noRoute {
                    let allowed = APIRoute.methods(at: request.uri.path, among: routes)
                    if !allowed.isEmpty {
                        headers[.allow] = allowed.joined(separator: ", ")
                        answer = .badRequest("\(request.method.rawValue) is not a method of \(request.uri.path); use \(allowed.joined(separator: " or "))")
                    } else {
                        answer = .noRoute(method: request.method.rawValue, path: request.uri.path)
                    }
                }
                let malformed = error is HTTPParserError
                if malformed {
                    answer = .badRequest("the request body is not valid HTTP/1.1 framing (\(error)): check its chunked encoding or Content-Length")
                }
                var metadata: Logger.Metadata = [
                    "request_id": "\(id)", "method": "\(request.method)", "route": "\(context.endpointPath ?? "-")",
                    "status": "\(headers[.allow] == nil ? answer.status.code : 405)", "reason": "\(error)"]
                if case .unavailable = answer {
                    // A passing condition (an outage of the database, a full disk) whose start
                    // and end are logged where it is known: here only one line a request, quietly.
                    logger.info("request refused for now", metadata: metadata)
                } else if malformed {
                    // The client's fault, worth an operator's look (a broken proxy or client).
                    metadata["status"] = "400"
                    logger.warning("request refused: malformed body", metadata: metadata)
                } else if answer.status.code >= 500 {
                    logger.error("request failed", metadata: metadata)
                } else {
                    logger.debug("request refused", metadata: metadata)
                }
                var response = answer.response(requestID: id, redaction: redaction)
                if headers[.allow] != nil { response.status = .methodNotAllowed }
                response.headers.append(contentsOf: headers)
                if Self.hasBody(request) {
                    // Refused, perhaps before its body was read: the connection ends with this
                    // answer rather than read the rest of a body nobody will use.
                    response.headers[.connection] = "close"
                }
                return response
            }
        }
        if let name = RequestID.headerName { response.headers[name] = id }
        return response
    }

    /// Whether the request declares a body (a Content-Length above 0, or a transfer coding).
    static func hasBody(_ request: Request) -> Bool {
        if let length = request.headers[.contentLength] { return length != "0" }
        return request.headers[.transferEncoding] != nil
    }
}
