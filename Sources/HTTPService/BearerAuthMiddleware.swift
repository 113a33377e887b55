import Crypto
import Hummingbird

/// Lets through only requests that carry `Authorization: Bearer <token>` with the configured
/// token; every other request is answered 401 before anything is read or written. The `open`
/// routes (fixed paths, such as the API's own description) need no token.
struct BearerAuthMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The token's SHA-256: comparing digests takes the same time whatever the token sent, its
    /// length included.
    private let expected: [UInt8]
    /// "METHOD /path" of the routes answered without a token.
    private let open: Set<String>

    /// Requires `token`, except for the `open` routes.
    init(token: String, open: Set<APIRoute> = []) {
        expected = Array(SHA256.hash(data: Array(token.utf8)))
        self.open = Set(open.map { "\($0.method.rawValue) \($0.path)" })
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if !open.isEmpty, open.contains("\(request.method.rawValue) \(request.uri.path)") {
            return try await next(request, context)
        }
        guard let presented = Self.bearerToken(request.headers[.authorization]), accepts(presented) else {
            throw APIError.unauthorized
        }
        return try await next(request, context)
    }

    /// Whether `token` is the configured one, in constant time.
    func accepts(_ token: Substring) -> Bool {
        let digest = Array(SHA256.hash(data: Array(token.utf8)))
        var difference: UInt8 = 0
        for (a, b) in zip(digest, expected) { difference |= a ^ b }
        return difference == 0
    }

    /// The token of an `Authorization` header of the Bearer scheme (any case), or nil.
    static func bearerToken(_ header: String?) -> Substring? {
        guard let header, let space = header.firstIndex(of: " "),
              header[..<space].lowercased() == "bearer" else { return nil }
        let token = header[header.index(after: space)...].drop { $0 == " " }
        return token.isEmpty ? nil : token
    }
}
