import NIOCore

/// Closes a connection whose first request head has not fully arrived within `timeout`.
///
/// It sits after the HTTP decoder, which passes a request on only once its line and headers are
/// complete, so the first read that reaches this handler ends the wait. A client that connects
/// and sends nothing, or its headers a byte at a time (slowloris), is cut after `timeout`
/// instead of holding a socket for ever; later requests on a kept-alive connection are bounded
/// by the idle timeout, which every read restarts.
package final class RequestHeadTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    // Never unwrapped: only whether something was read matters.
    package typealias InboundIn = Any
    package typealias InboundOut = Any

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?

    package init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        // The connection is active by the time Hummingbird adds its handlers.
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            channel.close(promise: nil)
        }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if let deadline {
            deadline.cancel()
            self.deadline = nil
        }
        context.fireChannelRead(data)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }
}
