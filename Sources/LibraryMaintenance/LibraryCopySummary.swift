import Foundation

/// What `library copy` did: every path counted once, as copied, already there or failed.
public struct LibraryCopySummary: Sendable, Encodable, Equatable {
    /// A path that is not in the bucket, verified, and why.
    public struct Failure: Sendable, Encodable, Equatable {
        public var path: String
        public var reason: String
    }

    /// The local library and the bucket (`s3://bucket/prefix/`).
    public var source: String
    public var target: String
    /// Paths to settle (local files, and the catalog's paths the directory lacks) and their bytes.
    public var objects: Int
    public var bytes: Int64
    /// Sent by this run, and verified after their write.
    public var copied = 0
    public var copiedBytes: Int64 = 0
    /// Copied over an object of that name that held other bytes.
    public var replaced = 0
    /// In the bucket already with the same size and checksum: not sent again.
    public var alreadyThere = 0
    /// Present in the bucket and matching its local file (copied or already there).
    public var verified = 0
    public var failures: [Failure] = []
    /// Local files that no picture or variant of the catalog names.
    public var notReferenced = 0
    /// Paths the catalog names that the local library lacks, and how many of those the bucket
    /// holds already (at the size the catalog records).
    public var missingLocally = 0
    public var missingLocallyInBucket = 0
    /// Stopped by a signal before every path was settled.
    public var interrupted = false
    public var seconds = 0.0
    /// Every path present in the bucket and verified.
    public var complete = false

    public init(source: String, target: String, objects: Int, bytes: Int64) {
        self.source = source
        self.target = target
        self.objects = objects
        self.bytes = bytes
    }

    /// Paths settled so far.
    public var settled: Int { copied + alreadyThere + failures.count }

    mutating func record(_ outcome: LibraryCopy.Outcome) {
        switch outcome.kind {
        case .copied:
            copied += 1
            copiedBytes += outcome.bytes
            verified += 1
            if outcome.replaced { replaced += 1 }
        case .alreadyThere:
            alreadyThere += 1
            verified += 1
            if outcome.missingLocally { missingLocallyInBucket += 1 }
        case .failed:
            failures.append(Failure(path: outcome.path, reason: outcome.reason ?? "failed"))
        }
    }

    mutating func close(seconds: Double) {
        self.seconds = seconds
        interrupted = settled < objects
        failures.sort { $0.path < $1.path }
        complete = !interrupted && failures.isEmpty && verified == objects
    }

    /// How many failure lines the text summary shows (the JSON one holds them all).
    static let failuresShown = 50

    /// The summary for people, one fact a line.
    public var lines: [String] {
        var lines = [
            "library copy from \(source) to \(target): \(objects) objects, \(Self.megabytes(bytes)), in \(String(format: "%.1f", seconds)) s",
            "  copied         \(Self.column(copied))  \(Self.megabytes(copiedBytes))\(replaced > 0 ? ", \(replaced) of them over an object that differed" : "")",
            "  already there  \(Self.column(alreadyThere))  (same size and checksum: not sent again)",
            "  verified       \(Self.column(verified))  of \(objects)",
            "  failed         \(Self.column(failures.count))",
            "  not referenced \(Self.column(notReferenced))  (local files that no picture names: copied too; `darkroom library check` lists them as orphans)",
        ]
        if missingLocally > 0 {
            lines.append("  missing here   \(Self.column(missingLocally))  (named by the catalog but not in \(source); "
                + "\(missingLocallyInBucket) already in the bucket at the catalog's size)")
        }
        for failure in failures.prefix(Self.failuresShown) {
            lines.append("failed \(failure.path): \(failure.reason)")
        }
        if failures.count > Self.failuresShown {
            lines.append("... and \(failures.count - Self.failuresShown) more failures (--json lists them all)")
        }
        if interrupted {
            lines.append("interrupted with \(objects - settled) objects not yet settled: run the same command again to continue")
        } else if complete {
            lines.append("every object is in \(target) and verified: set library.url to \(target) on every machine "
                + "(the credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
        } else {
            lines.append("not every object is in \(target): fix what the failures say and run the same command again")
        }
        return lines
    }

    static func column(_ value: Int) -> String {
        String(value).leftPadded(to: 7)
    }

    /// `12.3 MB`, `1.20 GB`, in decimal units.
    static func megabytes(_ bytes: Int64) -> String {
        let value = Double(bytes)
        if value >= 1e9 { return String(format: "%.2f GB", value / 1e9) }
        return String(format: "%.1f MB", value / 1e6)
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
