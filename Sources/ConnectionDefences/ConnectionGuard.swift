import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import ServiceObservability

/// A request part as the HTTP/1 channel hands it to the handlers after the codec.
package typealias RequestPart = HTTP1Channel.Value.InboundPart
/// A response part as the handlers write it.
package typealias ResponsePart = HTTP1Channel.Value.OutboundPart

extension NIOAsyncChannel {
    // The part types by name, without depending on the package that declares them.
    package typealias InboundPart = Inbound
    package typealias OutboundPart = Outbound
}

/// What bounds a request's arrival (`server.request_deadline_seconds`, `min_bytes_per_second`,
/// `min_rate_grace_seconds`, `stop_grace_seconds`).
package struct ArrivalLimits: Sendable {
    /// The longest a whole request (from its head to the end of its body) may take to arrive.
    package var deadline: TimeAmount
    /// The slowest average rate of a body, in bytes per second of waiting for the client; 0: none.
    package var minBytesPerSecond: Int
    /// The waiting time to which the rate does not apply.
    package var grace: TimeAmount
    /// On a stop, how long a request still arriving may go on.
    package var stopGrace: TimeAmount
    /// After an answer that closes the connection, how long what the client still sends is
    /// read and dropped before the socket is closed: a client that is still sending its body
    /// when the socket closes would get a reset, and may lose the answer with it.
    package var linger: TimeAmount
    /// How often a request still arriving is looked at.
    package var tick: TimeAmount

    package init(deadline: TimeAmount, minBytesPerSecond: Int, grace: TimeAmount, stopGrace: TimeAmount,
                 linger: TimeAmount = .seconds(2), tick: TimeAmount = .milliseconds(250)) {
        self.deadline = deadline
        self.minBytesPerSecond = minBytesPerSecond
        self.grace = grace
        self.stopGrace = stopGrace
        self.linger = linger
        self.tick = tick
    }
}

/// Asks the connection's `ConnectionGuard` to answer `Expect: 100-continue` now: the handler
/// is about to read the body. Sent with `Channel.triggerUserOutboundEvent`.
package struct SendContinue: Sendable {
    package init() {}
}

/// Guards one HTTP/1 connection, between the codec and the application:
///
/// - An answer with `Connection: close` (every refusal of a request that has a body, see
///   `ErrorBodyMiddleware`) closes the connection as soon as it is written: the rest of the
///   body is dropped unread, for at most `linger`, instead of being read to its promised end.
/// - A request must arrive whole within `deadline`, and its body at `minBytesPerSecond` on
///   average once `grace` has passed, counting only the time the server was ready to read and
///   the client had sent nothing (a server slow to write what it read never cuts a client).
/// - On a stop, a request still arriving after `stopGrace` is cut.
/// - `Expect: 100-continue` is answered 100 when the handler starts reading the body
///   (`SendContinue`); a request answered before that gets its final status alone.
/// - A request head the parser refuses (too long, malformed) is answered 400 with the JSON
///   error body and a request id, then the connection closed.
package final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = RequestPart
    package typealias InboundOut = RequestPart
    package typealias OutboundIn = ResponsePart
    package typealias OutboundOut = ResponsePart

    /// Where the current request is.
    private enum Phase {
        /// Between requests: the next thing read is a head.
        case awaitingHead
        /// The head is in, the body is arriving.
        case receiving
        /// The whole request is in; its answer is not written yet.
        case received
    }

    private let limits: ArrivalLimits
    private let logger: Logger
    private let metrics: (any ConnectionCutRecorder)?

    private var phase = Phase.awaitingHead
    /// A final answer head has been written for the current request.
    private var answered = false
    /// An answer is being written (its head is out, its end not yet).
    private var responding = false
    /// The answer being written ends with the connection.
    private var closeAfterResponse = false
    /// The output is closed: what arrives is dropped, what is written is refused.
    private var closing = false
    /// The request asked for `100 Continue`, and neither it nor a final answer was sent.
    private var expectingContinue = false

    private var requestStarted = NIODeadline.now()
    private var bodyBytes = 0
    /// Time the server has been ready to read while the client sent nothing, this request.
    private var waited = TimeAmount.zero
    /// Since when a read has been asked for and not yet answered, while a request arrives.
    private var readAskedAt: NIODeadline?
    private var watch: Scheduled<Void>?
    /// When a stop was asked for: the request arriving then is cut `stopGrace` later.
    private var stopAt: NIODeadline?

    package init(limits: ArrivalLimits, logger: Logger, metrics: (any ConnectionCutRecorder)? = nil) {
        self.limits = limits
        self.logger = logger
        self.metrics = metrics
    }

    // MARK: Inbound

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        let now = NIODeadline.now()
        if let asked = readAskedAt {
            waited = waited + (now - asked)
            readAskedAt = nil
        }
        switch unwrapInboundIn(data) {
        case .head(let head):
            phase = .receiving
            answered = false
            requestStarted = now
            bodyBytes = 0
            waited = .zero
            expectingContinue = head.headerFields[.expect]?.lowercased() == "100-continue"
            startWatch(context: context)
        case .body(let buffer):
            bodyBytes += buffer.readableBytes
        case .end:
            stopWatch()
            phase = answered && !responding ? .awaitingHead : .received
            expectingContinue = false
        }
        context.fireChannelRead(data)
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, stopAt == nil {
            stopAt = .now() + limits.stopGrace
            if phase == .receiving { startWatch(context: context) }
        }
        context.fireUserInboundEventTriggered(event)
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        if closing { return }
        switch phase {
        case .receiving where !answered:
            // The handler reading the body is told, and answers it as a bad request.
            context.fireErrorCaught(error)
        case .awaitingHead where !responding:
            answerMalformedHead(context: context, error: error)
        default:
            // An answer is written or being written already: no second one; the connection ends.
            closeAfterResponse = true
            if !responding { closeOutput(context: context) }
        }
    }

    package func channelInactive(context: ChannelHandlerContext) {
        stopWatch()
        context.fireChannelInactive()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        stopWatch()
    }

    // MARK: Outbound

    package func read(context: ChannelHandlerContext) {
        if phase == .receiving, readAskedAt == nil { readAskedAt = .now() }
        context.read()
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !closing else {
            promise?.fail(ChannelError.outputClosed)
            return
        }
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.kind == .informational:
            context.write(data, promise: promise)
        case .head(let head):
            answered = true
            responding = true
            expectingContinue = false
            if head.headerFields[.connection]?.lowercased() == "close" { closeAfterResponse = true }
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            responding = false
            if phase == .received { phase = .awaitingHead }
            guard closeAfterResponse else {
                context.write(data, promise: promise)
                return
            }
            stopWatch()
            let written = promise ?? context.eventLoop.makePromise()
            context.writeAndFlush(data, promise: written)
            closing = true
            written.futureResult.hop(to: context.eventLoop).assumeIsolatedUnsafeUnchecked().whenComplete { _ in
                self.closeOutput(context: context)
            }
        }
    }

    package func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is SendContinue else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        if expectingContinue, !answered, !closing {
            expectingContinue = false
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        promise?.succeed()
    }

    // MARK: Deadlines

    private func startWatch(context: ChannelHandlerContext) {
        guard watch == nil else { return }
        watch = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(in: limits.tick) {
            self.watch = nil
            self.look(context: context)
        }
    }

    private func stopWatch() {
        watch?.cancel()
        watch = nil
    }

    /// Cuts the request arriving when it passed its deadline, its rate or the stop's grace.
    private func look(context: ChannelHandlerContext) {
        guard phase == .receiving, !closing else {
            stopWatch()
            return
        }
        let now = NIODeadline.now()
        var reason: (ConnectionCut, String)?
        if let stopAt, now >= stopAt {
            reason = (.stop, "the server is stopping and the request was still arriving after server.stop_grace_seconds")
        } else if now - requestStarted > limits.deadline {
            reason = (.deadline, "the request was still arriving after server.request_deadline_seconds")
        } else if limits.minBytesPerSecond > 0, !expectingContinue {
            let waiting = waited + (readAskedAt.map { now - $0 } ?? .zero)
            if waiting > limits.grace {
                let owed = Double(limits.minBytesPerSecond) * Double((waiting - limits.grace).nanoseconds) / 1e9
                if Double(bodyBytes) < owed {
                    reason = (.rate, "the body arrived slower than server.min_bytes_per_second")
                }
            }
        }
        guard let reason else {
            startWatch(context: context)
            return
        }
        stopWatch()
        metrics?.recordConnectionCut(reason.0)
        logger.info("connection cut", metadata: [
            "reason": "\(reason.1)", "client": "\(context.channel.remoteAddress?.ipAddress ?? "-")",
            "body_bytes": "\(bodyBytes)", "seconds": "\(Double((now - requestStarted).nanoseconds) / 1e9)"])
        closing = true
        context.close(promise: nil)
    }

    /// Closes the output (the answer is out), drops what still arrives for `linger`, then closes.
    private func closeOutput(context: ChannelHandlerContext) {
        closing = true
        stopWatch()
        context.close(mode: .output, promise: nil)
        let channel = context.channel
        context.eventLoop.scheduleTask(in: limits.linger) { channel.close(promise: nil) }
    }

    /// 400 with the JSON error body for a request head the parser refused, then the end.
    private func answerMalformedHead(context: ChannelHandlerContext, error: any Error) {
        let id = RequestID.make()
        let reason = error as? HTTPParserError == .headerOverflow
            ? "the request head (line and headers) is too long; keep it under 80 KiB"
            : "the request is not valid HTTP/1.1 (\(error)); check how the client frames it"
        logger.warning("request refused before its head was read", metadata: [
            "request_id": "\(id)", "reason": "\(error)", "client": "\(context.channel.remoteAddress?.ipAddress ?? "-")"])
        let json = (try? JSONSerialization.data(withJSONObject: ["error": reason, "request_id": id], options: [.sortedKeys])) ?? Data()
        let body = ByteBuffer(bytes: json)
        var head = HTTPResponse(status: .badRequest)
        head.headerFields[.contentType] = "application/json"
        head.headerFields[.contentLength] = "\(body.readableBytes)"
        head.headerFields[.connection] = "close"
        if let name = RequestID.headerName { head.headerFields[name] = id }
        answered = true
        closing = true
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).hop(to: context.eventLoop).assumeIsolatedUnsafeUnchecked().whenComplete { _ in
            self.closeOutput(context: context)
        }
    }
}
