/// Why the server closed a connection that had not finished sending: the `reason` label of
/// `darkroom_http_connections_cut_total`.
package enum ConnectionCut: String, CaseIterable, Sendable {
    /// Past `server.max_connections_per_client`, closed as soon as accepted.
    case perClient = "per_client"
    /// A request still arriving after `server.request_deadline_seconds`.
    case deadline
    /// A body slower than `server.min_bytes_per_second`.
    case rate
    /// Still sending after `server.stop_grace_seconds` of a stop.
    case stop
}

/// What the connection defences (`ConnectionDefences`) report to: each connection they cut, by
/// reason. All they need of the metrics; `ServiceMetrics` conforms.
package protocol ConnectionCutRecorder: Sendable {
    /// One connection closed by the server before its client finished sending.
    func recordConnectionCut(_ reason: ConnectionCut)
}
