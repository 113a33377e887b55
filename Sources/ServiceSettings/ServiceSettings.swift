import Foundation

/// How `darkroom serve` listens and what it accepts (the `server` section of `pipeline.json`).
public struct ServerSettings: Sendable, Equatable {
    /// The address to bind; loopback unless the operator opens it up.
    public var host: String
    /// The TCP port.
    public var port: Int
    /// The bearer token every request must carry; `DARKROOM_API_TOKEN` in the environment
    /// takes its place when this is null, so the secret need not live in a file.
    public var token: String?
    /// Uploads larger than this are refused with 413.
    public var maxUploadBytes: Int
    /// Where variant URLs point: null serves them under `/v1/media/`, a URL (such as
    /// `https://media.example.com/`) leaves them to a static server over the library root.
    public var mediaBaseURL: String?
    /// Whether `serve` also runs the spool workers in its own process.
    public var runWorkers: Bool
    /// Threads that write accepted uploads into the spool: each write waits for the disk
    /// (fsync), and writes in flight together share the file system's journal commits.
    public var uploadThreads: Int
    /// How much lower than the server's the spool workers' CPU priority is, as a `nice` step
    /// (0 to 19) for their threads alone: with both cores rendering, the threads that accept
    /// uploads and answer the API still run at once. 0 leaves the workers at the same priority.
    public var workerNiceness: Int
    /// Seconds a new connection has to send a whole request head (line and headers); one that
    /// sends nothing, or its headers a byte at a time, is closed after this.
    public var headerTimeoutSeconds: Double
    /// Seconds without a byte read after which a connection is closed: one left idle between
    /// requests, or a request body that stops arriving. A request being answered is not cut.
    public var idleTimeoutSeconds: Double
    /// Connections open at once; past this the server stops accepting (new ones wait in the
    /// kernel's queue) until one closes, so that slow clients cannot exhaust memory or files.
    public var maxConnections: Int
    /// Connections open at once from one client address; a connection past this is closed as
    /// soon as it is accepted, so that one client cannot take every connection.
    public var maxConnectionsPerClient: Int
    /// Connections the kernel holds for the server before it accepts them (the listen backlog,
    /// capped by `net.core.somaxconn`). A full queue drops a new client's connection attempt,
    /// which then waits a second or more to try again: many clients connecting at once fill a
    /// short one.
    public var listenBacklog: Int
    /// Seconds a whole request (its head and its body) may take to arrive; a request still
    /// arriving after this is cut, however steadily its bytes come. Answering is not bounded.
    public var requestDeadlineSeconds: Double
    /// The slowest a request body may arrive, in bytes per second on average, once
    /// `minRateGraceSeconds` have passed; 0 turns the check off. Only time the server spends
    /// waiting for the client counts, never time it spends writing what it has read.
    public var minBytesPerSecond: Int
    /// Seconds of a request body during which no minimum rate applies (a slow start).
    public var minRateGraceSeconds: Double
    /// On a stop (SIGTERM), seconds a client still sending a request is given to finish it
    /// before its connection is cut; requests already received are answered in any case.
    public var stopGraceSeconds: Double
    /// `GET /v1/uploads/{id}?wait=` requests waiting at once; past this, one is answered at
    /// once with the upload's state, as if its wait had run out.
    public var maxStatusWaiters: Int
    /// The address of the admin listener (health, readiness, metrics, without a token).
    public var adminHost: String
    /// The admin listener's port: null for `port` + 1 (any free port when `port` is 0), 0 for
    /// no admin listener.
    public var adminPort: Int?

    /// The defaults, identical to the bundled `pipeline.json`.
    public static let defaults = ServerSettings(
        host: "127.0.0.1", port: 8470, token: nil, maxUploadBytes: 64 << 20, mediaBaseURL: nil, runWorkers: true,
        uploadThreads: 16, workerNiceness: 10, headerTimeoutSeconds: 10, idleTimeoutSeconds: 30, maxConnections: 1024,
        maxConnectionsPerClient: 256, listenBacklog: 4096, requestDeadlineSeconds: 300, minBytesPerSecond: 1024, minRateGraceSeconds: 10,
        stopGraceSeconds: 10, maxStatusWaiters: 1024, adminHost: "127.0.0.1", adminPort: nil)

    /// Where the admin listener is bound: nil when it is off (`admin_port` 0). `port` is the
    /// main listener's bound port (the one chosen when `server.port` is 0).
    public func adminAddress(mainPort: Int) -> (host: String, port: Int)? {
        switch adminPort {
        case 0?: nil
        case let port?: (adminHost, port)
        case nil: (adminHost, port == 0 || mainPort >= Int(UInt16.max) ? 0 : mainPort + 1)
        }
    }

    /// The token to require: the configured one, else `DARKROOM_API_TOKEN`; nil when neither is set.
    public func resolvedToken(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let token, !token.isEmpty { return token }
        if let token = environment["DARKROOM_API_TOKEN"], !token.isEmpty { return token }
        return nil
    }
}

/// Where the outbox's events are delivered (the `webhooks` section of `pipeline.json`).
public struct WebhookSettings: Sendable, Equatable {
    /// Endpoints that receive every event as an HTTP POST; empty turns delivery off.
    public var urls: [String]
    /// The HMAC-SHA256 key that signs each body; `DARKROOM_WEBHOOK_SECRET` takes its place
    /// when this is null.
    public var secret: String?
    /// Seconds to wait for an endpoint's answer.
    public var timeoutSeconds: Double
    /// First retry delay after a failed delivery; it doubles at each try up to `retryMaxSeconds`.
    public var retryBaseSeconds: Double
    /// The longest delay between two tries of one event.
    public var retryMaxSeconds: Double
    /// Seconds between looks at the outbox when nothing is pending.
    public var pollIntervalSeconds: Double

    /// The defaults, identical to the bundled `pipeline.json`.
    public static let defaults = WebhookSettings(
        urls: [], secret: nil, timeoutSeconds: 10, retryBaseSeconds: 1, retryMaxSeconds: 300, pollIntervalSeconds: 1)

    /// The signing key: the configured one, else `DARKROOM_WEBHOOK_SECRET`; nil when neither is set.
    public func resolvedSecret(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let secret, !secret.isEmpty { return secret }
        if let secret = environment["DARKROOM_WEBHOOK_SECRET"], !secret.isEmpty { return secret }
        return nil
    }
}
