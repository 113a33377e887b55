import Hummingbird

/// Every route `darkroom serve` answers, in one list: the router registers exactly these, and
/// `openapi.json` beside this file documents exactly these (a test holds the two together).
enum APIRoute: String, CaseIterable, Sendable {
    case liveness, readiness, metrics
    case openAPI
    case upload, uploadStatus, presignUpload, completeUpload
    case picture
    case moment, momentPictures, momentCover, declareMoment, updateMoment
    case placesAround, declarePlace, updatePlace
    case media, mediaHead

    /// The HTTP method.
    var method: HTTPRequest.Method {
        switch self {
        case .upload, .presignUpload, .completeUpload, .declareMoment, .declarePlace: .post
        case .momentCover, .updateMoment, .updatePlace: .put
        case .mediaHead: .head
        default: .get
        }
    }

    /// The path pattern, `{name}` for a parameter: as the router matches it, as metrics label it
    /// and as the OpenAPI document writes it.
    var path: String {
        switch self {
        case .liveness: "/healthz"
        case .readiness: "/healthz/ready"
        case .metrics: "/metrics"
        case .openAPI: "/openapi.json"
        case .upload: "/v1/uploads"
        case .uploadStatus: "/v1/uploads/{id}"
        case .presignUpload: "/v1/uploads/presign"
        case .completeUpload: "/v1/uploads/{id}/complete"
        case .picture: "/v1/pictures/{id}"
        case .moment, .updateMoment: "/v1/moments/{id}"
        case .momentPictures: "/v1/moments/{id}/pictures"
        case .momentCover: "/v1/moments/{id}/cover"
        case .declareMoment: "/v1/moments"
        case .placesAround: "/v1/places/around"
        case .updatePlace: "/v1/places/{id}"
        case .declarePlace: "/v1/places"
        // The library's own layout (`Library.variantPath`), one parameter per level, so that no
        // path of any other shape reaches the media handler.
        case .media, .mediaHead: "/v1/media/variants/{variant}/{shard1}/{shard2}/{file}"
        }
    }

    /// Where variant files are served from: the media route's fixed part, before the library path.
    static let mediaPrefix = "/v1/media/"

    /// Routes answered without the bearer token on the main port: the API's own description.
    static let open: Set<APIRoute> = [.openAPI]

    /// The routes of the admin listener (`server.admin_port`), answered there without a token.
    static let admin: [APIRoute] = [.liveness, .readiness, .metrics]

    /// Whether `path` (a request's, without its query) has the shape of this route's pattern.
    func matches(_ path: Substring) -> Bool {
        let pattern = self.path.split(separator: "/", omittingEmptySubsequences: false)
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard pattern.count == parts.count else { return false }
        return zip(pattern, parts).allSatisfy { expected, part in
            expected.hasPrefix("{") ? !part.isEmpty : expected == part
        }
    }

    /// The methods some route answers at `path` (for `Allow` on a 405), in a stable order;
    /// empty when no route has this path. Where a fixed segment and a parameter both match
    /// (`/v1/places/around` and `/v1/places/{id}`), the router takes the fixed one whatever the
    /// method, so only the routes with the most fixed segments count.
    static func methods(at path: String, among routes: [APIRoute] = allCases) -> [String] {
        let matching = routes.filter { $0.matches(Substring(path)) }
        let fixed = { (route: APIRoute) in route.path.split(separator: "/").filter { !$0.hasPrefix("{") }.count }
        let most = matching.map(fixed).max()
        return Set(matching.filter { fixed($0) == most }.map(\.method.rawValue)).sorted()
    }
}
