import ConnectionDefences
import Hummingbird
import NIOCore

/// The context of a request: Hummingbird's own, and the connection it came on (to answer
/// `Expect: 100-continue` through its `ConnectionGuard`).
struct ServiceRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection the request came on.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

extension Request {
    /// The request with `Expect: 100-continue` answered as the body is first read: its body
    /// asks the connection for `100 Continue` before its first read, so that a request refused
    /// before its body (401, 413, 415, 503) gets its final status alone and the client never
    /// sends the body.
    func continuingOnRead(channel: any Channel) -> Request {
        guard headers[.expect]?.lowercased() == "100-continue" else { return self }
        var request = self
        request.body = RequestBody(asyncSequence: ContinueOnFirstRead(base: body, channel: channel))
        return request
    }
}

/// A request body that sends `SendContinue` down its connection before its first read.
struct ContinueOnFirstRead: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let base: RequestBody
    let channel: any Channel

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: RequestBody.AsyncIterator
        let channel: any Channel
        var asked = false

        mutating func next() async throws -> ByteBuffer? {
            if !asked {
                asked = true
                try? await channel.triggerUserOutboundEvent(SendContinue()).get()
            }
            return try await base.next()
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), channel: channel)
    }
}

/// Runs tasks on one event loop: the admin listener's requests run there, never on the
/// concurrency pool that the main port's requests share, so that they cannot be starved.
final class EventLoopTaskExecutor: TaskExecutor, @unchecked Sendable {
    // An event loop is thread-safe; `execute` may be called from any thread.
    private let loop: any EventLoop

    init(_ loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
