import Catalog
import Failures
import Foundation
import Testing
@testable import HTTPService
@testable import ServiceObservability
import Storage

/// `/metrics`' per-process figures: `process_*` in Prometheus' own names, read from `/proc/self`,
/// and the counters of what this process did, which a `sum()` over machines adds up rightly.
@Suite("Process metrics")
struct ProcessMetricsTests {
    let root = NSTemporaryDirectory() + "darkroom-process-metrics-" + UUID().uuidString

    func render(_ metrics: ServiceMetrics) throws -> ServiceMetricsTests.Parsed {
        let catalog = try Catalog(path: root + "/catalog.sqlite")
        let spool = try Spool(root: root + "/spool", settleSeconds: 0)
        return try ServiceMetricsTests.Parsed(metrics.render(catalog: catalog, spool: spool))
    }

    @Test func processFiguresHavePrometheusNamesAndThisProcesssValues() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let parsed = try render(ServiceMetrics())
        ServiceMetricsTests().checkWellFormed(parsed)
        #expect(parsed.types["process_cpu_seconds_total"] == "counter")
        for gauge in ["process_resident_memory_bytes", "process_virtual_memory_bytes", "process_start_time_seconds",
                      "process_open_fds", "process_max_fds"] {
            #expect(parsed.types[gauge] == "gauge", "\(gauge)")
        }
        let resident = try #require(parsed.value("process_resident_memory_bytes"))
        let virtual = try #require(parsed.value("process_virtual_memory_bytes"))
        #expect(resident > Double(1 << 20) && resident <= virtual, "resident \(resident), virtual \(virtual)")
        #expect(try #require(parsed.value("process_cpu_seconds_total")) > 0)
        // Started before now, and not before the machine booted a year ago at most.
        let start = try #require(parsed.value("process_start_time_seconds"))
        let now = Date().timeIntervalSince1970
        #expect(start <= now + 1 && start > now - 365 * 86400, "start \(start), now \(now)")
        // Descriptors opened here are counted (200 of them: tests beside this one open and
        // close their own meanwhile); the limit is this process's own.
        let before = try #require(parsed.value("process_open_fds"))
        let opened = (0..<200).map { _ in open("/dev/null", O_RDONLY) }
        defer { opened.forEach { close($0) } }
        let after = try #require(try render(ServiceMetrics()).value("process_open_fds"))
        #expect(after >= before + 100, "open fds \(before) then \(after), 200 opened between")
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        #expect(parsed.value("process_max_fds") == Double(limit.rlim_cur))
    }

    @Test func procStatIsReadFromAfterTheLastParenthesisOfTheCommandName() throws {
        // A command name may hold spaces and parentheses: fields are counted from the last `)`.
        let line = "4242 (dark ) (room) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 12 0 123456 104857600 2560 "
            + "18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0"
        let fields = try #require(ProcessFigures.statFields(line))
        #expect(fields.userTicks == 250 && fields.systemTicks == 50)
        #expect(fields.startTicks == 123456 && fields.virtualBytes == 104857600 && fields.residentPages == 2560)
        #expect(ProcessFigures.statFields("4242 (truncated") == nil)
        #expect(ProcessFigures.bootTime("cpu  1 2 3\nbtime 1700000000\nprocesses 5\n") == 1_700_000_000)
    }

    @Test func photosAndUploadsAreThisProcesssOwnCounters() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let metrics = ServiceMetrics()
        let upload = String(repeating: "ab", count: 16)
        metrics.recordUploadAccepted(bytes: 1_000, seconds: 0.01, id: upload)
        metrics.recordUploadAccepted(bytes: 2_000, seconds: 0.02)
        metrics.recordPhoto(sourceName: upload + ".jpg", outcome: .added, seconds: 0.4)
        metrics.recordPhoto(sourceName: "IMG_1.jpg", outcome: .duplicate, seconds: 0.2)
        metrics.recordPhoto(sourceName: "IMG_2.jpg", outcome: .failed, failure: .badInput, seconds: 0.05)
        metrics.recordPhoto(sourceName: "IMG_3.jpg", outcome: .failed, seconds: 0.05)
        // The same upload seen ending again (its status answered after the worker finished):
        // observed once.
        metrics.recordUploadEnded(id: upload)
        metrics.recordUploadEnded(id: String(repeating: "cd", count: 16))

        let parsed = try render(metrics)
        ServiceMetricsTests().checkWellFormed(parsed)
        #expect(parsed.types["darkroom_uploads_accepted_total"] == "counter")
        #expect(parsed.value("darkroom_uploads_accepted_total") == 2)
        #expect(parsed.value("darkroom_photos_processed_total", ["outcome": "added"]) == 1)
        #expect(parsed.value("darkroom_photos_processed_total", ["outcome": "duplicate"]) == 1)
        #expect(parsed.value("darkroom_photos_processed_total", ["outcome": "failed"]) == 2)
        #expect(parsed.value("darkroom_photos_failed_total", ["category": "bad_input"]) == 1)
        #expect(parsed.value("darkroom_photos_failed_total", ["category": "unrecorded"]) == 1)
        #expect(parsed.value("darkroom_photo_duration_seconds_count") == 4)
        #expect(abs((parsed.value("darkroom_photo_duration_seconds_sum") ?? 0) - 0.7) < 1e-9)
        #expect(parsed.types["darkroom_upload_to_done_seconds"] == "histogram")
        #expect(parsed.value("darkroom_upload_to_done_seconds_count") == 1)
        #expect(parsed.buckets("darkroom_upload_to_done_seconds").first?.count == 1, "ended at once: in the first bucket")
    }

    @Test func aKnownPathAnswersOnlyTheMethodsOfItsMostFixedRoute() {
        // `/v1/places/around` is also the shape of `/v1/places/{id}`, but the router takes the
        // fixed segment whatever the method: `Allow` names GET alone.
        #expect(APIRoute.methods(at: "/v1/places/around") == ["GET"])
        #expect(APIRoute.methods(at: "/v1/uploads/presign") == ["POST"])
        #expect(APIRoute.methods(at: "/v1/places/12") == ["PUT"])
        #expect(APIRoute.methods(at: "/v1/moments/3") == ["GET", "PUT"])
        #expect(APIRoute.methods(at: "/v1/nothing").isEmpty)
    }

    @Test func anEmptyCursorIsTheFirstPageAndAnUnknownPlaceIsAConflict() async throws {
        try await TestService.with(workers: false) { service in
            #expect(try await service.send(.POST, "/v1/places", json: #"{"id": 1, "lat": 1, "long": 2, "rad": 30}"#).status == 201)
            #expect(try await service.send(.POST, "/v1/moments", json: #"{"id": 1, "place_id": 1, "start": "2024-05-07T18:00:00Z", "end": "2024-05-07T20:00:00Z"}"#).status == 201)
            let page = try await service.request(.GET, "/v1/moments/1/pictures?after=")
            #expect(page.status == 200)
            #expect((try page.object()["pictures"] as? [Any])?.isEmpty == true)
            for placeId in [0, 99] {
                let moment = #"{"place_id": \#(placeId), "start": "2024-05-07T18:00:00Z", "end": "2024-05-07T20:00:00Z"}"#
                let created = try await service.send(.POST, "/v1/moments", json: moment)
                // 409, not 404: on PUT /v1/moments/1, 404 would say that the moment is gone.
                #expect(created.status == 409, "place \(placeId): \(created.status)")
                #expect((try created.object()["error"] as? String)?.contains("place \(placeId) does not exist") == true)
                #expect(try await service.send(.PUT, "/v1/moments/1", json: moment).status == 409)
            }
            let around = try await service.request(.OPTIONS, "/v1/places/around?lat=1&long=2&rad=5")
            #expect(around.status == 405 && around.headers["Allow"] == ["GET"])
        }
    }
}
