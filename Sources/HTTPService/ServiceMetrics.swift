import BucketStorage
import BuildInfo
import Catalog
import Failures
import Foundation
import Synchronization
import Webhooks
import Ingest
import ObjectStorage
import Storage

/// The metrics of `darkroom serve` in the Prometheus text format: what this process
/// counted (HTTP requests, uploads) and what the catalog and spool say (photos processed by
/// every process sharing them, queue depth, webhook deliveries).
///
/// Written here rather than with swift-prometheus: most figures are not this process's
/// counters but the catalog's, read at scrape time so that every worker sharing the catalog is
/// counted, and the photo duration histogram's buckets come cumulative from one SQL query.
/// swift-prometheus's histograms only record observations one by one, and its registry holds
/// process-local values, so it would need every job replayed into it at start and could not
/// show other processes' work. The exposition format itself is a few lines (`Exposition` below).
public final class ServiceMetrics: Sendable {
    /// Bounds of the HTTP request duration histogram, in seconds (Prometheus' usual layout).
    static let requestBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    /// Bounds of the upload accept histogram, in seconds: uploads run to tens of megabytes.
    static let uploadBuckets: [Double] = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
    /// Bounds of the photo processing histogram, in seconds, up to the default photo timeout.
    static let photoBuckets: [Double] = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]
    /// HTTP methods counted by name; any other is counted as `other`, so that a client cannot
    /// add series at will.
    static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    private let state = Mutex(State())
    /// The catalog's figures as last read, and when: shown, marked stale, while it cannot be read.
    private let lastCatalogFigures = Mutex<(jobs: JobFigures, webhooks: WebhookStatistics, at: Date)?>(nil)
    /// The catalog's jobs, counted as they are added rather than whole at every scrape.
    private let jobTally = JobTally(durationBoundsMs: ServiceMetrics.photoBuckets.map { $0 * 1000 })

    /// Metrics with every count at zero.
    public init() {}

    /// One finished HTTP request; route is the route pattern (e.g. "/v1/uploads/{id}"), never the raw path.
    public func recordRequest(method: String, route: String, status: Int, seconds: Double) {
        let method = Self.knownMethods.contains(method.uppercased()) ? method.uppercased() : "other"
        state.withLock { state in
            state.requests[RequestKey(method: method, route: route, status: status), default: 0] += 1
            state.requestDurations[RouteKey(method: method, route: route), default: Histogram(bounds: Self.requestBuckets)]
                .observe(seconds)
        }
    }

    /// One upload accepted into the spool.
    public func recordUploadAccepted(bytes: Int, seconds: Double) {
        state.withLock { state in
            state.uploadBytes += bytes
            state.uploadDurations.observe(seconds)
        }
    }

    /// The Prometheus text exposition (version 0.0.4): these counters plus figures read from the catalog and spool.
    /// With `catalogReachable` false (a database outage the process already knows of), the
    /// catalog is not asked: its last figures are shown, with their age, so a scrape never waits.
    /// With the library in a bucket, the requests this process made of it are counted too.
    public func render(catalog: any CatalogStore, spool: Spool, catalogReachable: Bool = true, library: (any BlobStore)? = nil) -> String {
        let snapshot = state.withLock { $0 }
        var out = Exposition()
        out.family("darkroom_build_info", .gauge, "The running build: its version and source commit, as `darkroom version` prints them.")
        out.sample("darkroom_build_info", ["version": BuildInfo.version, "commit": BuildInfo.commit], 1)
        renderCatalog(catalog, reachable: catalogReachable, into: &out)

        let depth = spool.depth()
        out.family("darkroom_spool_files", .gauge, "Files in the spool, by area.")
        out.sample("darkroom_spool_files", ["state": "incoming"], Double(depth.incoming))
        out.sample("darkroom_spool_files", ["state": "processing"], Double(depth.processing))
        out.sample("darkroom_spool_files", ["state": "failed"], Double(depth.failed))

        out.family("darkroom_http_requests_total", .counter, "HTTP requests answered by this process, by method, route pattern and status.")
        for (key, count) in snapshot.requests.sorted(by: { $0.key < $1.key }) {
            out.sample("darkroom_http_requests_total", ["method": key.method, "route": key.route, "status": String(key.status)], Double(count))
        }
        out.family("darkroom_http_request_duration_seconds", .histogram, "Time to answer an HTTP request, by method and route pattern.")
        for (key, histogram) in snapshot.requestDurations.sorted(by: { $0.key < $1.key }) {
            out.histogram("darkroom_http_request_duration_seconds", ["method": key.method, "route": key.route], histogram.rendered)
        }

        out.family("darkroom_http_connections_cut_total", .counter,
                   "Connections this process closed before their client finished sending, by reason.")
        for reason in ConnectionCut.allCases {
            out.sample("darkroom_http_connections_cut_total", ["reason": reason.rawValue], Double(snapshot.connectionsCut[reason] ?? 0))
        }

        out.family("darkroom_upload_bytes_total", .counter, "Bytes of uploads accepted into the spool by this process.")
        out.sample("darkroom_upload_bytes_total", [:], Double(snapshot.uploadBytes))
        out.family("darkroom_upload_accept_duration_seconds", .histogram, "Time to accept an upload into the spool.")
        out.histogram("darkroom_upload_accept_duration_seconds", [:], snapshot.uploadDurations.rendered)
        if let bucket = library as? BucketLibrary { Self.renderStore(bucket.statistics.snapshot(), into: &out) }
        return out.text
    }

    /// The requests this process made of the library's bucket: by operation and outcome, their
    /// time, the bytes each way and the retries.
    static func renderStore(_ store: ObjectStorageStatistics.Snapshot, into out: inout Exposition) {
        out.family("darkroom_store_requests_total", .counter, "Requests this process sent to the library's bucket, by operation and outcome (retries included).")
        for operation in store.requests.keys.sorted() {
            for outcome in ObjectStorageStatistics.Outcome.allCases {
                out.sample("darkroom_store_requests_total", ["operation": operation.rawValue, "outcome": outcome.rawValue],
                           Double(store.count(operation, outcome)))
            }
        }
        out.family("darkroom_store_request_seconds_total", .counter, "Seconds this process's requests to the bucket took, by operation.")
        for operation in store.durationSeconds.keys.sorted() {
            out.sample("darkroom_store_request_seconds_total", ["operation": operation.rawValue], store.durationSeconds[operation] ?? 0)
        }
        out.family("darkroom_store_bytes_total", .counter, "Bytes this process sent to and received from the bucket.")
        out.sample("darkroom_store_bytes_total", ["direction": "sent"], Double(store.bytesSent))
        out.sample("darkroom_store_bytes_total", ["direction": "received"], Double(store.bytesReceived))
        out.family("darkroom_store_retries_total", .counter, "Requests to the bucket sent again after a transient failure.")
        out.sample("darkroom_store_retries_total", [:], Double(store.retries))
    }

    /// The figures read from the catalog; when it cannot be read, `darkroom_catalog_up 0` and the
    /// last figures read, if any, with `darkroom_catalog_figures_age_seconds` saying how old they are.
    private func renderCatalog(_ catalog: any CatalogStore, reachable: Bool, into out: inout Exposition) {
        var figures: (jobs: JobFigures, webhooks: WebhookStatistics, at: Date)?
        if reachable {
            figures = try? (jobTally.figures(of: catalog), catalog.webhookStatistics(now: Date()), Date())
        }
        if let figures { lastCatalogFigures.withLock { $0 = figures } }
        out.family("darkroom_catalog_up", .gauge, "Whether the catalog could be read for these metrics.")
        out.sample("darkroom_catalog_up", [:], figures == nil ? 0 : 1)
        guard let (jobs, webhooks, at) = figures ?? lastCatalogFigures.withLock({ $0 }) else { return }
        out.family("darkroom_catalog_figures_age_seconds", .gauge,
                   "Age of the catalog's figures below: 0 when read for this scrape, else those of the last scrape that could read them.")
        out.sample("darkroom_catalog_figures_age_seconds", [:], Date().timeIntervalSince(at))

        out.family("darkroom_photos_processed_total", .counter, "Photos processed by every process sharing the catalog, by outcome.")
        for outcome in [JobRecord.Outcome.added, .duplicate, .failed] {
            out.sample("darkroom_photos_processed_total", ["outcome": outcome.rawValue], Double(jobs.outcomes[outcome] ?? 0))
        }
        out.family("darkroom_photos_failed_total", .counter, "Photos that failed, by the category their error carried.")
        for category in FailureCategory.allCases {
            out.sample("darkroom_photos_failed_total", ["category": category.rawValue],
                       Double(jobs.failureCategories[category.rawValue] ?? 0))
        }
        // Jobs failed before categories were stored: counted apart, never guessed from their text.
        if let unrecorded = jobs.failureCategories[""], unrecorded > 0 {
            out.sample("darkroom_photos_failed_total", ["category": "unrecorded"], Double(unrecorded))
        }
        out.family("darkroom_photo_duration_seconds", .histogram, "Time from claim to commit of each photo, whatever its outcome.")
        out.histogram("darkroom_photo_duration_seconds", [:], RenderedHistogram(
            bounds: Self.photoBuckets, cumulative: jobs.durationBuckets, count: jobs.count, sum: jobs.durationSumMs / 1000))

        out.family("darkroom_webhook_deliveries_total", .counter, "Webhook tries, one event to one endpoint each, by result.")
        out.sample("darkroom_webhook_deliveries_total", ["result": "delivered"], Double(webhooks.delivered))
        out.sample("darkroom_webhook_deliveries_total", ["result": "failed"], Double(webhooks.failedAttempts))
        out.family("darkroom_webhook_pending", .gauge, "Webhook deliveries not yet made, one event to one endpoint each.")
        out.sample("darkroom_webhook_pending", [:], Double(webhooks.pending))
        out.family("darkroom_webhook_oldest_pending_seconds", .gauge, "Age of the oldest event not yet delivered to an endpoint (0 when none).")
        out.sample("darkroom_webhook_oldest_pending_seconds", [:], webhooks.oldestPendingAge ?? 0)
    }
}

extension ServiceMetrics {
    /// What this process counted, behind the mutex.
    struct State: Sendable {
        var requests: [RequestKey: Int] = [:]
        var requestDurations: [RouteKey: Histogram] = [:]
        var uploadBytes = 0
        var uploadDurations = Histogram(bounds: ServiceMetrics.uploadBuckets)
        var connectionsCut: [ConnectionCut: Int] = [:]
    }

    /// Why the server closed a connection that had not finished sending.
    enum ConnectionCut: String, CaseIterable, Sendable {
        /// Past `server.max_connections_per_client`, closed as soon as accepted.
        case perClient = "per_client"
        /// A request still arriving after `server.request_deadline_seconds`.
        case deadline
        /// A body slower than `server.min_bytes_per_second`.
        case rate
        /// Still sending after `server.stop_grace_seconds` of a stop.
        case stop
    }

    /// One connection closed by the server before its client finished sending.
    func recordConnectionCut(_ reason: ConnectionCut) {
        state.withLock { $0.connectionsCut[reason, default: 0] += 1 }
    }

    struct RequestKey: Hashable, Comparable, Sendable {
        var method: String
        var route: String
        var status: Int

        static func < (a: Self, b: Self) -> Bool { (a.route, a.method, a.status) < (b.route, b.method, b.status) }
    }

    struct RouteKey: Hashable, Comparable, Sendable {
        var method: String
        var route: String

        static func < (a: Self, b: Self) -> Bool { (a.route, a.method) < (b.route, b.method) }
    }

    /// Observations counted into buckets with upper bounds `bounds`.
    struct Histogram: Sendable {
        let bounds: [Double]
        private(set) var counts: [Int]
        private(set) var count = 0
        private(set) var sum = 0.0

        init(bounds: [Double]) {
            self.bounds = bounds
            counts = Array(repeating: 0, count: bounds.count)
        }

        mutating func observe(_ value: Double) {
            if let index = bounds.firstIndex(where: { value <= $0 }) { counts[index] += 1 }
            count += 1
            sum += value
        }

        var rendered: RenderedHistogram {
            var running = 0
            return RenderedHistogram(bounds: bounds, cumulative: counts.map { running += $0; return running }, count: count, sum: sum)
        }
    }

    /// A histogram as exposed: cumulative counts per bound; `+Inf` is the count.
    struct RenderedHistogram {
        var bounds: [Double]
        var cumulative: [Int]
        var count: Int
        var sum: Double
    }

    /// The text exposition format, version 0.0.4.
    struct Exposition {
        enum Kind: String { case counter, gauge, histogram }

        private(set) var text = ""

        mutating func family(_ name: String, _ kind: Kind, _ help: String) {
            let escaped = help.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
            text += "# HELP \(name) \(escaped)\n# TYPE \(name) \(kind.rawValue)\n"
        }

        mutating func sample(_ name: String, _ labels: KeyValuePairs<String, String>, _ value: Double) {
            sample(name, labels.map { ($0.key, $0.value) }, value)
        }

        mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Double) {
            let set = labels.isEmpty ? "" : "{" + labels.map { "\($0.0)=\"\(Self.escape($0.1))\"" }.joined(separator: ",") + "}"
            text += "\(name)\(set) \(Self.number(value))\n"
        }

        mutating func histogram(_ name: String, _ labels: KeyValuePairs<String, String>, _ histogram: RenderedHistogram) {
            let base = labels.map { ($0.key, $0.value) }
            for (bound, count) in zip(histogram.bounds, histogram.cumulative) {
                sample(name + "_bucket", base + [("le", Self.number(bound))], Double(count))
            }
            sample(name + "_bucket", base + [("le", "+Inf")], Double(histogram.count))
            sample(name + "_sum", base, histogram.sum)
            sample(name + "_count", base, Double(histogram.count))
        }

        /// A label value with backslash, double quote and line feed escaped.
        static func escape(_ value: String) -> String {
            value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                .replacingOccurrences(of: "\n", with: "\\n")
        }

        /// A sample value: whole numbers without a fraction, infinities as Prometheus spells them.
        static func number(_ value: Double) -> String {
            if value.isNaN { return "NaN" }
            if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
            if let whole = Int64(exactly: value) { return String(whole) }
            return String(value)
        }
    }
}
