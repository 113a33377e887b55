import Logging
import NIOCore
import ServiceObservability
import Synchronization

/// The connections open from each client address, shared by every connection of a listener.
package final class ClientConnections: Sendable {
    /// Connections one address may hold at once (`server.max_connections_per_client`).
    let limit: Int
    private let open = Mutex<[String: Int]>([:])

    package init(limit: Int) {
        self.limit = limit
    }

    /// Counts a new connection from `address`; false (and not counted) past the limit.
    func admit(_ address: String) -> Bool {
        open.withLock { open in
            let count = open[address, default: 0]
            guard count < limit else { return false }
            open[address] = count + 1
            return true
        }
    }

    /// A counted connection from `address` has closed.
    func release(_ address: String) {
        open.withLock { open in
            let count = open[address, default: 0] - 1
            open[address] = count > 0 ? count : nil
        }
    }

    /// Connections open from `address` now.
    func count(_ address: String) -> Int {
        open.withLock { $0[address, default: 0] }
    }
}

/// Closes a connection as soon as it is accepted when its client address already holds
/// `ClientConnections.limit` connections, so that one client cannot take every connection of
/// `server.max_connections`; counts the others until they close.
package final class ClientConnectionLimit: ChannelInboundHandler, RemovableChannelHandler {
    // Never unwrapped: what is read passes through as it is.
    package typealias InboundIn = Any
    package typealias InboundOut = Any

    private let connections: ClientConnections
    private let logger: Logger
    private let metrics: (any ConnectionCutRecorder)?
    /// The address counted for this connection, until it is released.
    private var counted: String?

    package init(connections: ClientConnections, logger: Logger, metrics: (any ConnectionCutRecorder)?) {
        self.connections = connections
        self.logger = logger
        self.metrics = metrics
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        // The connection is active by the time Hummingbird adds its handlers.
        guard let address = context.channel.remoteAddress?.ipAddress else { return }
        if connections.admit(address) {
            counted = address
        } else {
            metrics?.recordConnectionCut(.perClient)
            logger.debug("connection refused: too many from one client", metadata: [
                "client": "\(address)", "limit": "\(connections.limit)"])
            context.close(promise: nil)
        }
    }

    package func channelInactive(context: ChannelHandlerContext) {
        release()
        context.fireChannelInactive()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        release()
    }

    private func release() {
        if let counted { connections.release(counted) }
        counted = nil
    }
}
