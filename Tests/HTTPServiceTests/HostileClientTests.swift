import AsyncHTTPClient
import Foundation
import Logging
import ServiceLifecycle
import Settings
import Testing
@testable import HTTPService

/// Clients that refuse to play by the rules: bodies promised and never sent, bodies that
/// trickle, broken framing, too many connections. The server answers at once, cuts them, and
/// keeps answering everyone else.
@Suite("Hostile clients", .serialized)
struct HostileClientTests {
    static let authorization = "Authorization: Bearer \(TestService.token)\r\n"

    @Test func aRefusalBeforeTheBodyClosesTheConnectionWithoutReadingIt() async throws {
        try await TestService.with(workers: false) { service in
            let port = service.port
            // 401: no token, a body of 1 GB promised, a few bytes of it sent.
            let unauthorised = await RawConnection.off { () -> (Int?, String?, Bool, String?) in
                guard let connection = RawConnection(port: port) else { return (nil, nil, false, nil) }
                connection.send("POST /v1/uploads HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\nabc")
                let closed = connection.closedByServer(within: 20)
                return (connection.statuses.first, connection.header("Connection"), closed, connection.jsonBody?["request_id"] as? String)
            }
            #expect(unauthorised.0 == 401)
            #expect(unauthorised.1?.lowercased() == "close")
            #expect(unauthorised.2, "the connection stays open after the 401")
            #expect(unauthorised.3 != nil)
            // 413: the declared length is over server.max_upload_bytes.
            let tooLarge = await RawConnection.off { () -> (Int?, Bool) in
                guard let connection = RawConnection(port: port) else { return (nil, false) }
                connection.send("POST /v1/uploads HTTP/1.1\r\nHost: x\r\n\(Self.authorization)Content-Length: 1000000000\r\n\r\nabc")
                _ = connection.read(until: "\r\n\r\n", within: 20)
                return (connection.statuses.first, connection.closedByServer(within: 20))
            }
            #expect(tooLarge.0 == 413)
            #expect(tooLarge.1)
            // 415: the first bytes are no photo; the rest of the promised body never comes.
            let notAPhoto = await RawConnection.off { () -> (Int?, Bool) in
                guard let connection = RawConnection(port: port) else { return (nil, false) }
                connection.send("POST /v1/uploads HTTP/1.1\r\nHost: x\r\n\(Self.authorization)Content-Length: 10000000\r\n\r\n"
                                + String(repeating: "x", count: 1024))
                let closed = connection.closedByServer(within: 20)
                return (connection.statuses.first, closed)
            }
            #expect(notAPhoto.0 == 415)
            #expect(notAPhoto.1)
            // The server still answers.
            let health = try await service.request(.GET, "/healthz")
            #expect(health.status == 200)
        }
    }

    @Test func expectContinueIsAnsweredBeforeTheBodyAndARefusalAlone() async throws {
        let photo = try Samples.distinct(try Samples.hopper(), "expect-continue")
        try await TestService.with(workers: false) { service in
            let port = service.port
            let accepted = await RawConnection.off { () -> ([Int], Int?) in
                guard let connection = RawConnection(port: port) else { return ([], nil) }
                connection.send("POST /v1/uploads HTTP/1.1\r\nHost: x\r\n\(Self.authorization)Content-Type: image/jpeg\r\n"
                                + "Content-Length: \(photo.count)\r\nExpect: 100-continue\r\n\r\n")
                guard connection.read(until: "100 Continue\r\n\r\n", within: 20) else { return (connection.statuses, nil) }
                let before = connection.statuses
                connection.send(photo)
                _ = connection.read(until: "\"status\"", within: 20)
                return (before, connection.statuses.last)
            }
            #expect(accepted.0 == [100], "no 100 Continue before the body: \(accepted.0)")
            #expect(accepted.1 == 202)
            let refused = await RawConnection.off { () -> ([Int], Bool) in
                guard let connection = RawConnection(port: port) else { return ([], false) }
                connection.send("POST /v1/uploads HTTP/1.1\r\nHost: x\r\nContent-Length: \(photo.count)\r\nExpect: 100-continue\r\n\r\n")
                let closed = connection.closedByServer(within: 20)
                return (connection.statuses, closed)
            }
            #expect(refused.0 == [401], "a refused request gets its final status alone: \(refused.0)")
            #expect(refused.1)
        }
    }

    @Test func aTricklingBodyIsCutByItsRateAndItsDeadline() async throws {
        // The rate: 1,000 bytes a second asked after one second of grace; the client sends 20.
        try await TestService.with(workers: false, configure: {
            $0.server.minBytesPerSecond = 1000
            $0.server.minRateGraceSeconds = 1
        }) { service in
            let port = service.port
            let cut = await Self.trickle(port: port, piece: "x", times: 300)
            #expect(cut, "a body at 20 bytes/s was not cut under server.min_bytes_per_second 1000")
            #expect(service.log.events(where: "reason", is: "the body arrived slower than server.min_bytes_per_second").count == 1)
            let health = try await service.request(.GET, "/healthz")
            #expect(health.status == 200)
        }
        // The deadline: steady bytes, no minimum rate, two seconds for the whole request.
        try await TestService.with(workers: false, configure: {
            $0.server.minBytesPerSecond = 0
            $0.server.requestDeadlineSeconds = 2
        }) { service in
            let port = service.port
            let cut = await Self.trickle(port: port, piece: String(repeating: "x", count: 100), times: 600)
            #expect(cut, "a request still arriving after server.request_deadline_seconds was not cut")
        }
    }

    /// An authorised upload of 1 MB promised, sent `piece` every 50 ms at most `times` times;
    /// whether the server cut it meanwhile.
    static func trickle(port: Int, piece: String, times: Int) async -> Bool {
        await RawConnection.off { () -> Bool in
            guard let connection = RawConnection(port: port) else { return false }
            connection.send("POST /v1/uploads HTTP/1.1\r\nHost: x\r\n\(Self.authorization)Content-Length: 1000000\r\n\r\n")
            for _ in 0..<times {
                guard connection.send(piece) else { return true }
                if !connection.read(for: 0.05) { return true }
            }
            return false
        }
    }

    @Test func aStopCutsAClientStillSendingAfterTheGrace() async throws {
        let root = NSTemporaryDirectory() + "darkroom-stop-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        var configuration = Configuration.defaults
        configuration.spoolRoot = root + "/spool"
        configuration.libraryRoot = root + "/library"
        configuration.catalogPath = root + "/catalog.sqlite"
        configuration.server.port = 0
        configuration.server.token = TestService.token
        configuration.server.minBytesPerSecond = 0
        configuration.server.stopGraceSeconds = 1
        let server = try APIServer(configuration: configuration, runWorkers: false, logger: Logger(label: "test"), environment: [:])
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let group = server.serviceGroup { port in continuation.yield(port) }
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let client = Task { await Self.trickle(port: port, piece: "x", times: 1200) }
        try await Task.sleep(for: .milliseconds(500))
        await group.triggerGracefulShutdown()
        #expect(await client.value, "the stop did not cut a client still sending")
        _ = await running.result
    }

    @Test func theAdminListenerAnswersWithoutATokenAndTheMainPortStillWantsOne() async throws {
        try await TestService.with(workers: false) { service in
            var adminPort = service.server.adminPort
            for _ in 0..<200 where adminPort == nil {
                try await Task.sleep(for: .milliseconds(25))
                adminPort = service.server.adminPort
            }
            let admin = try #require(adminPort, "no admin listener")
            #expect(admin != service.port)
            for path in ["/healthz", "/healthz/ready", "/metrics"] {
                let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(admin)\(path)"), timeout: .seconds(30))
                #expect(response.status.code == 200, "\(path) on the admin listener: \(response.status.code)")
                let withoutToken = try await service.request(.GET, path, token: nil)
                #expect(withoutToken.status == 401, "\(path) on the main port without a token")
            }
            // Only those: the API is not on the admin listener.
            let upload = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(admin)/v1/uploads/0"), timeout: .seconds(30))
            #expect(upload.status.code == 404)
        }
        try await TestService.with(workers: false, configure: { $0.server.adminPort = 0 }) { service in
            try await Task.sleep(for: .milliseconds(200))
            #expect(service.server.adminPort == nil)
        }
    }

    @Test func aStatusWaitEndsWithTheOutcomeAndWaitersAreBounded() async throws {
        try await TestService.with(workers: true) { service in
            let accepted = try await service.upload(Samples.distinct(try Samples.hopper(), "wait-woken"))
            let id = try #require(try accepted.object()["id"] as? String)
            let answer = try await service.request(.GET, "/v1/uploads/\(id)?wait=60")
            #expect(try answer.object()["status"] as? String == "done")
        }
        try await TestService.with(workers: false, configure: { $0.server.maxStatusWaiters = 0 }) { service in
            let accepted = try await service.upload(Samples.distinct(try Samples.hopper(), "wait-bounded"))
            let id = try #require(try accepted.object()["id"] as? String)
            // No room to wait: answered at once with the state, not after 60 s.
            let answer = try await service.request(.GET, "/v1/uploads/\(id)?wait=60")
            #expect(try answer.object()["status"] as? String == "queued")
        }
    }

    @Test func connectionsPastTheLimitOfOneClientAreClosedAtOnce() async throws {
        try await TestService.with(workers: false, configure: { $0.server.maxConnectionsPerClient = 3 }) { service in
            let port = service.port
            let outcome = await RawConnection.off { () -> (Bool, Bool, Int?) in
                let held = (0..<3).compactMap { _ in RawConnection(port: port) }
                // Let the server count them before the next one comes.
                _ = held.map { $0.read(for: 0.1) }
                guard held.count == 3, let extra = RawConnection(port: port) else { return (false, false, nil) }
                let extraClosed = extra.closedByServer(within: 20)
                let heldOpen = !held[0].closedByServer(within: 0.2)
                // Another client address is not held back by this one.
                guard let other = RawConnection(port: port, from: "127.0.0.2") else { return (extraClosed, heldOpen, nil) }
                other.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\(Self.authorization)\r\n")
                _ = other.read(until: "\"status\"", within: 20)
                return (extraClosed, heldOpen, other.statuses.first)
            }
            #expect(outcome.0, "a fourth connection from one address was not closed")
            #expect(outcome.1, "a connection within the limit was closed")
            #expect(outcome.2 == 200)
        }
    }

    @Test func aSlowUploadIsHeldOnDiskNotInMemory() async throws {
        try await TestService.with(workers: false) { service in
            let port = service.port
            let spool = service.configuration.spoolRoot
            let sent = 3 << 20
            let onDisk = await RawConnection.off { () -> Int in
                guard let connection = RawConnection(port: port) else { return -1 }
                connection.send("POST /v1/uploads HTTP/1.1\r\nHost: x\r\n\(Self.authorization)Content-Length: \(8 << 20)\r\n\r\n")
                var body = [UInt8](repeating: 0x20, count: sent)
                body[0] = 0xFF
                body[1] = 0xD8
                body[2] = 0xFF
                connection.send(body)
                // The upload now pauses: what it sent so far should be in its staged file.
                var largest = 0
                for _ in 0..<100 {
                    largest = Self.largestFile(under: spool)
                    if largest >= sent - UploadHandler.writeChunkBytes { break }
                    connection.read(for: 0.1)
                }
                return largest
            }
            #expect(onDisk >= sent - UploadHandler.writeChunkBytes,
                    "of \(sent) bytes sent, \(onDisk) are in the spool: the rest is held in memory")
        }
    }

    static func largestFile(under directory: String) -> Int {
        let manager = FileManager.default
        return (manager.subpaths(atPath: directory) ?? []).compactMap { relative in
            (try? manager.attributesOfItem(atPath: directory + "/" + relative))?[.size] as? Int
        }.max() ?? 0
    }

    @Test(arguments: ["zz\r\nabc\r\n0\r\n\r\n", "ffffffffffffffffffffff\r\nabc\r\n0\r\n\r\n", "3\nabc\n0\n\n"])
    func aMalformedChunkedBodyIsABadRequest(_ body: String) async throws {
        try await TestService.with(workers: false) { service in
            let port = service.port
            let answer = await RawConnection.off { () -> (Int?, String?) in
                guard let connection = RawConnection(port: port) else { return (nil, nil) }
                connection.send("POST /v1/moments HTTP/1.1\r\nHost: x\r\n\(Self.authorization)Content-Type: application/json\r\n"
                                + "Transfer-Encoding: chunked\r\n\r\n" + body)
                _ = connection.read(until: "request_id", within: 20)
                _ = connection.read(for: 0.2)
                return (connection.statuses.first, connection.jsonBody?["request_id"] as? String)
            }
            #expect(answer.0 == 400, "\(body.debugDescription): \(String(describing: answer.0))")
            #expect(answer.1 != nil)
            #expect(service.log.events(where: "status", is: "500").isEmpty)
        }
    }

    @Test func anOverlongHeadGetsTheJSONErrorBody() async throws {
        try await TestService.with(workers: false) { service in
            let port = service.port
            let answer = await RawConnection.off { () -> (Int?, String?, String?) in
                guard let connection = RawConnection(port: port) else { return (nil, nil, nil) }
                connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Long: \(String(repeating: "a", count: 200_000))\r\n\r\n")
                _ = connection.read(until: "request_id", within: 20)
                _ = connection.read(for: 0.2)
                return (connection.statuses.first, connection.jsonBody?["request_id"] as? String, connection.jsonBody?["error"] as? String)
            }
            #expect(answer.0 == 400)
            #expect(answer.1 != nil)
            #expect(answer.2 != nil)
        }
    }

    @Test func aKnownPathWithAnotherMethodIs405WithAllow() async throws {
        try await TestService.with(workers: false) { service in
            let trace = try await service.request(.TRACE, "/v1/uploads")
            #expect(trace.status == 405)
            #expect(trace.headers.first(name: "Allow") == "POST")
            let put = try await service.request(.PUT, "/v1/pictures/1", body: Array("{}".utf8))
            #expect(put.status == 405)
            #expect(put.headers.first(name: "Allow") == "GET")
            #expect(put.error != nil)
            let nothing = try await service.request(.GET, "/v1/nothing")
            #expect(nothing.status == 404)
            let document = try await service.request(.GET, "/openapi.json", token: nil)
            #expect(document.status == 200)
            #expect(try document.object()["openapi"] as? String != nil)
        }
    }
}
