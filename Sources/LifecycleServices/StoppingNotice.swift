import ServiceLifecycle
import Terminal

/// Tells the service manager `STOPPING=1` as soon as a graceful shutdown begins, while the
/// server still answers the requests in flight and the workers finish the photos in hand.
public struct StoppingNotice: Service {
    public init() {}

    public func run() async throws {
        try? await gracefulShutdown()
        ServiceManager.notify("STOPPING=1")
    }
}
