import ConnectionDefences
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// The admin listener could not be bound.
struct AdminListenError: Error {
    let address: String
    let underlying: IOError
}

/// The admin listener (`server.admin_host`, `server.admin_port`): `/healthz`, `/healthz/ready`
/// and `/metrics`, without a token, for a service manager's probe or a Prometheus scrape.
///
/// It has its own event loop thread, runs its requests there (not on the concurrency pool the
/// main port's requests share), and its own thread for blocking work (metrics; readiness runs
/// its checks on `ReadinessProbes`, bounded in time), so that clients of the main port, however
/// many or slow, cannot starve it. It starts once the
/// main port is bound (its default port is that one + 1) and stops after the main listener.
final class AdminListener: Service, Sendable {
    private let server: APIServer
    private let onListening: @Sendable (_ port: Int) async -> Void
    private let ports: AsyncStream<Int>
    private let bound: AsyncStream<Int>.Continuation

    /// Connections the admin listener keeps open at once.
    static let maxConnections = 64

    init(server: APIServer, onListening: @escaping @Sendable (_ port: Int) async -> Void) {
        self.server = server
        self.onListening = onListening
        (ports, bound) = AsyncStream.makeStream(of: Int.self)
    }

    /// The main listener is bound to `port`.
    func mainPortBound(_ port: Int) {
        bound.yield(port)
        bound.finish()
    }

    func run() async throws {
        let ports = ports
        let mainPort: Int? = await cancelWhenGracefulShutdown { () async -> Int? in
            var iterator = ports.makeAsyncIterator()
            return await iterator.next()
        }
        let settings = server.configuration.server
        guard let mainPort, let address = settings.adminAddress(mainPort: mainPort) else {
            // No admin listener: wait for the stop like the other services.
            try? await gracefulShutdown()
            return
        }
        let (host, port) = address
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let executor = EventLoopTaskExecutor(group.next())
        var own = server.environment
        own.threadPool = pool
        own.executor = executor
        let environment = own
        let http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [RequestHeadTimeoutHandler(timeout: .fromSeconds(settings.headerTimeoutSeconds))],
            idleTimeout: .fromSeconds(settings.idleTimeoutSeconds))
        let (onListening, server) = (onListening, self.server)
        let application = Application(
            router: Self.router(environment: environment),
            server: .http1(configuration: http),
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port), serverName: "darkroom",
                availableConnectionsDelegate: MaximumAvailableConnections(Self.maxConnections, logger: environment.logger)),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                server.adminBound.withLock { $0 = bound }
                environment.logger.info("admin listener", metadata: ["address": "http://\(host):\(bound)", "admin_port": "\(bound)"])
                await onListening(bound)
            },
            eventLoopGroupProvider: .shared(group),
            logger: environment.logger)
        defer {
            pool.shutdownGracefully { _ in }
            group.shutdownGracefully { _ in }
        }
        do {
            try await withTaskExecutorPreference(executor) {
                try await application.run()
            }
        } catch let error as IOError {
            throw AdminListenError(address: "\(host):\(port)", underlying: error)
        }
    }

    /// The admin routes, without a token, behind the JSON errors.
    static func router(environment: ServiceEnvironment) -> Router<ServiceRequestContext> {
        let router = Router(context: ServiceRequestContext.self)
        router.add(middleware: ErrorBodyMiddleware(logger: environment.logger, redaction: environment.redaction, routes: APIRoute.admin))
        let dispatcher = APIDispatcher(environment: environment)
        for route in APIRoute.admin {
            router.on(RouterPath(route.path), method: route.method) { request, context in
                try await dispatcher.respond(to: route, request, context)
            }
        }
        return router
    }
}

extension TimeAmount {
    /// A time amount of `seconds` (a setting's value).
    static func fromSeconds(_ seconds: Double) -> TimeAmount {
        .nanoseconds(Int64(seconds * 1e9))
    }
}
