import Catalog
import ChildProcesses
import Failures
import Foundation
import GRDB
import Testing
@testable import HTTPService
@testable import ServiceObservability
import Ingest
import Storage

/// The Prometheus exposition, parsed back and checked against known catalog rows and requests.
@Suite("Service metrics")
struct ServiceMetricsTests {
    let root = NSTemporaryDirectory() + "darkroom-metrics-" + UUID().uuidString

    /// One sample line of the exposition.
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    /// The samples and the declared type of each family; fails on a line that is not in the format.
    struct Parsed {
        var samples: [Sample] = []
        var types: [String: String] = [:]
        var helps: Set<String> = []

        init(_ text: String) throws {
            for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) where !line.isEmpty {
                if line.hasPrefix("# HELP ") {
                    helps.insert(String(line.dropFirst(7).prefix { $0 != " " }))
                } else if line.hasPrefix("# TYPE ") {
                    let parts = line.dropFirst(7).split(separator: " ")
                    try #require(parts.count == 2, "TYPE line: \(line)")
                    types[String(parts[0])] = String(parts[1])
                } else {
                    samples.append(try Self.sample(line))
                }
            }
        }

        static func sample(_ line: String) throws -> Sample {
            var rest = Substring(line)
            let name = String(rest.prefix { $0 != "{" && $0 != " " })
            rest = rest.dropFirst(name.count)
            var labels: [String: String] = [:]
            if rest.first == "{" {
                rest = rest.dropFirst()
                while rest.first != "}" {
                    let key = String(rest.prefix { $0 != "=" })
                    rest = rest.dropFirst(key.count)
                    try #require(rest.hasPrefix("=\""), "label in \(line)")
                    rest = rest.dropFirst(2)
                    var value = ""
                    while let c = rest.first, c != "\"" {
                        rest = rest.dropFirst()
                        if c == "\\", let next = rest.first {
                            rest = rest.dropFirst()
                            value.append(next == "n" ? "\n" : next)
                        } else {
                            value.append(c)
                        }
                    }
                    try #require(rest.first == "\"", "unterminated label in \(line)")
                    rest = rest.dropFirst()
                    if rest.first == "," { rest = rest.dropFirst() }
                    labels[key] = value
                }
                rest = rest.dropFirst()
            }
            try #require(rest.first == " ", "value separator in \(line)")
            let text = rest.dropFirst()
            let value = text == "+Inf" ? Double.infinity : Double(text)
            return Sample(name: name, labels: labels, value: try #require(value, "value in \(line)"))
        }

        func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
            samples.first { $0.name == name && $0.labels == labels }?.value
        }

        /// The bucket counts of a histogram in `le` order, with the +Inf bucket last.
        func buckets(_ name: String, _ labels: [String: String] = [:]) -> [(le: Double, count: Double)] {
            samples.filter { $0.name == name + "_bucket" && $0.labels.filter { $0.key != "le" } == labels }
                .compactMap { sample in sample.labels["le"].flatMap { $0 == "+Inf" ? .infinity : Double($0) }.map { ($0, sample.value) } }
                .sorted { $0.le < $1.le }
        }
    }

    func open() throws -> (Catalog, Spool) {
        (try Catalog(path: root + "/catalog.sqlite"), try Spool(root: root + "/spool", settleSeconds: 0))
    }

    func job(_ outcome: JobRecord.Outcome, seconds: Double, error: String? = nil, category: FailureCategory? = nil) -> JobRecord {
        JobRecord(sourceName: "IMG.jpg", claimPath: "processing/w/\(UUID().uuidString)", sha256: nil, outcome: outcome,
                  pictureId: nil, attempts: 1, error: error, sidecarJson: nil, worker: "w", startedAt: 100, finishedAt: 100 + seconds,
                  failureCategory: category)
    }

    func insert(_ jobs: [JobRecord], into catalog: Catalog) throws {
        try catalog.write { db in
            for var job in jobs { try job.insert(db) }
        }
    }

    /// Checks the exposition's own rules: every sample belongs to a family with HELP and TYPE,
    /// and every histogram's buckets are cumulative with +Inf equal to its count.
    func checkWellFormed(_ parsed: Parsed) {
        for sample in parsed.samples {
            let family = parsed.types[sample.name] != nil ? sample.name
                : ["_bucket", "_sum", "_count"].compactMap { suffix in
                    sample.name.hasSuffix(suffix) ? String(sample.name.dropLast(suffix.count)) : nil
                }.first ?? sample.name
            #expect(parsed.types[family] != nil, "TYPE of \(sample.name)")
            #expect(parsed.helps.contains(family), "HELP of \(sample.name)")
        }
        for (family, type) in parsed.types where type == "histogram" {
            let labelSets = Set(parsed.samples.filter { $0.name == family + "_count" }.map(\.labels))
            for labels in labelSets {
                let counts = parsed.buckets(family, labels).map(\.count)
                #expect(counts == counts.sorted(), "\(family) buckets are cumulative")
                #expect(counts.last == parsed.value(family + "_count", labels), "\(family) +Inf equals the count")
            }
        }
    }

    @Test func theCatalogsPhotosAreGaugesReadFromTheJobsTableByOutcomeAndStoredCategory() throws {
        let (catalog, spool) = try open()
        try insert([
            job(.added, seconds: 0.05), job(.added, seconds: 0.3), job(.duplicate, seconds: 2),
            job(.failed, seconds: 200, error: "took longer than 120 s", category: .timeout),
            // The category is what counts, never the wording of the message.
            job(.failed, seconds: 0.01, error: "took longer than the moon", category: .badInput),
            job(.failed, seconds: 0.01, error: "not a JPEG or PNG (a PDF document)", category: .unsupportedFormat),
        ], into: catalog)
        for file in [spool.incoming + "/waiting.jpg", spool.failed + "/bad.jpg", spool.failed + "/bad.jpg.error.json"] {
            try Data([0xFF]).write(to: URL(fileURLWithPath: file))
        }

        let parsed = try Parsed(ServiceMetrics().render(catalog: catalog, spool: spool))
        checkWellFormed(parsed)
        #expect(parsed.value("darkroom_catalog_up") == 1)
        // The whole catalog's figures, the same from every process sharing it: gauges.
        #expect(parsed.types["darkroom_catalog_jobs"] == "gauge")
        #expect(parsed.value("darkroom_catalog_jobs", ["outcome": "added"]) == 2)
        #expect(parsed.value("darkroom_catalog_jobs", ["outcome": "duplicate"]) == 1)
        #expect(parsed.value("darkroom_catalog_jobs", ["outcome": "failed"]) == 3)
        #expect(parsed.value("darkroom_catalog_jobs_failed", ["category": "timeout"]) == 1)
        #expect(parsed.value("darkroom_catalog_jobs_failed", ["category": "bad_input"]) == 1)
        #expect(parsed.value("darkroom_catalog_jobs_failed", ["category": "unsupported_format"]) == 1)
        #expect(parsed.value("darkroom_catalog_jobs_failed", ["category": "internal"]) == 0)
        #expect(parsed.samples.filter { $0.name == "darkroom_catalog_jobs_failed" }.count == FailureCategory.allCases.count)
        #expect(abs((parsed.value("darkroom_catalog_job_seconds") ?? 0) - 202.37) < 1e-6)
        #expect(parsed.value("darkroom_catalog_pictures") == 0)

        // This process's workers processed none of them: its own counters are at zero.
        #expect(parsed.types["darkroom_photos_processed_total"] == "counter")
        for outcome in ["added", "duplicate", "failed"] {
            #expect(parsed.value("darkroom_photos_processed_total", ["outcome": outcome]) == 0)
        }
        #expect(parsed.value("darkroom_photo_duration_seconds_count") == 0)

        #expect(parsed.value("darkroom_spool_files", ["state": "incoming"]) == 1)
        #expect(parsed.value("darkroom_spool_files", ["state": "processing"]) == 0)
        #expect(parsed.value("darkroom_spool_files", ["state": "failed"]) == 1)
    }

    @Test func requestsAndUploadsAreCountedWithCumulativeHistograms() throws {
        let (catalog, spool) = try open()
        let metrics = ServiceMetrics()
        metrics.recordRequest(method: "POST", route: "/v1/uploads", status: 201, seconds: 0.02)
        metrics.recordRequest(method: "post", route: "/v1/uploads", status: 201, seconds: 0.3)
        metrics.recordRequest(method: "POST", route: "/v1/uploads", status: 413, seconds: 0.001)
        metrics.recordRequest(method: "GET", route: "/v1/uploads/{id}", status: 200, seconds: 20)
        metrics.recordRequest(method: "BREW", route: "/v1/uploads/{id}", status: 405, seconds: 0.001)
        metrics.recordUploadAccepted(bytes: 1_000, seconds: 0.02)
        metrics.recordUploadAccepted(bytes: 2_500, seconds: 0.3)

        let parsed = try Parsed(metrics.render(catalog: catalog, spool: spool))
        checkWellFormed(parsed)
        let uploads = ["method": "POST", "route": "/v1/uploads"]
        #expect(parsed.value("darkroom_http_requests_total", uploads.merging(["status": "201"]) { $1 }) == 2)
        #expect(parsed.value("darkroom_http_requests_total", uploads.merging(["status": "413"]) { $1 }) == 1)
        #expect(parsed.value("darkroom_http_requests_total", ["method": "other", "route": "/v1/uploads/{id}", "status": "405"]) == 1)
        #expect(parsed.value("darkroom_http_request_duration_seconds_count", uploads) == 3)
        #expect(abs((parsed.value("darkroom_http_request_duration_seconds_sum", uploads) ?? 0) - 0.321) < 1e-9)
        let requestBuckets = Dictionary(uniqueKeysWithValues: parsed.buckets("darkroom_http_request_duration_seconds", uploads).map { ($0.le, $0.count) })
        #expect(requestBuckets[0.005] == 1 && requestBuckets[0.025] == 2 && requestBuckets[0.5] == 3 && requestBuckets[.infinity] == 3)
        let slow = parsed.buckets("darkroom_http_request_duration_seconds", ["method": "GET", "route": "/v1/uploads/{id}"])
        #expect(slow.last?.count == 1 && slow.dropLast().allSatisfy { $0.count == 0 }, "20 s falls only in +Inf")

        #expect(parsed.types["darkroom_upload_bytes_total"] == "counter")
        #expect(parsed.value("darkroom_upload_bytes_total") == 3_500)
        #expect(parsed.value("darkroom_upload_accept_duration_seconds_count") == 2)
        #expect(parsed.buckets("darkroom_upload_accept_duration_seconds").last?.count == 2)
    }

    @Test func labelValuesAreEscaped() throws {
        let (catalog, spool) = try open()
        let metrics = ServiceMetrics()
        let route = "/odd/\"quoted\"\\path\nnext"
        metrics.recordRequest(method: "GET", route: route, status: 404, seconds: 0.01)
        let text = metrics.render(catalog: catalog, spool: spool)
        #expect(text.contains(#"route="/odd/\"quoted\"\\path\nnext""#))
        let parsed = try Parsed(text)
        #expect(parsed.value("darkroom_http_requests_total", ["method": "GET", "route": route, "status": "404"]) == 1)
    }

    @Test func webhookDeliveriesAreReadFromTheCatalog() throws {
        let (catalog, spool) = try open()
        try catalog.write { db in
            for _ in 0..<2 {
                var event = OutboxEvent(event: .pictureAdded, momentId: nil, pictureId: 1, payload: "{}", createdAt: 1)
                try event.insert(db)
            }
            try db.execute(sql: """
                INSERT INTO webhook_deliveries (outbox_id, endpoint, attempts, next_attempt_at, delivered_at, last_status)
                VALUES (1, 'http://a/hook', 3, 1, 5, 200), (2, 'http://a/hook', 2, 9, NULL, 500)
                """)
        }
        let parsed = try Parsed(ServiceMetrics().render(catalog: catalog, spool: spool))
        checkWellFormed(parsed)
        #expect(parsed.types["darkroom_catalog_webhook_deliveries"] == "gauge")
        #expect(parsed.value("darkroom_catalog_webhook_deliveries", ["result": "delivered"]) == 1)
        #expect(parsed.value("darkroom_catalog_webhook_deliveries", ["result": "failed"]) == 4)
        #expect(parsed.value("darkroom_catalog_webhook_pending") == 1)
        #expect((parsed.value("darkroom_catalog_webhook_oldest_pending_seconds") ?? 0) > 0)
    }

    @Test func anUnreadableCatalogLeavesTheEndpointUp() throws {
        let (catalog, spool) = try open()
        try catalog.write { db in try db.execute(sql: "DROP TABLE jobs") }
        let metrics = ServiceMetrics()
        metrics.recordRequest(method: "GET", route: "/metrics", status: 200, seconds: 0.001)
        let parsed = try Parsed(metrics.render(catalog: catalog, spool: spool))
        checkWellFormed(parsed)
        #expect(parsed.value("darkroom_catalog_up") == 0)
        #expect(parsed.value("darkroom_catalog_jobs", ["outcome": "added"]) == nil)
        #expect(parsed.value("darkroom_http_requests_total", ["method": "GET", "route": "/metrics", "status": "200"]) == 1)
        #expect(parsed.value("darkroom_spool_files", ["state": "incoming"]) == 0)
    }

    @Test func jobsFailedBeforeCategoriesWereKeptAreCountedApart() throws {
        let (catalog, spool) = try open()
        try insert([job(.failed, seconds: 1, error: "JPEG data is corrupt"), job(.failed, seconds: 1, error: nil)], into: catalog)
        let parsed = try Parsed(ServiceMetrics().render(catalog: catalog, spool: spool))
        #expect(parsed.value("darkroom_catalog_jobs_failed", ["category": "unrecorded"]) == 2)
        #expect(parsed.value("darkroom_catalog_jobs_failed", ["category": "bad_input"]) == 0)
    }
}

/// Real runs of `darkroom run --once`: every job's duration is its own, and `/metrics` adds
/// them up as the catalog does.
@Suite("Photo durations")
struct PhotoDurationTests {
    @Test func everyJobOfARunHasADurationWithinTheRunAndMetricsAgree() throws {
        let root = NSTemporaryDirectory() + "darkroom-durations-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let incoming = root + "/spool/incoming"
        try FileManager.default.createDirectory(atPath: incoming, withIntermediateDirectories: true)
        let photo = try Samples.gpsPhoto()
        try Data(photo).write(to: URL(fileURLWithPath: incoming + "/a.jpg"))
        try Data(photo).write(to: URL(fileURLWithPath: incoming + "/again.jpg"))
        try Data(try Samples.hopper()).write(to: URL(fileURLWithPath: incoming + "/b.jpg"))
        try Data(photo.prefix(300)).write(to: URL(fileURLWithPath: incoming + "/broken.jpg"))
        let config = root + "/pipeline.json"
        try Data("""
            {"spool": {"root": "\(root)/spool", "settle_seconds": 0}, "library": {"root": "\(root)/library"},
             "catalog": {"path": "\(root)/catalog.sqlite"}, "worker": {"concurrency": 1}}
            """.utf8).write(to: URL(fileURLWithPath: config))

        let started = Date().timeIntervalSince1970
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ServeCommandTests.binary)
        process.arguments = ["run", "--once", "--no-progress", "--config", config]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitForExit()
        let length = (Date().timeIntervalSince1970 - started) * 1000
        #expect(process.terminationStatus == 1, "one photo failed")

        let catalog = try Catalog(path: root + "/catalog.sqlite")
        let jobs = try catalog.read { db in
            try Row.fetchAll(db, sql: "SELECT outcome, duration_ms FROM jobs").map { row -> (outcome: String, ms: Double?) in
                (row["outcome"], row["duration_ms"])
            }
        }
        #expect(Set(jobs.map(\.outcome)) == ["added", "duplicate", "failed"])
        for job in jobs {
            #expect(job.ms.map { $0 >= 0 && $0 <= length } == true, "\(job.outcome): \(job.ms ?? -1) ms within 0...\(length) ms")
        }
        let total = try catalog.read { db in try Double.fetchOne(db, sql: "SELECT SUM(duration_ms) FROM jobs") } ?? 0
        let spool = try Spool(root: root + "/spool", settleSeconds: 0)
        let parsed = try ServiceMetricsTests.Parsed(ServiceMetrics().render(catalog: catalog, spool: spool))
        let counted = parsed.samples.filter { $0.name == "darkroom_catalog_jobs" }.map(\.value).reduce(0, +)
        #expect(counted == Double(jobs.count))
        #expect(abs((parsed.value("darkroom_catalog_job_seconds") ?? -1) - total / 1000) < 1e-6)
        #expect(parsed.samples.contains { $0.name == "darkroom_build_info" && $0.labels["version"] != nil && $0.labels["commit"] != nil })
    }
}
