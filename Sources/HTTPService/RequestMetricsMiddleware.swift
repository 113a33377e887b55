import Hummingbird
import ServiceObservability

/// Counts every finished request in `ServiceMetrics`, labelled by its route pattern (never the
/// raw path, so that ids do not make a label each).
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServiceMetrics

    /// The label of requests that matched no route.
    static var unmatchedRoute: String { "unmatched" }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        func record(_ status: Int) {
            let route = context.endpointPath.flatMap { $0 == "NotFound" ? nil : $0 } ?? Self.unmatchedRoute
            metrics.recordRequest(method: request.method.rawValue, route: route, status: status,
                                  seconds: started.secondsElapsed)
        }
        do {
            let response = try await next(request, context)
            record(response.status.code)
            return response
        } catch {
            record(APIError(error).status.code)
            throw error
        }
    }
}

extension ContinuousClock.Instant {
    /// Seconds from this instant to now.
    var secondsElapsed: Double { (ContinuousClock.now - self) / .seconds(1) }
}
