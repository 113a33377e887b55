import BucketStorage
import ChildProcesses
import Foundation
import Settings
import Testing
@testable import HTTPService

@Suite("Health, readiness and metrics")
struct OperationsTests {
    @Test(arguments: TestStore.available) func livenessAndReadinessAnswerWhileAllIsWell(store: TestStore) async throws {
        try await TestService.with(store: store, workers: false) { service in
            let live = try await service.request(.GET, "/healthz")
            #expect(live.status == 200)
            #expect(try live.object()["status"] as? String == "ok")
            let ready = try await Self.readiness(service)
            #expect(ready.status == 200, "\(ready.text)")
            #expect(try ready.object()["ready"] as? Bool == true)
        }
    }

    @Test(arguments: TestStore.available) func readinessIs503WhenTheSpoolCannotBeWritten(store: TestStore) async throws {
        try await TestService.with(store: store, workers: false) { service in
            // Tests run as root, so permissions would not stop a write: the spool becomes a file.
            let spool = service.configuration.spoolRoot
            try FileManager.default.moveItem(atPath: spool, toPath: spool + ".away")
            _ = FileManager.default.createFile(atPath: spool, contents: Data("not a directory".utf8))
            let notReady = try await Self.readiness(service)
            #expect(notReady.status == 503)
            let report = try notReady.object()
            #expect(report["ready"] as? Bool == false)
            #expect(report["catalog"] as? String == "ok")
            #expect((report["spool"] as? String)?.contains("Not a directory") == true)
            #expect((report["error"] as? String)?.hasPrefix("spool: ") == true)
            // The answer names what failed without the path, host or process; the log has them
            // under the answer's request id.
            let id = try #require(report["request_id"] as? String)
            #expect(notReady.headers.first(name: "X-Request-Id") == id)
            Self.expectNoInternals(notReady.text, service)
            let logged = service.log.events(where: "request_id", is: id)
            #expect(logged.contains { $0.metadata["reason"]?.contains(spool) == true }, "\(logged)")
            #expect(try await service.request(.GET, "/healthz").status == 200)
            // An upload meanwhile is refused, and not lost silently.
            let upload = try await service.upload(try Samples.hopper())
            #expect(upload.status >= 500)
            #expect(upload.error != nil)
            Self.expectNoInternals(upload.text, service)
            let uploadID = try #require(try upload.object()["request_id"] as? String)
            #expect(upload.headers.first(name: "X-Request-Id") == uploadID)
            #expect(service.log.events(where: "request_id", is: uploadID).contains { $0.metadata["reason"]?.contains(spool) == true })

            try FileManager.default.removeItem(atPath: spool)
            try FileManager.default.moveItem(atPath: spool + ".away", toPath: spool)
            #expect(try await Self.readiness(service).status == 200)
        }
    }

    /// `/healthz/ready`, asked again (up to five times, half a second apart) while one of its
    /// checks was only late: the bound is one second, which a machine running the whole suite
    /// beside other test processes can miss. A check in flight is joined, not started again, so
    /// the next answer carries its outcome; what these tests look at is each check's outcome,
    /// and `readinessIsBoundedWhenTheBucketDoesNotAnswer` the bound.
    static func readiness(_ service: TestService) async throws -> Answer {
        var answer = try await service.request(.GET, "/healthz/ready")
        for _ in 0..<5 where answer.text.contains("did not answer within") {
            try await Task.sleep(for: .milliseconds(500))
            answer = try await service.request(.GET, "/healthz/ready")
        }
        return answer
    }

    @Test("a bucket that never answers: readiness is 503 within the bound, naming the library, while the rest answers")
    func readinessIsBoundedWhenTheBucketDoesNotAnswer() async throws {
        // A listening socket nothing accepts from: the gateway's connection completes and its
        // requests wait, as behind a hung load balancer.
        let (listener, port) = try #require(LoopbackPort.socket(listening: true))
        defer { close(listener) }
        var settings = Configuration.defaults
        settings.libraryS3.endpoint = "http://127.0.0.1:\(port)"
        settings.libraryS3.pathStyle = true
        let bucket = try LibraryStores.bucket(try #require(BucketAddress("s3://never-answers/library")), configuration: settings,
                                              environment: ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret"])
        try await TestService.with(workers: false, library: bucket) { service in
            var adminPort = service.server.adminPort
            for _ in 0..<200 where adminPort == nil {
                try await Task.sleep(for: .milliseconds(25))
                adminPort = service.server.adminPort
            }
            let admin = try #require(adminPort, "no admin listener")
            // Asked as a service manager's probe asks: the admin listener, timed on a thread of
            // the test's own (the test run's busy concurrency pool would add its own delays).
            for attempt in 1...2 {
                let (took, answer) = await RawConnection.off { () -> (Double, RawConnection?) in
                    let start = Date()
                    guard let connection = RawConnection(port: admin) else { return (0, nil) }
                    connection.send("GET /healthz/ready HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    _ = connection.closedByServer(within: 30)
                    return (Date().timeIntervalSince(start), connection)
                }
                let connection = try #require(answer, "no connection to the admin listener")
                #expect(connection.statuses == [503], "\(connection.text)")
                let report = try #require(connection.jsonBody, "\(connection.text)")
                #expect((report["library"] as? String)?.contains("did not answer within 1 s") == true, "\(connection.text)")
                #expect(report["spool"] as? String == "ok" && report["catalog"] as? String == "ok", "\(connection.text)")
                #expect(took < 3, "readiness \(attempt) took \(took) s; its checks are bounded to 1 s")
                Self.expectNoInternals(connection.text, service)
            }
            // Each answer's reason is in the log (ReadinessProbeTests shows the second joined the first's check).
            #expect(service.log.events(where: "check", is: "library").count == 2)
            #expect(try await service.request(.GET, "/healthz").status == 200)
        }
        try await bucket.shutdown()
    }

    /// Expects an answer without an absolute path of the service, the host name or the process id.
    static func expectNoInternals(_ text: String, _ service: TestService, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!text.contains(service.root), "a path in \(text)", sourceLocation: sourceLocation)
        #expect(!text.contains(ProcessInfo.processInfo.hostName), "the host name in \(text)", sourceLocation: sourceLocation)
        #expect(!text.contains(".\(ProcessInfo.processInfo.processIdentifier)"), "the process id in \(text)", sourceLocation: sourceLocation)
        #expect(!text.contains("/tmp"), "a path in \(text)", sourceLocation: sourceLocation)
    }

    @Test(arguments: TestStore.available) func everyAnswerCarriesARequestIdAndEveryErrorBodyToo(store: TestStore) async throws {
        try await TestService.with(store: store, workers: false) { service in
            let ok = try await service.request(.GET, "/healthz")
            let missing = try await service.request(.GET, "/v1/pictures/12345")
            let unauthorized = try await service.request(.GET, "/healthz", token: nil)
            let ids = [ok, missing, unauthorized].compactMap { $0.headers.first(name: "X-Request-Id") }
            #expect(ids.count == 3 && Set(ids).count == 3)
            for answer in [missing, unauthorized] {
                #expect(try answer.object()["request_id"] as? String == answer.headers.first(name: "X-Request-Id"))
            }
        }
    }

    @Test(arguments: TestStore.available) func metricsAnswerInThePrometheusTextFormat(store: TestStore) async throws {
        try await TestService.with(store: store, workers: false) { service in
            _ = try await service.request(.GET, "/v1/pictures/1")
            let metrics = try await service.request(.GET, "/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.headers.first(name: "Content-Type") == "text/plain; version=0.0.4")
            // Every line is a comment, or a sample: a name, optional labels, a value.
            let sample = #/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? [-+0-9.eEInfNa]+( [0-9]+)?$/#
            for line in metrics.text.split(separator: "\n") where !line.hasPrefix("#") {
                #expect(line.wholeMatch(of: sample) != nil, "\(line)")
            }
        }
    }
}
