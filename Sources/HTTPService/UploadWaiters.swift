import Catalog
import Foundation
import Synchronization

/// The `GET /v1/uploads/{id}?wait=` requests waiting for an upload's outcome: woken when the
/// upload's photo leaves the spool's `processing/` (its outcome is in the catalog by then) or
/// lands in `failed/` (`SpoolOutcomeWatcher`), or, with a shared queue, when its job's end is
/// notified by the database (`follow`); at most `limit` at once.
final class UploadWaiters: Sendable {
    /// Waiters at once (`server.max_status_waiters`).
    let limit: Int
    private struct State {
        var waiting: [String: [ObjectIdentifier: UploadWaiter]] = [:]
        var count = 0
        var stopped = false
    }
    private let state = Mutex(State())
    /// The shared queue's outcomes, when there is one (`follow`).
    private let feed = Mutex<(any OutcomeFeed)?>(nil)

    init(limit: Int) {
        self.limit = limit
    }

    /// A waiter for upload `id`; nil past the limit or once stopping (the request answers at once).
    func enter(_ id: String) -> UploadWaiter? {
        state.withLock { state -> UploadWaiter? in
            guard !state.stopped, state.count < limit else { return nil }
            let waiter = UploadWaiter(id: id)
            state.waiting[id, default: [:]][ObjectIdentifier(waiter)] = waiter
            state.count += 1
            return waiter
        }
    }

    /// The waiter's request is answered.
    func leave(_ waiter: UploadWaiter) {
        state.withLock { state in
            guard state.waiting[waiter.id]?.removeValue(forKey: ObjectIdentifier(waiter)) != nil else { return }
            if state.waiting[waiter.id]?.isEmpty == true { state.waiting[waiter.id] = nil }
            state.count -= 1
        }
    }

    /// Requests waiting now.
    var count: Int { state.withLock { $0.count } }

    /// Whether the server is stopping (waiters answer at once).
    var isStopped: Bool { state.withLock { $0.stopped } }

    /// The photo job of the queued file `TOKEN/NAME` ended (the shared queue's notice): the
    /// waiters of its upload look again. An upload's photo is `TOKEN/ID.EXT`; a direct
    /// upload's, `ID/NAME`.
    func notify(queuedFile file: String) {
        let token = String(file.prefix { $0 != "/" })
        let name = String(file.drop { $0 != "/" }.dropFirst())
        for id in Set([UploadID.isValid(token) ? token : nil, SpoolOutcomeWatcher.uploadID(ofSpoolName: name)].compactMap { $0 }) {
            notify(id: id)
        }
    }

    /// Whether the outcomes of the shared queue's photo jobs reach `notify(queuedFile:)` now.
    var outcomesArrive: Bool { feed.withLock { $0?.isLive ?? false } }

    /// Follows the shared queue's outcomes (until `stop`).
    func follow(_ jobs: any PhotoJobQueue) {
        let started = jobs.followOutcomes { [weak self] file in self?.notify(queuedFile: file) }
        feed.withLock { $0 = started }
    }

    /// Something happened to upload `id`: its waiters look again.
    func notify(id: String) {
        let waiters = state.withLock { Array(($0.waiting[id] ?? [:]).values) }
        for waiter in waiters { waiter.signal() }
    }

    /// The server is stopping: every waiter answers now, and no new one waits.
    func stop() {
        feed.withLock { feed in
            feed?.stop()
            feed = nil
        }
        let waiters = state.withLock { state in
            state.stopped = true
            return state.waiting.values.flatMap(\.values)
        }
        for waiter in waiters { waiter.signal() }
    }
}

/// One waiting status request: `next` returns when it is signalled (also by a signal that came
/// while it was looking), or after a timeout.
final class UploadWaiter: Sendable {
    let id: String
    private struct State {
        var signalled = false
        var continuation: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    init(id: String) {
        self.id = id
    }

    func signal() {
        let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state.continuation = nil }
            if state.continuation == nil { state.signalled = true }
            return state.continuation
        }
        waiting?.resume()
    }

    /// Waits for a signal, at most `duration`.
    func next(atMost duration: Duration) async {
        let timer = Task { [weak self] in
            try? await Task.sleep(for: duration)
            self?.signal()
        }
        defer { timer.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.signalled {
                        state.signalled = false
                        return true
                    }
                    state.continuation = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            signal()
        }
        state.withLock { $0.signalled = false }
    }
}

/// Watches the spool's `processing/` (each worker's folder) and `failed/` with inotify, and
/// tells `UploadWaiters` when an upload's photo leaves processing (done, a duplicate, or
/// failed) or is failed: the moments its outcome is recorded. Works for the workers of this
/// process and for `darkroom run` processes beside it on the same spool.
final class SpoolOutcomeWatcher: @unchecked Sendable {
    // @unchecked: the descriptors are set once; `watched` is used by the watching thread only.
    private let descriptor: Int32
    private let processing: String
    private let failed: String
    private let waiters: UploadWaiters
    private let stopped = Mutex(false)
    private var watched: [Int32: String] = [:]

    init(spoolRoot: String, waiters: UploadWaiters) {
        processing = spoolRoot + "/processing"
        failed = spoolRoot + "/failed"
        self.waiters = waiters
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    }

    /// Starts the watching thread; nil when inotify is not available (waiters then rely on
    /// their periodic look).
    func start() {
        guard descriptor >= 0 else { return }
        addWatches()
        let thread = Thread { [self] in run() }
        thread.name = "upload-outcomes"
        thread.start()
    }

    func stop() {
        stopped.withLock { $0 = true }
    }

    private func addWatches() {
        let leaving = UInt32(IN_DELETE | IN_MOVED_FROM | IN_CREATE)
        add(processing, mask: leaving)
        add(failed, mask: UInt32(IN_MOVED_TO | IN_CREATE))
        for worker in (try? FileManager.default.contentsOfDirectory(atPath: processing)) ?? [] {
            add(processing + "/" + worker, mask: UInt32(IN_DELETE | IN_MOVED_FROM))
        }
    }

    private func add(_ folder: String, mask: UInt32) {
        guard !watched.values.contains(folder) else { return }
        let watch = inotify_add_watch(descriptor, folder, mask)
        if watch >= 0 { watched[watch] = folder }
    }

    /// The upload id of a spool name (`<id>.jpg`, `<id>.jpg.error.json`); nil for another photo.
    static func uploadID(ofSpoolName name: String) -> String? {
        let id = String(name.prefix { $0 != "." })
        return UploadID.isValid(id) ? id : nil
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while !stopped.withLock({ $0 }) {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 500) > 0 else { continue }
            var newFolder = false
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                guard count > 0 else { break }
                var offset = 0
                while offset + MemoryLayout<inotify_event>.size <= count {
                    let (mask, length, name) = buffer.withUnsafeBytes { raw -> (UInt32, Int, String) in
                        let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                        let start = offset + MemoryLayout<inotify_event>.size
                        let bytes = raw[start..<min(start + Int(event.len), count)].prefix { $0 != 0 }
                        return (event.mask, Int(event.len), String(decoding: bytes, as: UTF8.self))
                    }
                    offset += MemoryLayout<inotify_event>.size + length
                    if mask & UInt32(IN_ISDIR) != 0 {
                        newFolder = true
                    } else if let id = Self.uploadID(ofSpoolName: name) {
                        waiters.notify(id: id)
                    }
                }
            }
            if newFolder { addWatches() }
        }
        close(descriptor)
    }
}
