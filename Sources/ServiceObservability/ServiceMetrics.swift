import BucketStorage
import BuildInfo
import Catalog
import Failures
import Foundation
import Synchronization
import ObjectStorage
import Storage

/// The metrics of `darkroom serve` in the Prometheus text format, in two kinds that never mix:
/// - what this process did, as counters that a Prometheus `sum()` over several machines adds up
///   rightly: HTTP requests, uploads accepted, photos its workers processed, upload-to-done times,
///   requests to a bucket, and its own resources (`process_*`, from `/proc/self`);
/// - what the catalog says, shared by every process using it, as gauges whose names say so
///   (`darkroom_catalog_*`): read at scrape time, the same on every machine, so that `max()`
///   (never `sum()`) is their aggregate.
///
/// Written here rather than with swift-prometheus: the catalog's figures are read at scrape time
/// from SQL (the jobs counted incrementally by `JobTally`), which a registry of process-local
/// values does not model. The exposition format itself is a few lines (`Exposition` below).
public final class ServiceMetrics: Sendable {
    /// Bounds of the HTTP request duration histogram, in seconds (Prometheus' usual layout).
    static let requestBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    /// Bounds of the upload accept histogram, in seconds: uploads run to tens of megabytes.
    static let uploadBuckets: [Double] = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
    /// Bounds of the photo processing histogram, in seconds, up to the default photo timeout.
    static let photoBuckets: [Double] = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]
    /// Bounds of the upload-to-done histogram, in seconds: processing plus any wait in the queue.
    static let uploadDoneBuckets: [Double] = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600]
    /// Uploads whose acceptance is remembered, waiting for their outcome: past this, those
    /// accepted over an hour ago are forgotten (an upload left in `failed/`, or done elsewhere).
    static let acceptedUploadsKept = 65_536
    /// HTTP methods counted by name; any other is counted as `other`, so that a client cannot
    /// add series at will.
    static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    private let state = Mutex(State())
    /// The catalog's figures as last read, and when: shown, marked stale, while it cannot be read.
    private let lastCatalogFigures = Mutex<CatalogFigures?>(nil)
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

    /// One upload accepted into the spool (or, for a direct upload, completed into the queue);
    /// with its `id`, its outcome seen later by this process gives its upload-to-done time.
    public func recordUploadAccepted(bytes: Int, seconds: Double, id: String? = nil) {
        let now = ContinuousClock.now
        state.withLock { state in
            state.uploadsAccepted += 1
            state.uploadBytes += bytes
            state.uploadDurations.observe(seconds)
            guard let id else { return }
            if state.acceptedAt.count >= Self.acceptedUploadsKept {
                state.acceptedAt = state.acceptedAt.filter { now - $0.value < .seconds(3600) }
                if state.acceptedAt.count >= Self.acceptedUploadsKept { state.acceptedAt.removeAll() }
            }
            state.acceptedAt[id] = now
        }
    }

    /// One photo this process's workers finished: its outcome, the category of its failure and
    /// the seconds from claim to commit. (`HTTPService`'s `recordPhoto(sourceName:...)` also ends
    /// the upload the photo was: which spool names are uploads is its business.)
    package func recordPhoto(outcome: JobRecord.Outcome, failure: FailureCategory? = nil, seconds: Double) {
        state.withLock { state in
            state.photos[outcome, default: 0] += 1
            if outcome == .failed { state.photoFailures[failure?.rawValue ?? "", default: 0] += 1 }
            state.photoDurations.observe(seconds)
        }
    }

    /// Upload `id` is done, a duplicate or failed, as this process saw it (its workers finished
    /// it, or its status route answered its outcome): when this process accepted it, the time
    /// from then is observed once. Any other id is ignored.
    public func recordUploadEnded(id: String) {
        let now = ContinuousClock.now
        state.withLock { state in
            guard let accepted = state.acceptedAt.removeValue(forKey: id) else { return }
            state.uploadToDone.observe((now - accepted) / .seconds(1))
        }
    }

    /// The Prometheus text exposition (version 0.0.4): this process's counters and resources,
    /// the spool's depth, and the figures read from the catalog.
    /// With `catalogReachable` false (a database outage the process already knows of), the
    /// catalog is not asked: its last figures are shown, with their age, so a scrape never waits.
    /// With the library in a bucket, the requests this process made of it are counted too.
    public func render(catalog: any CatalogStore, spool: Spool, catalogReachable: Bool = true, library: (any BlobStore)? = nil) -> String {
        let snapshot = state.withLock { $0 }
        var out = Exposition()
        out.family("darkroom_build_info", .gauge, "The running build: its version and source commit, as `darkroom version` prints them.")
        out.sample("darkroom_build_info", ["version": BuildInfo.version, "commit": BuildInfo.commit], 1)
        ProcessFigures.current().render(into: &out)
        renderPhotos(snapshot, into: &out)
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

        out.family("darkroom_uploads_accepted_total", .counter, "Uploads this process accepted (202), direct uploads completed included.")
        out.sample("darkroom_uploads_accepted_total", [:], Double(snapshot.uploadsAccepted))
        out.family("darkroom_upload_bytes_total", .counter, "Bytes of uploads accepted into the spool by this process.")
        out.sample("darkroom_upload_bytes_total", [:], Double(snapshot.uploadBytes))
        out.family("darkroom_upload_accept_duration_seconds", .histogram, "Time this process took to accept an upload into the spool.")
        out.histogram("darkroom_upload_accept_duration_seconds", [:], snapshot.uploadDurations.rendered)
        out.family("darkroom_upload_to_done_seconds", .histogram,
                   "Time from an upload's acceptance by this process to its outcome (done, duplicate or failed) as this process saw it.")
        out.histogram("darkroom_upload_to_done_seconds", [:], snapshot.uploadToDone.rendered)
        if let bucket = library as? BucketLibrary { Self.renderStore(bucket.statistics.snapshot(), into: &out) }
        return out.text
    }

    /// The photos this process's workers finished: by outcome, failures by category, durations.
    private func renderPhotos(_ snapshot: State, into out: inout Exposition) {
        Self.renderOutcomes(snapshot.photos, failures: snapshot.photoFailures, kind: .counter,
                            as: ("darkroom_photos_processed_total", "Photos this process's workers finished, by outcome."),
                            ("darkroom_photos_failed_total", "Photos this process's workers failed, by the category their error carried."),
                            into: &out)
        out.family("darkroom_photo_duration_seconds", .histogram, "Time from claim to commit of each photo this process's workers finished, whatever its outcome.")
        out.histogram("darkroom_photo_duration_seconds", [:], snapshot.photoDurations.rendered)
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
    /// Every figure here is the whole catalog's, the same from every process sharing it: gauges.
    private func renderCatalog(_ catalog: any CatalogStore, reachable: Bool, into out: inout Exposition) {
        var figures: CatalogFigures?
        if reachable {
            figures = try? CatalogFigures(jobs: jobTally.figures(of: catalog), pictures: Self.pictureTotal(of: catalog),
                                          webhooks: catalog.webhookStatistics(now: Date()), at: Date())
        }
        if let figures { lastCatalogFigures.withLock { $0 = figures } }
        out.family("darkroom_catalog_up", .gauge, "Whether the catalog could be read for these metrics.")
        out.sample("darkroom_catalog_up", [:], figures == nil ? 0 : 1)
        guard let figures = figures ?? lastCatalogFigures.withLock({ $0 }) else { return }
        let jobs = figures.jobs, webhooks = figures.webhooks
        out.family("darkroom_catalog_figures_age_seconds", .gauge,
                   "Age of the catalog's figures below: 0 when read for this scrape, else those of the last scrape that could read them.")
        out.sample("darkroom_catalog_figures_age_seconds", [:], Date().timeIntervalSince(figures.at))

        out.family("darkroom_catalog_pictures", .gauge, "Pictures in the catalog (every process sharing it).")
        out.sample("darkroom_catalog_pictures", [:], Double(figures.pictures))
        Self.renderOutcomes(jobs.outcomes, failures: jobs.failureCategories, kind: .gauge,
                            as: ("darkroom_catalog_jobs", "Photos the catalog has finished, by every process sharing it, by outcome."),
                            ("darkroom_catalog_jobs_failed", "Photos failed in the catalog, by the category their error carried."),
                            into: &out)
        out.family("darkroom_catalog_job_seconds", .gauge,
                   "The catalog's finished photos' times from claim to commit, added up (divided by the sum of darkroom_catalog_jobs: the mean).")
        out.sample("darkroom_catalog_job_seconds", [:], jobs.durationSumMs / 1000)

        out.family("darkroom_catalog_webhook_deliveries", .gauge, "Webhook tries recorded in the catalog, one event to one endpoint each, by result.")
        out.sample("darkroom_catalog_webhook_deliveries", ["result": "delivered"], Double(webhooks.delivered))
        out.sample("darkroom_catalog_webhook_deliveries", ["result": "failed"], Double(webhooks.failedAttempts))
        out.family("darkroom_catalog_webhook_pending", .gauge, "Webhook deliveries not yet made, one event to one endpoint each.")
        out.sample("darkroom_catalog_webhook_pending", [:], Double(webhooks.pending))
        out.family("darkroom_catalog_webhook_oldest_pending_seconds", .gauge, "Age of the oldest event not yet delivered to an endpoint (0 when none).")
        out.sample("darkroom_catalog_webhook_oldest_pending_seconds", [:], webhooks.oldestPendingAge ?? 0)
    }

    /// Photos by outcome, then the failed ones by category: two families of `kind`, each given
    /// as its name and help. Failures with no category (jobs failed before categories were
    /// stored) are counted apart as `unrecorded`, never guessed from their text.
    static func renderOutcomes(_ outcomes: [JobRecord.Outcome: Int], failures: [String: Int], kind: Exposition.Kind,
                               as outcomeFamily: (name: String, help: String), _ failureFamily: (name: String, help: String),
                               into out: inout Exposition) {
        out.family(outcomeFamily.name, kind, outcomeFamily.help)
        for outcome in [JobRecord.Outcome.added, .duplicate, .failed] {
            out.sample(outcomeFamily.name, ["outcome": outcome.rawValue], Double(outcomes[outcome] ?? 0))
        }
        out.family(failureFamily.name, kind, failureFamily.help)
        for category in FailureCategory.allCases {
            out.sample(failureFamily.name, ["category": category.rawValue], Double(failures[category.rawValue] ?? 0))
        }
        if let unrecorded = failures[""], unrecorded > 0 {
            out.sample(failureFamily.name, ["category": "unrecorded"], Double(unrecorded))
        }
    }

    /// The catalog's pictures: one count of its pictures table (SQLite), else the store's counts.
    static func pictureTotal(of catalog: any CatalogStore) throws(CatalogError) -> Int {
        if let sqlite = catalog as? Catalog { return try sqlite.pictureTotal() }
        return try catalog.counts(now: Date()).pictures
    }
}

extension ServiceMetrics: ConnectionCutRecorder {
    /// One connection closed by the server before its client finished sending.
    package func recordConnectionCut(_ reason: ConnectionCut) {
        state.withLock { $0.connectionsCut[reason, default: 0] += 1 }
    }
}

extension ServiceMetrics {
    /// What this process counted, behind the mutex.
    struct State: Sendable {
        var requests: [RequestKey: Int] = [:]
        var requestDurations: [RouteKey: Histogram] = [:]
        var uploadsAccepted = 0
        var uploadBytes = 0
        var uploadDurations = Histogram(bounds: ServiceMetrics.uploadBuckets)
        var connectionsCut: [ConnectionCut: Int] = [:]
        /// Photos this process's workers finished, by outcome; failures by category ("": none given).
        var photos: [JobRecord.Outcome: Int] = [:]
        var photoFailures: [String: Int] = [:]
        var photoDurations = Histogram(bounds: ServiceMetrics.photoBuckets)
        /// When each upload accepted here and not yet seen ended was accepted.
        var acceptedAt: [String: ContinuousClock.Instant] = [:]
        var uploadToDone = Histogram(bounds: ServiceMetrics.uploadDoneBuckets)
    }

    /// The catalog's figures of one scrape.
    struct CatalogFigures: Sendable {
        var jobs: JobFigures
        var pictures: Int
        var webhooks: WebhookStatistics
        var at: Date
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
