import Foundation

/// Where a queued photo's bytes wait between its admission and its commit when the machines
/// share no directory, only a bucket: its staging area. Each machine's `queued/TOKEN/` is then
/// that machine's working copy alone: a photo admitted on one machine is published to the
/// staging area before its job exists, and whichever machine claims the job fetches it from
/// there. A machine killed and its disk wiped loses nothing another machine needs.
public protocol QueuedStaging: Sendable {
    /// Where the staging area is, for logs (`s3://bucket/prefix/staging/`).
    var location: String { get }
    /// Copies the files of a queued photo (`TOKEN/NAME`, its sidecar, its import ticket) from
    /// `folder` (the local `queued/TOKEN`) to the staging area, durably. What it had put is
    /// removed again when it throws, so that nothing is half visible.
    func publish(_ file: String, from folder: String) throws
    /// Writes the staged files of `file` into `folder` (the local `queued/TOKEN`); false when
    /// nothing is staged under it.
    func fetch(_ file: String, into folder: String) throws -> Bool
    /// Removes the staged files of `file`: its commit is recorded. With `failure` (the reason
    /// file's bytes), they move to the failed area instead, beside that reason, so that a failed
    /// photo is kept where every machine can see it.
    func discard(_ file: String, failure: [UInt8]?) throws
    /// One look at the staging area for the reconciliation, in one listing: removes what was
    /// prepared for it and will never arrive (direct uploads whose presigned URL expired
    /// uncompleted; a sidecar or import ticket whose photo is not staged beside it, quiet for
    /// twice `quietSeconds`), and returns the photos staged whose files have not changed for
    /// `quietSeconds`: one staged by a process that died before its job was recorded, or whose
    /// removal after its commit was cut short.
    func sweep(now: Date, quietFor quietSeconds: Double) throws -> StagingSweep
}

/// What a look at the staging area found and did (`QueuedStaging.sweep`).
public struct StagingSweep: Sendable, Equatable {
    /// The photos staged (`TOKEN/NAME`), quiet for the time asked, in order.
    public var quietPhotos: [String]
    /// How many objects that would never be completed went.
    public var removed: Int

    public init(quietPhotos: [String], removed: Int) {
        self.quietPhotos = quietPhotos
        self.removed = removed
    }
}

extension Spool {
    /// The local folder of a queued photo (`queued/TOKEN`).
    public func queuedFolder(of file: String) -> String {
        queued + "/" + String(file.prefix { $0 != "/" })
    }

    /// The names, relative to its folder, of a queued photo's files there: the photo, its
    /// sidecar and its import ticket, those that exist.
    public func queuedFiles(of file: String) -> [String] {
        let name = String(file.drop { $0 != "/" }.dropFirst())
        return [name, name + ".json", name + Self.importTicketSuffix].filter {
            FileSystem.entryStatus(queuedFolder(of: file) + "/" + $0) != nil
        }
    }
}

extension Spool {
    /// Publishes a queued photo to the staging area, when there is one: before its job is
    /// recorded, so that any machine that claims the job finds it.
    public func publishQueued(_ file: String) throws {
        try staging?.publish(file, from: queuedFolder(of: file))
    }

    /// Makes sure a queued photo is in this machine's `queued/`: fetched from the staging area
    /// when it was admitted on another machine. False when it is in neither.
    public func fetchQueued(_ file: String) throws -> Bool {
        if FileSystem.entryStatus(queued + "/" + file) != nil { return true }
        guard let staging else { return false }
        return try staging.fetch(file, into: queuedFolder(of: file))
    }
}
