import Catalog
import ConnectionDefences
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import ServiceObservability
import Synchronization
import Webhooks
import Ingest
import LifecycleServices
import Settings
import Storage
import Terminal

/// Why `darkroom serve` cannot start.
public enum ServeError: Error, CustomStringConvertible, Sendable, Equatable {
    /// No bearer token is configured: the API is never served open.
    case noToken
    /// The spool, library or catalog cannot be opened.
    case cannotOpen(String)
    /// The address cannot be listened on (taken, or not this machine's).
    case cannotListen(address: String, reason: String)
    /// The webhooks cannot be delivered as configured.
    case webhooks(String)

    /// One line: what is missing and what to do.
    public var description: String {
        switch self {
        case .noToken: "no API token: set server.token in pipeline.json or DARKROOM_API_TOKEN in the environment"
        case .cannotOpen(let reason): "cannot open the spool, library or catalog: \(reason)"
        case .cannotListen(let address, let reason):
            "cannot listen on \(address): \(reason); set server.host and server.port (or --host and --port) to a free address"
        case .webhooks(let reason): "webhooks: \(reason)"
        }
    }
}

/// `darkroom serve`: the backend's upload hook and read API over HTTP, with the spool
/// workers in the same process or beside it.
///
/// Uploads are written into the spool the safe way and answered at once (202); the workers
/// process them as any other photo, and `GET /v1/uploads/{id}` follows each one to its picture.
/// Every route is in `APIRoute` and documented in `openapi.json`; every request needs the bearer
/// token. Blocking work (fsync, SQLite) runs on a thread pool, never on an event loop.
public final class APIServer: Sendable {
    /// The configuration served.
    public let configuration: Configuration
    let environment: ServiceEnvironment
    let token: String
    let worker: Worker?
    /// Delivers the outbox to `webhooks.urls`; nil when none is configured.
    let dispatcher: WebhookDispatcher?
    /// The connections open on the main port, by client address.
    let clients: ClientConnections
    /// The admin listener's bound port, once it listens.
    let adminBound = Mutex<Int?>(nil)

    /// The port of the admin listener (`server.admin_port`) once it listens; nil before, and
    /// when it is off.
    public var adminPort: Int? { adminBound.withLock { $0 } }

    /// Opens the spool, library and SQLite catalog of `configuration` (and the workers, with
    /// `runWorkers`). Throws `ServeError.noToken` when neither `server.token` nor
    /// `DARKROOM_API_TOKEN` gives a token.
    public convenience init(configuration: Configuration, runWorkers: Bool, logger: Logger,
                            environment variables: [String: String] = ProcessInfo.processInfo.environment) throws(ServeError) {
        let catalog: Catalog
        do {
            catalog = try Catalog(path: configuration.catalogPath, momentRules: configuration.moments)
        } catch {
            throw .cannotOpen("\(error)")
        }
        try self.init(configuration: configuration, catalog: catalog, jobs: nil, runWorkers: runWorkers, logger: logger,
                      environment: variables)
    }

    /// Serves a catalog already open, SQLite or PostgreSQL. With `jobs` (a catalog several
    /// machines share), an accepted upload becomes a job of that queue at once, and the
    /// workers claim from it.
    /// `library`: where originals and variants are (a bucket); nil: the directory at `library.root`.
    /// `staging`: where queued photos wait for any machine when no directory is shared (a
    /// bucket's staging area, with `library` in that bucket).
    public init(configuration: Configuration, catalog: any CatalogStore, jobs: (any PhotoJobQueue)?, runWorkers: Bool,
                library: (any BlobStore)? = nil, staging: (any QueuedStaging)? = nil,
                logger: Logger, environment variables: [String: String] = ProcessInfo.processInfo.environment) throws(ServeError) {
        guard let token = configuration.server.resolvedToken(environment: variables) else { throw .noToken }
        self.configuration = configuration
        self.token = token
        let metrics = ServiceMetrics()
        let spool: Spool
        let store: any BlobStore
        do {
            var opened = try Spool(root: configuration.spoolRoot, settleSeconds: configuration.settleSeconds)
            opened.staging = staging
            spool = opened
            store = try library ?? Library(root: configuration.libraryRoot, backupRoot: configuration.backupDir)
            worker = runWorkers
                ? Worker(configuration: configuration, spool: spool, library: store, catalog: catalog, jobs: jobs, logger: logger,
                         onPhoto: { metrics.recordPhoto(sourceName: $0, outcome: $1, failure: $2, seconds: $3) })
                : nil
        } catch {
            throw .cannotOpen("\(error)")
        }
        // The database's probe starts now, not at the first request that asks.
        _ = jobs?.availability
        var handOff: (@Sendable (String) -> Void)?
        if let inProcess = worker { handOff = { name in inProcess.handOff(name) } }
        environment = ServiceEnvironment(configuration: configuration, spool: spool, catalog: catalog, jobs: jobs, library: store,
                                         metrics: metrics,
                                         threadPool: .singleton,
                                         uploadWriters: NIOThreadPool(numberOfThreads: configuration.server.uploadThreads),
                                         logger: logger, redaction: Redaction(configuration: configuration),
                                         handOff: handOff, waiters: UploadWaiters(limit: configuration.server.maxStatusWaiters))
        clients = ClientConnections(limit: configuration.server.maxConnectionsPerClient)
        do {
            dispatcher = configuration.webhooks.urls.isEmpty ? nil
                : try WebhookDispatcher(settings: configuration.webhooks, catalog: catalog, logger: logger, environment: variables)
        } catch {
            throw .webhooks(error.description)
        }
    }

    /// Serves until SIGTERM or SIGINT, then stops accepting, answers the requests in flight,
    /// finishes the photos in hand and returns. `onListening` is told the bound port (useful
    /// with `server.port` 0), `onAdminListening` the admin listener's.
    public func run(onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in },
                    onAdminListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }) async throws {
        let group = serviceGroup(onListening: onListening, onAdminListening: onAdminListening)
        // Caught from here on, before the server listens and says it is ready.
        let signals = StopSignals { Task { await group.triggerGracefulShutdown() } }
        defer { signals.cancel() }
        do {
            try await group.run()
        } catch let error as AdminListenError {
            throw ServeError.cannotListen(address: error.address, reason: String(cString: strerror(error.underlying.errnoCode)))
        } catch let error as IOError {
            let settings = configuration.server
            throw ServeError.cannotListen(address: "\(settings.host):\(settings.port)", reason: String(cString: strerror(error.errnoCode)))
        }
    }

    /// What bounds a request's arrival on the main port.
    var arrivalLimits: ArrivalLimits {
        let settings = configuration.server
        return ArrivalLimits(deadline: .fromSeconds(settings.requestDeadlineSeconds), minBytesPerSecond: settings.minBytesPerSecond,
                             grace: .fromSeconds(settings.minRateGraceSeconds), stopGrace: .fromSeconds(settings.stopGraceSeconds))
    }

    /// The server and the workers as one group: on a graceful shutdown the server stops first,
    /// then the workers.
    func serviceGroup(onListening: @escaping @Sendable (_ port: Int) async -> Void,
                      onAdminListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }) -> ServiceGroup {
        let settings = configuration.server
        let (environment, clients, limits) = (environment, clients, arrivalLimits)
        let http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [
                ClientConnectionLimit(connections: clients, logger: environment.logger, metrics: environment.metrics),
                RequestHeadTimeoutHandler(timeout: .fromSeconds(settings.headerTimeoutSeconds)),
                ConnectionGuard(limits: limits, logger: environment.logger, metrics: environment.metrics),
            ],
            idleTimeout: .fromSeconds(settings.idleTimeoutSeconds))
        // The admin listener starts once the main port is bound: its default port is the main one's + 1.
        let admin = AdminListener(server: self, onListening: onAdminListening)
        let application = Application(
            router: makeRouter(),
            server: .http1(configuration: http),
            configuration: ApplicationConfiguration(
                address: .hostname(settings.host, port: settings.port), serverName: "darkroom", backlog: settings.listenBacklog,
                availableConnectionsDelegate: MaximumAvailableConnections(settings.maxConnections, logger: environment.logger)),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? settings.port
                await onListening(port)
                admin.mainPortBound(port)
            },
            logger: environment.logger)
        // First in the list, so stopped last: after the server has answered its last upload.
        environment.uploadWriters.start()
        environment.probes.pool.start()
        var services: [any Service] = [ThreadPoolService(pool: environment.uploadWriters), ThreadPoolService(pool: environment.probes.pool, waits: false)]
        // The dispatcher comes before the workers in this list, so that it stops after them
        // (a group stops its services in reverse order); what it has not delivered by then is
        // delivered at the next start.
        if let dispatcher { services.append(WebhookService(dispatcher: dispatcher, logger: environment.logger)) }
        if let worker { services.append(WorkerService(worker: worker, logger: environment.logger)) }
        services.append(admin)
        services.append(application)
        // Last, so told first when a shutdown starts: the service manager learns at once.
        // A stop during an outage of the database: the statements waiting on it fail now rather
        // than at their deadlines, so that the requests and photos in hand end at once. The
        // status requests waiting for an outcome answer now.
        let jobs = environment.jobs
        let watcher = SpoolOutcomeWatcher(spoolRoot: configuration.spoolRoot, waiters: environment.waiters)
        watcher.start()
        if let jobs { environment.waiters.follow(jobs) }
        services.append(StoppingNotice(onStopping: {
            environment.waiters.stop()
            watcher.stop()
            if let jobs, jobs.availability.outage != nil { jobs.interruptWaits() }
        }))
        return ServiceGroup(services: services, gracefulShutdownSignals: [], logger: environment.logger)
    }

    /// Every route of `APIRoute`, behind the metrics, the JSON errors and the token, in that order.
    func makeRouter() -> Router<ServiceRequestContext> {
        let router = Router(context: ServiceRequestContext.self)
        router.add(middleware: RequestMetricsMiddleware(metrics: environment.metrics))
        router.add(middleware: ErrorBodyMiddleware(logger: environment.logger, redaction: environment.redaction))
        router.add(middleware: BearerAuthMiddleware(token: token, open: APIRoute.open))
        let dispatcher = APIDispatcher(environment: environment)
        for route in APIRoute.allCases {
            router.on(RouterPath(route.path), method: route.method) { request, context in
                try await dispatcher.respond(to: route, request, context)
            }
        }
        return router
    }
}
