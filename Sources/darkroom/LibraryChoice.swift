import ArgumentParser
import BucketStorage
import Foundation
import Settings
import Storage

/// The library a command works on, and with it the staging area of its queued photos: the
/// directory at `library.root`, or the bucket of `library.url`. With the catalog in PostgreSQL
/// and the library in a bucket, the machines share nothing else: queued photos then wait in the
/// bucket's staging area for whichever machine claims them.
struct LibraryChoice {
    let store: any BlobStore
    let staging: (any QueuedStaging)?

    /// Opens the configured library; `shared` says whether the catalog is one several machines
    /// use (PostgreSQL). A library that cannot be opened is one line, naming what to fix.
    static func open(_ configuration: Configuration, shared: Bool) throws -> LibraryChoice {
        let store: any BlobStore
        do {
            store = try LibraryStores.open(configuration)
        } catch {
            throw ValidationError("cannot open the library: \(error)")
        }
        let staging = shared ? (store as? BucketLibrary).map { BucketStaging(library: $0) } : nil
        return LibraryChoice(store: store, staging: staging)
    }

    /// Closes the library's connections (a bucket's client); from a plain thread, once no
    /// operation is in flight.
    func close() {
        try? LibraryStores.close(store)
    }

    /// Closes them from async code.
    func close() async {
        try? await (store as? BucketLibrary)?.shutdown()
    }

    /// `spool` with this library's staging area.
    func staged(_ spool: Spool) -> Spool {
        var spool = spool
        spool.staging = staging
        return spool
    }
}

/// Runs `body` on a thread of its own and waits for it: a command's `run()` is called from the
/// root command's task, and what calls a bucket synchronously (`blocking`) must run on a plain
/// thread, never on one of Swift's concurrency pool.
func onPlainThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    let result = ResultHolder<T>()
    Thread {
        result.value = Result { try body() }
        done.signal()
    }.start()
    done.wait()
    switch result.value {
    case .success(let value)?: return value
    case .failure(let error)?: throw error
    case nil: throw ValidationError("internal error: a thread ended without a result")
    }
}

/// The result a thread hands to the one waiting for it.
private final class ResultHolder<T: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is written by the thread before it signals, read only after the wait.
    var value: Result<T, any Error>?
}
