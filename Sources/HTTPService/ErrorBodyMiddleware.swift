import Hummingbird
import Logging

/// Turns every error of the routes below it into a JSON answer, `{"error": "..."}` with its
/// status, logging those that are the service's own failures.
struct ErrorBodyMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            var answer = APIError(error)
            if case .notFound = answer, context.endpointPath == "NotFound" {
                answer = .noRoute(method: request.method.rawValue, path: request.uri.path)
            }
            if answer.status.code >= 500 {
                logger.error("request failed", metadata: [
                    "method": "\(request.method)", "route": "\(context.endpointPath ?? "-")", "reason": "\(answer)"])
            }
            return answer.response()
        }
    }
}
