import AsyncHTTPClient
import Catalog
import CatalogCopy
import Foundation
@testable import HTTPService
import Logging
import PostgresCatalog
import PostgresHarness
import Settings
import Testing

/// `darkroom serve` over the SQLite catalog and over its copy in PostgreSQL, side by side:
/// every GET route, for every picture, moment, page, place and upload of the catalog, must
/// answer the same status and body from both (request ids aside).
@Suite("catalog copy: the HTTP read routes", .enabled(if: SharedCluster.available, Comment(rawValue: SharedCluster.skipReason)))
struct HTTPComparisonTests {
    static let token = "copy-test-\(UUID().uuidString)"

    /// A server in this process on a free loopback port, without workers.
    struct Served {
        let port: Int
        let stop: @Sendable () async -> Void

        static func start(_ configuration: Configuration, catalog: any CatalogStore, jobs: (any PhotoJobQueue)?) async throws -> Served {
            let server = try APIServer(configuration: configuration, catalog: catalog, jobs: jobs, runWorkers: false,
                                       logger: Copying.quiet, environment: [:])
            let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
            let group = server.serviceGroup { port in continuation.yield(port) }
            let running = Task { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CancellationError() }
            return Served(port: port) {
                await group.triggerGracefulShutdown()
                _ = await running.result
            }
        }

        func get(_ path: String) async throws -> (status: Int, body: String) {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)" + path)
            request.headers.add(name: "Authorization", value: "Bearer \(HTTPComparisonTests.token)")
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
            let body = try await response.body.collect(upTo: 1 << 26)
            return (Int(response.status.code), String(buffer: body))
        }
    }

    @Test("every GET route answers the same from the PostgreSQL copy as from the SQLite catalog")
    func everyGetRoute() async throws {
        let source = try Copying.large.get()
        let location = try SharedCluster.freshDatabase()
        _ = try Copying.copy(source, to: location)
        let postgres = try PostgresCatalog(location: location, momentRules: source.catalog.momentRules)
        defer { postgres.close() }

        let root = NSTemporaryDirectory() + "darkroom-copy-http-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        var configuration = Configuration.defaults
        configuration.spoolRoot = root + "/spool"
        configuration.libraryRoot = root + "/library"
        configuration.catalogPath = source.path
        configuration.server.host = "127.0.0.1"
        configuration.server.port = 0
        configuration.server.token = Self.token
        let sqlite = try await Served.start(configuration, catalog: source.catalog, jobs: nil)
        let copy = try await Served.start(configuration, catalog: postgres, jobs: postgres)

        var compared: [APIRoute: Int] = [:]
        func compare(_ route: APIRoute, _ path: String) async throws -> String {
            let (a, b) = (try await sqlite.get(path), try await copy.get(path))
            compared[route, default: 0] += 1
            let (left, right) = route == .metrics ? (Self.catalogFigures(a.body), Self.catalogFigures(b.body))
                : (Self.normalized(a.body), Self.normalized(b.body))
            if a.status != b.status || left != right {
                Issue.record("GET \(path): SQLite answered \(a.status) \(left.prefix(1500)); PostgreSQL answered \(b.status) \(right.prefix(1500))")
            }
            return a.body
        }

        let pictures = try source.catalog.read { db in try PictureRecord.all(in: db) }.compactMap(\.id)
        let moments = try source.catalog.moments(atPlace: nil)
        let places = try source.catalog.places()
        let uploads = try source.catalog.read { db in try JobRecord.fetchAll(db) }.map(\.sourceName)
            .filter { $0.count == 36 && $0.hasSuffix(".jpg") }.map { String($0.dropLast(4)) }
        #expect(uploads.count >= 3)
        for route in APIRoute.allCases where route.method == .get {
            switch route {
            case .liveness, .readiness, .metrics, .openAPI:
                _ = try await compare(route, route.path)
            case .uploadStatus:
                for id in uploads + [String(repeating: "0", count: 32), "not-an-id"] { _ = try await compare(route, "/v1/uploads/\(id)") }
            case .picture:
                for id in pictures + [0, 999_999] { _ = try await compare(route, "/v1/pictures/\(id)") }
                _ = try await compare(route, "/v1/pictures/abc")
            case .moment:
                for moment in moments { _ = try await compare(route, "/v1/moments/\(moment.id)") }
                _ = try await compare(route, "/v1/moments/999999")
            case .momentPictures:
                for moment in moments {
                    var after: String?
                    repeat {
                        let query = "limit=40" + (after.map { "&after=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)" } ?? "")
                        let body = try await compare(route, "/v1/moments/\(moment.id)/pictures?\(query)")
                        after = (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["next"] as? String
                    } while after != nil
                }
                _ = try await compare(route, "/v1/moments/\(SourceCatalog.momentId)/pictures?limit=0")
            case .placesAround:
                for place in places {
                    for radius in [100, 5_000] {
                        _ = try await compare(route, "/v1/places/around?lat=\(place.center.latitude)&long=\(place.center.longitude)&rad=\(radius)")
                    }
                }
                _ = try await compare(route, "/v1/places/around?lat=200&long=0&rad=10")
            case .media:
                _ = try await compare(route, "/v1/media/variants/thumb/ab/cd/\(String(repeating: "ab", count: 32)).jpg")
            default:
                Issue.record("GET route \(route.path) has no comparison here: add one")
            }
        }
        await sqlite.stop()
        await copy.stop()
        #expect(compared[.picture] == pictures.count + 3 && (compared[.momentPictures] ?? 0) > moments.count)
        print("HTTP comparison: \(compared.values.reduce(0, +)) GET requests put to both stores")
    }

    /// A JSON body with its request id left out (each answer has its own), keys sorted; any
    /// other body as it is.
    static func normalized(_ body: String) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) else { return body }
        func strip(_ value: Any) -> Any {
            if let object = value as? [String: Any] {
                return object.filter { $0.key != "request_id" }.mapValues(strip)
            }
            if let array = value as? [Any] { return array.map(strip) }
            return value
        }
        guard let data = try? JSONSerialization.data(withJSONObject: strip(object), options: [.sortedKeys]) else { return body }
        return String(decoding: data, as: UTF8.self)
    }

    /// The lines of `/metrics` read from the catalog (photo and webhook figures), which both
    /// stores must give alike; the process's own counters, the spool and the build are the
    /// server's. The age of the oldest pending delivery grows between the two requests.
    static func catalogFigures(_ text: String) -> String {
        text.split(separator: "\n").filter { line in
            ["darkroom_catalog_up", "darkroom_catalog_jobs", "darkroom_catalog_pictures", "darkroom_catalog_webhook_deliveries",
             "darkroom_catalog_webhook_pending"]
                .contains { line.hasPrefix($0) }
        }.joined(separator: "\n")
    }
}
