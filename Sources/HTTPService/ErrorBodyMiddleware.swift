import Hummingbird
import Logging

/// Gives every request an id (`RequestID`, sent back in the `X-Request-Id` header) and turns
/// every error of the routes below it into a JSON answer, `{"error": "...", "request_id": "..."}`
/// with its status. The answer says what went wrong and what to do, never a path, host name or
/// process id (`Redaction`); the log keeps the full detail under the same id.
struct ErrorBodyMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger
    let redaction: Redaction

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let id = RequestID.make()
        var response = await RequestID.$current.withValue(id) { () async -> Response in
            do {
                return try await next(request, context)
            } catch {
                var answer = APIError(error)
                if case .notFound = answer, context.endpointPath == "NotFound" {
                    answer = .noRoute(method: request.method.rawValue, path: request.uri.path)
                }
                let metadata: Logger.Metadata = [
                    "request_id": "\(id)", "method": "\(request.method)", "route": "\(context.endpointPath ?? "-")",
                    "status": "\(answer.status.code)", "reason": "\(error)"]
                if case .unavailable = answer {
                    // A passing condition (an outage of the database, a full disk) whose start
                    // and end are logged where it is known: here only one line a request, quietly.
                    logger.info("request refused for now", metadata: metadata)
                } else if answer.status.code >= 500 {
                    logger.error("request failed", metadata: metadata)
                } else {
                    logger.debug("request refused", metadata: metadata)
                }
                return answer.response(requestID: id, redaction: redaction)
            }
        }
        if let name = RequestID.headerName { response.headers[name] = id }
        return response
    }
}
