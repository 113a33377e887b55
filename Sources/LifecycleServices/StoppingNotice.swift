import ServiceLifecycle
import Terminal

/// Tells the service manager `STOPPING=1` as soon as a graceful shutdown begins, while the
/// server still answers the requests in flight and the workers finish the photos in hand; and
/// runs `onStopping` then (what should not wait for the other services' ends).
public struct StoppingNotice: Service {
    let onStopping: @Sendable () -> Void

    public init(onStopping: @escaping @Sendable () -> Void = {}) {
        self.onStopping = onStopping
    }

    public func run() async throws {
        try? await gracefulShutdown()
        ServiceManager.notify("STOPPING=1")
        onStopping()
    }
}
