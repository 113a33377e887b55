import Foundation
import Storage

/// When a run's scanning thread lists `incoming/` again: the rule both run loops share (the
/// local queue's and the shared job queue's).
///
/// Listing a folder costs a stat per photo in it. A watching daemon is woken by every arrival,
/// and while a copy pours files into a folder that already holds thousands, listing on each
/// wake kept a whole core busy. So a watching loop lists for an arrival only once it has waited
/// `timeShare` times the last listing's duration (listing then takes about a tenth of the
/// thread), or at once when a photo marked urgent (`enqueue --priority high`, an upload) is not
/// among the names listed so far: `priority/` holds only the photos in flight, and is read on
/// every wake. The loop also lists when its own reason says so (a local queue running low, the
/// scan interval passed, a run `--once`).
struct ListingPace {
    /// The listing's share of the scanning thread is at most about 1 / `timeShare`.
    static let timeShare = 10.0

    /// When the last listing ended.
    private(set) var scanned = Date.distantPast
    /// How long the last listing took.
    private(set) var seconds = 0.0
    /// The names the listings have found that can still matter for the urgent check: those of
    /// the last listing, and earlier ones whose urgent mark is still there (a claimed photo
    /// keeps its mark until it is done). A daemon running for months holds no more names than
    /// its spool does.
    private(set) var listed = Set<String>()
    /// Whether the last wake's arrivals were left for a later listing.
    private(set) var deferred = false

    /// Whether to list now: `required` (the loop's own reason), or, for a watching loop, the
    /// throttle has run out or `urgentNames` (read only when needed) holds a name not listed yet.
    mutating func isDue(now: Date = Date(), watching: Bool, required: Bool, urgentNames: () -> Set<String>) -> Bool {
        let due = required || (watching && (now.timeIntervalSince(scanned) >= seconds * Self.timeShare
            || !urgentNames().isSubset(of: listed)))
        deferred = watching && !due
        return due
    }

    /// Lists `incoming/` and records the listing.
    mutating func list(_ spool: Spool, watching: Bool) -> SpoolScan {
        let began = Date()
        let scan = spool.scan()
        recordListing(scan.ready, marked: scan.marked, began: began, watching: watching)
        return scan
    }

    /// Records a listing that ran from `began` to `ended` and found `ready`, when `marked` were
    /// the names marked urgent.
    mutating func recordListing(_ ready: [String], marked: Set<String>, began: Date, ended: Date = Date(), watching: Bool) {
        scanned = ended
        seconds = max(0, ended.timeIntervalSince(began))
        deferred = false
        guard watching else { return }
        listed = Set(ready).union(listed.intersection(marked))
    }

    /// How long a loop whose arrivals were deferred may sleep before the listing may run
    /// again; nil when nothing was deferred.
    func resumeIn(now: Date = Date()) -> Double? {
        guard deferred else { return nil }
        return max(seconds * Self.timeShare - now.timeIntervalSince(scanned), 0.01)
    }
}
