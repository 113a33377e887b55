import Foundation
import Testing
@testable import HTTPService

@Suite("Health, readiness and metrics")
struct OperationsTests {
    @Test func livenessAndReadinessAnswerWhileAllIsWell() async throws {
        try await TestService.with(workers: false) { service in
            let live = try await service.request(.GET, "/healthz")
            #expect(live.status == 200)
            #expect(try live.object()["status"] as? String == "ok")
            let ready = try await service.request(.GET, "/healthz/ready")
            #expect(ready.status == 200)
            #expect(try ready.object()["ready"] as? Bool == true)
        }
    }

    @Test func readinessIs503WhenTheSpoolCannotBeWritten() async throws {
        try await TestService.with(workers: false) { service in
            // Tests run as root, so permissions would not stop a write: the spool becomes a file.
            let spool = service.configuration.spoolRoot
            try FileManager.default.moveItem(atPath: spool, toPath: spool + ".away")
            _ = FileManager.default.createFile(atPath: spool, contents: Data("not a directory".utf8))
            let notReady = try await service.request(.GET, "/healthz/ready")
            #expect(notReady.status == 503)
            let report = try notReady.object()
            #expect(report["ready"] as? Bool == false)
            #expect(report["catalog"] as? String == "ok")
            #expect((report["spool"] as? String)?.contains("incoming") == true)
            #expect((report["error"] as? String)?.hasPrefix("spool: ") == true)
            #expect(try await service.request(.GET, "/healthz").status == 200)
            // An upload meanwhile is refused, and not lost silently.
            let upload = try await service.upload(try Samples.hopper())
            #expect(upload.status >= 500)
            #expect(upload.error != nil)

            try FileManager.default.removeItem(atPath: spool)
            try FileManager.default.moveItem(atPath: spool + ".away", toPath: spool)
            #expect(try await service.request(.GET, "/healthz/ready").status == 200)
        }
    }

    @Test func metricsAnswerInThePrometheusTextFormat() async throws {
        try await TestService.with(workers: false) { service in
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
