import Foundation

/// Counters the client keeps of its traffic, for metrics: HTTP requests by operation and
/// outcome (each send counts, retries included), bytes sent and received, retries, and the time
/// spent per operation. Safe to read from any thread while the client runs; read a `snapshot`.
public final class ObjectStorageStatistics: @unchecked Sendable {
    // @unchecked: every stored property is read and written under `lock` only.
    private let lock = NSLock()
    private var state = Snapshot()

    public init() {}

    /// How one send of a request ended.
    public enum Outcome: String, Sendable, CaseIterable, Codable, Comparable {
        /// A 2xx, or an answer the operation expects (404 for `head` and `delete`).
        case success
        /// Another 4xx.
        case clientError = "client_error"
        /// A 5xx.
        case serverError = "server_error"
        /// No answer (connection refused or broken, timeout).
        case transportError = "transport_error"

        public static func < (lhs: Outcome, rhs: Outcome) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// The counters at one moment.
    public struct Snapshot: Sendable, Equatable {
        /// Sends per operation and outcome.
        public var requests: [S3Operation: [Outcome: Int]] = [:]
        public var bytesSent: Int64 = 0
        public var bytesReceived: Int64 = 0
        /// Sends that were retries of a failed one.
        public var retries: Int = 0
        /// Seconds spent per operation, summed over its sends (from the send to the answer's head;
        /// a streamed body's time is not counted).
        public var durationSeconds: [S3Operation: Double] = [:]

        public init() {}

        /// Sends of `operation` that ended so.
        public func count(_ operation: S3Operation, _ outcome: Outcome) -> Int {
            requests[operation]?[outcome] ?? 0
        }

        /// Sends of every operation.
        public var totalRequests: Int { requests.values.reduce(0) { $0 + $1.values.reduce(0, +) } }
    }

    /// The counters now.
    public func snapshot() -> Snapshot {
        lock.withLock { state }
    }

    func recordRequest(_ operation: S3Operation, _ outcome: Outcome, seconds: Double) {
        lock.withLock {
            state.requests[operation, default: [:]][outcome, default: 0] += 1
            state.durationSeconds[operation, default: 0] += seconds
        }
    }

    func recordRetry() {
        lock.withLock { state.retries += 1 }
    }

    func addSent(_ bytes: Int) {
        guard bytes > 0 else { return }
        lock.withLock { state.bytesSent += Int64(bytes) }
    }

    func addReceived(_ bytes: Int) {
        guard bytes > 0 else { return }
        lock.withLock { state.bytesReceived += Int64(bytes) }
    }
}
