import CRuntime
import Dispatch
import Foundation

/// The threads that process photos, for the spool's workers and the import alike: a fixed
/// number of named threads, each running one loop that takes photos from its queue until the
/// queue is done, and a blocking wait for all of them to end.
public final class WorkerPool: Sendable {
    private let group = DispatchGroup()

    public init() {}

    /// Starts `count` threads named `name-0`, `name-1`, ..., each running `body` with its index,
    /// first lowering its own CPU priority by `niceness` steps (Linux gives each thread its own
    /// nice value) when that is above 0; `refused` hears why the kernel said no.
    public func start(_ name: String, count: Int, niceness: Int = 0, refused: @escaping @Sendable (String) -> Void = { _ in },
                      _ body: @escaping @Sendable (Int) -> Void) {
        for index in 0..<count {
            group.enter()
            // The priority is lowered before the thread takes its name: whoever sees a worker's
            // name (top -H, /proc) sees its priority too.
            Thread.named("\(name)-\(index)", first: {
                if niceness > 0 {
                    let refusal = darkroom_lower_thread_priority(Int32(niceness))
                    if refusal != 0 { refused(String(cString: strerror(refusal))) }
                }
            }) { [group] in
                body(index)
                group.leave()
            }.start()
        }
    }

    /// Starts one thread named `name` running `body` (a helper such as the lease renewer),
    /// waited for by `join` with the others.
    public func startOne(_ name: String, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        Thread.named(name) { [group] in
            body()
            group.leave()
        }.start()
    }

    /// Waits until every thread started has ended.
    public func join() {
        group.wait()
    }
}

extension Thread {
    /// A thread of Darkroom's, named `name` for Foundation and for the kernel (so `top -H` and
    /// `/proc` tell the workers from the server's threads); keep names within 15 bytes.
    /// `first` runs before the thread takes its name (the kernel's and Foundation's).
    public static func named(_ name: String, first: (@Sendable () -> Void)? = nil, _ body: @escaping @Sendable () -> Void) -> Thread {
        Thread {
            first?()
            darkroom_name_thread(name)
            Thread.current.name = name
            body()
        }
    }
}
