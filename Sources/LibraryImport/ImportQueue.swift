import Foundation

/// One photo file of an imported library, ready for a worker thread.
struct ImportItem: Sendable {
    /// Its absolute path.
    var path: String
    /// Its folder's absolute path.
    var directory: String
    /// Its file name.
    var name: String
    /// How it is shown and recorded: the root folder's name, then the path below it.
    var sourceName: String
    /// Its size and modification time when walked: the version the journal records.
    var size: Int64
    var modifiedNs: Int64
    /// `jpg` or `png`, from its first bytes.
    var fileExtension: String
    /// Its sidecars, by name.
    var sidecars: ImportSidecarMatcher.Match?
    /// Whether its original is to be hard-linked into the library.
    var linkOriginal: Bool

    /// What identifies this version of this file in the jobs table (`jobs.claim_path`): a
    /// commit whose journal row was lost to a kill is found again by it.
    var jobKey: String { "import:\(path)#\(size)@\(modifiedNs)" }
}

/// A bounded queue between the walking thread and the worker threads: the walk waits when the
/// workers are behind, so memory holds a few photos' worth of paths, not the library's.
final class ImportQueue: @unchecked Sendable {
    // @unchecked: every mutable property is touched only while `condition` is locked.
    private let condition = NSCondition()
    private let capacity: Int
    private var items: [ImportItem] = []
    private var closed = false
    private var stopped = false

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Adds an item, waiting while the queue is full; false once the queue is stopped.
    func put(_ item: ImportItem) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while items.count >= capacity && !stopped { condition.wait() }
        guard !stopped else { return false }
        items.append(item)
        condition.broadcast()
        return true
    }

    /// The next item; nil once the queue is closed and empty, or stopped.
    func next() -> ImportItem? {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty && !closed && !stopped { condition.wait() }
        guard !stopped, !items.isEmpty else { return nil }
        let item = items.removeFirst()
        condition.broadcast()
        return item
    }

    /// No more items will come: workers finish what is queued, then stop.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Stops at once: queued items are dropped (the next run takes them), items in hand finish.
    /// Returns how many were dropped.
    @discardableResult
    func stop() -> Int {
        condition.lock()
        defer { condition.unlock() }
        stopped = true
        let dropped = items.count
        items.removeAll()
        condition.broadcast()
        return dropped
    }
}
