import Hummingbird

/// Sends each route of `APIRoute` to its handler, with its parameters checked.
struct APIDispatcher: Sendable {
    let environment: ServiceEnvironment

    func respond(to route: APIRoute, _ request: Request, _ context: ServiceRequestContext) async throws -> Response {
        let request = request.continuingOnRead(channel: context.channel)
        let uploads = UploadHandler(environment: environment)
        let catalog = CatalogHandler(environment: environment)
        let health = HealthHandler(environment: environment)
        let parameters = context.parameters
        switch route {
        case .liveness: return health.liveness()
        case .readiness: return try await health.readiness()
        case .metrics: return try await health.metrics()
        case .openAPI: return HealthHandler.openAPI()
        case .upload: return try await uploads.accept(request)
        case .presignUpload: return try await DirectUploadHandler(environment: environment).presign(body: try await environment.collectBody(request))
        case .completeUpload: return try await DirectUploadHandler(environment: environment).complete(id: try parameters.require("id"))
        case .uploadStatus:
            return try await uploads.status(id: try parameters.require("id"), wait: try Self.wait(request), connection: context.channel)
        case .picture: return try await catalog.picture(id: try Self.id(parameters, of: "picture"))
        case .moment: return try await catalog.moment(id: try Self.id(parameters, of: "moment"))
        case .momentPictures:
            return try await catalog.momentPictures(id: try Self.id(parameters, of: "moment"), query: Query(request: request))
        case .momentCover:
            let id = try Self.id(parameters, of: "moment")
            return try await catalog.setCover(momentId: id, body: try await environment.collectBody(request))
        case .declareMoment: return try await catalog.declareMoment(body: try await environment.collectBody(request))
        case .updateMoment:
            let id = try Self.id(parameters, of: "moment")
            return try await catalog.declareMoment(body: try await environment.collectBody(request), updating: id)
        case .placesAround: return try await catalog.placesAround(query: Query(request: request))
        case .declarePlace: return try await catalog.declarePlace(body: try await environment.collectBody(request))
        case .updatePlace:
            let id = try Self.id(parameters, of: "place")
            return try await catalog.declarePlace(body: try await environment.collectBody(request), updating: id)
        case .media, .mediaHead:
            return try await MediaHandler(environment: environment).file(
                variant: try parameters.require("variant"), shard1: try parameters.require("shard1"),
                shard2: try parameters.require("shard2"), file: try parameters.require("file"),
                ifNoneMatch: request.headers[.ifNoneMatch], range: request.headers[.range], head: route == .mediaHead)
        }
    }

    /// A numeric id from the path; 400 when it is not a whole number.
    static func id(_ parameters: Parameters, of kind: String) throws(APIError) -> Int64 {
        let text = parameters.get("id") ?? ""
        guard let id = Int64(text) else { throw .badRequest("\(kind) id must be a whole number (got \(text))") }
        return id
    }

    /// The `wait` of `GET /v1/uploads/{id}?wait=SECONDS`: 0 when absent.
    static func wait(_ request: Request) throws -> Double {
        guard let text = request.uri.queryParameters["wait"] else { return 0 }
        guard let seconds = Double(String(text)), seconds.isFinite, (0...UploadHandler.longestWait).contains(seconds) else {
            throw APIError.badRequest("wait=\(text): give a number of seconds from 0 to \(Int(UploadHandler.longestWait))")
        }
        return seconds
    }
}
