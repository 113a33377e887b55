import Dispatch
import NIOPosix

/// Runs an async operation from synchronous code and waits for its result, for the worker's
/// plain threads that call the object store synchronously (`try blocking { try await client.put(...) }`).
/// The operation runs as a detached task; the calling thread waits on a semaphore until it ends,
/// then returns its value or throws its error.
///
/// Call it only from a thread of your own (a worker's, the main thread of a command): never from
/// an event loop (the operation may need that very loop to make progress) nor from a thread of
/// Swift's concurrency pool (blocking one can starve the pool the operation runs on). Debug
/// builds trap when called from either.
public func blocking<T: Sendable, E: Error>(_ operation: @Sendable @escaping () async throws(E) -> T) throws(E) -> T {
    assert(MultiThreadedEventLoopGroup.currentEventLoop == nil, "blocking(_:) called on an event loop")
    assert(withUnsafeCurrentTask { $0 == nil }, "blocking(_:) called from an async task")
    let box = ResultBox<T, E>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do throws(E) {
            box.result = .success(try await operation())
        } catch {
            box.result = .failure(error)
        }
        done.signal()
    }
    done.wait()
    return try box.result!.get()
}

/// The result handed from the task to the waiting thread.
private final class ResultBox<T: Sendable, E: Error>: @unchecked Sendable {
    // @unchecked: `result` is written once by the task before it signals the semaphore, and read
    // by the waiting thread only after `wait()` returns; the semaphore orders the two.
    var result: Result<T, E>?
}
