import Foundation
import Storage

/// The names waiting for a worker thread, the claims in hand, and the run's tallies, shared by
/// the scanning thread and the worker threads.
public final class WorkQueue: @unchecked Sendable {
    // @unchecked: every mutable property is touched only while `condition` is locked.
    private let condition = NSCondition()
    /// Urgent photos (uploads), then the backlog (drop folders, bulk enqueues), each in the
    /// order offered.
    private var urgent = NameLane()
    private var bulk = NameLane()
    /// Takes since the last one that went to the backlog while urgent photos waited.
    private var urgentStreak = 0
    private var known: Set<String> = []
    private var claims: [String: Claim] = [:]
    private var busy = 0
    private var stopping = false
    private(set) var tally = RunTally()

    /// One take in this many goes to the oldest backlog photo while urgent ones wait, so that a
    /// steady stream of uploads never stops the backlog for good.
    public static let backlogShare = 8

    /// Adds names found by a scan (or handed over by the upload route) that are not already
    /// queued or in hand; those in `urgent` go ahead of the backlog. A queued backlog name that
    /// has become urgent moves to the urgent lane.
    public func offer(_ names: [String], urgent marked: Set<String> = []) {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return }
        for name in names {
            let isUrgent = marked.contains(name)
            if known.contains(name) {
                if isUrgent, bulk.remove(name) { urgent.append(name) }
                continue
            }
            known.insert(name)
            if isUrgent { urgent.append(name) } else { bulk.append(name) }
            tally.seen += 1
        }
        condition.broadcast()
    }

    /// The next name for a worker thread; nil once the queue is stopping. Urgent names first,
    /// but every `backlogShare`-th take is the oldest backlog name when there is one.
    public func next() -> String? {
        condition.lock()
        defer { condition.unlock() }
        while urgent.isEmpty && bulk.isEmpty && !stopping { condition.wait() }
        guard !stopping else { return nil }
        busy += 1
        if !urgent.isEmpty && (bulk.isEmpty || urgentStreak < Self.backlogShare - 1) {
            urgentStreak += 1
            return urgent.removeFirst()
        }
        urgentStreak = 0
        return bulk.removeFirst()
    }

    /// Records a claim in hand (for lease renewal).
    public func holding(_ claim: Claim) {
        condition.lock()
        claims[claim.sourceName] = claim
        condition.unlock()
    }

    /// Marks a name finished, with what became of it. A name still being written leaves the
    /// queue as if never seen: a later scan offers it again.
    public func finished(_ name: String, _ result: RunTally.Result) {
        condition.lock()
        defer { condition.unlock() }
        busy -= 1
        known.remove(name)
        claims[name] = nil
        if result == .stillWriting { tally.seen -= 1 } else { tally.record(result) }
        condition.broadcast()
    }

    /// The claims in hand right now.
    public func claimsInHand() -> [Claim] {
        condition.lock()
        defer { condition.unlock() }
        return Array(claims.values)
    }

    /// How many names wait for a worker thread (not counting those in hand).
    public var waiting: Int {
        condition.lock()
        defer { condition.unlock() }
        return urgent.count + bulk.count
    }

    /// Whether nothing is waiting and nothing is being processed.
    public var isIdle: Bool {
        condition.lock()
        defer { condition.unlock() }
        return urgent.isEmpty && bulk.isEmpty && busy == 0
    }

    /// Stops handing out names; photos in hand finish. Waiting names stay in `incoming/`.
    public func stop() {
        condition.lock()
        stopping = true
        urgent.removeAll()
        bulk.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until some photo finishes or `timeout` passes.
    public func waitForProgress(timeout: Double) {
        condition.lock()
        _ = condition.wait(until: Date(timeIntervalSinceNow: timeout))
        condition.unlock()
    }

    /// Waits until no photo is in hand.
    public func drainInHand() {
        condition.lock()
        while busy > 0 { condition.wait() }
        condition.unlock()
    }
}

/// What one run did.
public struct RunTally: Sendable, Equatable, Codable {
    /// Outcomes a photo can have in a run.
    public enum Result { case added, duplicate, failed, lost, stillWriting }
    /// Photos found in `incoming/` and queued.
    public var seen = 0
    public var added = 0
    public var duplicates = 0
    public var failed = 0
    /// Names another worker claimed first.
    public var takenElsewhere = 0

    mutating func record(_ result: Result) {
        switch result {
        case .added: added += 1
        case .duplicate: duplicates += 1
        case .failed: failed += 1
        case .lost: takenElsewhere += 1
        case .stillWriting: break
        }
    }

    /// Photos this run finished.
    public var done: Int { added + duplicates + failed }
}

/// A first-in, first-out list of names whose every take costs the same: a read position into
/// an array, the taken front dropped once it is half the array. (An array's `removeFirst` moves
/// every name behind it, so a backlog of n photos cost n²/2 moves.)
struct NameLane {
    private var names: [String] = []
    private var head = 0

    var isEmpty: Bool { head == names.count }
    var count: Int { names.count - head }

    mutating func append(_ name: String) { names.append(name) }

    /// Takes the oldest name; the lane must not be empty.
    mutating func removeFirst() -> String {
        let name = names[head]
        head += 1
        if head == names.count {
            names.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 && head * 2 >= names.count {
            names.removeFirst(head)
            head = 0
        }
        return name
    }

    /// Removes `name` where it waits; whether it was there.
    mutating func remove(_ name: String) -> Bool {
        guard let index = names[head...].firstIndex(of: name) else { return false }
        names.remove(at: index)
        return true
    }

    mutating func removeAll() {
        names.removeAll()
        head = 0
    }
}
