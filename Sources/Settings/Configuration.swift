import Foundation
import Imaging
import Moments
import ServiceSettings

/// Everything Darkroom can be told, loaded from `pipeline.json` (every key optional; a missing
/// key takes the default written here, which is also what the bundled `pipeline.json` says).
public struct Configuration: Sendable {
    /// The variants to render, largest need first or not: order is kept in outputs.
    public var variants: [VariantRecipe]
    /// The variant whose crop rectangle is the picture's feed crop.
    public var feedVariant: String
    /// Decompression-bomb guard: photos with more pixels than this are refused.
    public var pixelLimit: Int
    /// Background on which transparent PNGs are flattened for JPEG output.
    public var background: RGB
    /// How cover crops are placed when no focal point is given.
    public var crop: CropStrategy
    /// Whether photos with a wider profile are converted to sRGB or keep their profile.
    public var colour: ColourHandling = .srgb
    /// The largest photo file read, in bytes: a larger one is refused from its size, before any
    /// of it is read (a sparse file of 40 GiB takes 4 KB on disk and would not fit in memory).
    public var maxFileBytes: Int64 = Configuration.defaultMaxFileBytes
    /// `imaging.max_file_bytes` unless set: 512 MiB, far above any camera's photo.
    public static let defaultMaxFileBytes: Int64 = 512 << 20
    /// The zone assumed for capture times that carry no offset.
    public var defaultTimeZone: TimeZone
    /// The spool's root (`incoming/`, `processing/`, `failed/` beneath it).
    public var spoolRoot: String
    /// Seconds a file written in place must stay unchanged before it is taken.
    public var settleSeconds: Double
    /// Seconds after which the claim of a worker that stopped renewing it is taken back.
    public var leaseSeconds: Double
    /// Seconds between scans of `incoming/` when no file-system event arrives.
    public var scanIntervalSeconds: Double
    /// The library of originals and variants.
    public var libraryRoot: String
    /// A second copy of every original, when set.
    public var backupDir: String?
    /// The SQLite catalog file.
    public var catalogPath: String
    /// A PostgreSQL catalog (`postgres://user@host:port/db`), shared by workers on several
    /// machines; when set it replaces `catalogPath`. `$DARKROOM_CATALOG_URL` stands in for it.
    public var catalogURL: String? = nil
    /// The library in an S3-compatible bucket instead of `libraryRoot`: `s3://BUCKET/PREFIX`.
    public var libraryURL: String? = nil
    /// The bucket's service: its endpoint (nil: `$AWS_ENDPOINT_URL`, else AWS's), region and addressing.
    public var libraryS3 = BucketSettings()
    /// Where clients fetch variants from when a CDN or a public bucket is in front of the
    /// library: the variant URLs of answers and webhooks point there (nil: served by Darkroom).
    public var libraryPublicURL: String? = nil
    /// With the library in a bucket and no public URL, variant URLs are presigned GETs valid this
    /// long (seconds) instead of Darkroom's own media route (nil: the media route).
    public var libraryPresignSeconds: Double? = nil
    /// How long a direct upload's presigned PUT (`POST /v1/uploads/presign`) stays valid, in
    /// seconds; an upload not completed by then is removed.
    public var libraryDirectUploadSeconds: Double = 900

    /// Seconds a PostgreSQL catalog may take to accept a connection (handshake included).
    public var catalogConnectTimeoutSeconds: Double = 5
    /// Seconds one PostgreSQL statement may take before its connection is given up as lost.
    public var catalogStatementTimeoutSeconds: Double = 10
    /// Seconds one PostgreSQL transaction may take, all its statements together.
    public var catalogTransactionTimeoutSeconds: Double = 30
    /// Photos processed at once; 0 means one per core (one more with a PostgreSQL catalog).
    public var concurrency: Int
    /// Source pixels in flight at once across workers: one huge photo runs alone.
    public var pixelBudget: Int
    /// A photo taking longer than this is failed, so it never stalls the rest.
    public var photoTimeoutSeconds: Double
    /// Tries for transient errors (disk full, catalog busy) before the photo goes to `failed/`.
    public var maxAttempts: Int
    /// First retry delay; it doubles at each further try.
    public var retryBaseSeconds: Double
    /// Times a photo may be taken back from a worker that died on it before it is failed: 1 by
    /// default, so a photo in hand when its process died is tried once more (it may only have
    /// been beside the one that crashed it), and failed ("crashed the worker") should the
    /// process die on it again, on the next start rather than after a crash loop.
    public var maxRecoveries: Int
    /// The moment rules.
    public var moments: MomentRules
    /// The HTTP upload hook (`darkroom serve`).
    public var server: ServerSettings = .defaults
    /// Delivery of the outbox's events to HTTP endpoints.
    public var webhooks: WebhookSettings = .defaults

    /// The defaults, identical to the bundled `pipeline.json`.
    public static let defaults = Configuration(
        variants: VariantRecipe.defaults,
        feedVariant: "feed", pixelLimit: RenderOptions.defaultPixelLimit, background: .white,
        crop: .attention, defaultTimeZone: TimeZone(identifier: "UTC") ?? .current,
        spoolRoot: "run/spool", settleSeconds: 2, leaseSeconds: 30, scanIntervalSeconds: 5,
        libraryRoot: "run/library", backupDir: nil, catalogPath: "run/catalog.sqlite",
        concurrency: 0, pixelBudget: 150_000_000, photoTimeoutSeconds: 120, maxAttempts: 5,
        retryBaseSeconds: 0.5, maxRecoveries: 1, moments: MomentRules())

    /// `catalog.url`, else `$DARKROOM_CATALOG_URL` when that is set: the PostgreSQL catalog, or
    /// nil for the SQLite file at `catalogPath`.
    public func effectiveCatalogURL(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let catalogURL { return catalogURL }
        guard let url = environment["DARKROOM_CATALOG_URL"], !url.isEmpty else { return nil }
        return url
    }

    /// The recipe of the feed variant.
    public var feedRecipe: VariantRecipe {
        variants.first { $0.name == feedVariant } ?? variants[variants.count - 1]
    }

    /// Workers to run: the configured count, or one per core. With the catalog in PostgreSQL,
    /// one more: each commit there waits for about 25 round trips to the server, and the
    /// extra worker renders while another waits (`darkroom-bench pipeline-postgres`: 93 % of
    /// SQLite's throughput with two workers on two cores, 97–98 % with three).
    public var effectiveConcurrency: Int {
        if concurrency > 0 { return concurrency }
        return max(1, ProcessInfo.processInfo.activeProcessorCount) + (effectiveCatalogURL() == nil ? 0 : 1)
    }

    /// Render options for one photo.
    public func renderOptions(orientation: Int, focalPoint: FocalPoint?, crops: [String: CropRect] = [:]) -> RenderOptions {
        RenderOptions(pixelLimit: pixelLimit, background: background, orientation: orientation,
                      focalPoint: focalPoint, crop: crop, crops: crops, colour: colour)
    }
}

/// A configuration file that cannot be used: the file, the key and the problem.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable, Equatable {
    public var file: String
    public var key: String
    public var problem: String

    public var description: String {
        key.isEmpty ? "\(file): \(problem)" : "\(file): \(key): \(problem)"
    }
}

/// How to reach the bucket of `library.url`. Credentials never come from the file: only from the
/// environment the AWS tools use (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`).
public struct BucketSettings: Sendable, Equatable {
    /// The service's URL (`https://s3.eu-west-1.amazonaws.com`, `http://127.0.0.1:7480`); nil:
    /// `$AWS_ENDPOINT_URL`, else AWS's endpoint of the region.
    public var endpoint: String? = nil
    /// The region signed for; nil: `$AWS_REGION`, else `us-east-1`.
    public var region: String? = nil
    /// Path-style addressing (`endpoint/BUCKET/KEY`), as most S3-compatible services want;
    /// false: virtual-hosted (`BUCKET.endpoint/KEY`), as AWS prefers. Nil: path-style when an
    /// endpoint is given, else virtual-hosted.
    public var pathStyle: Bool? = nil

    public init() {}

    /// The endpoint in effect.
    public func effectiveEndpoint(environment: [String: String]) -> String? {
        endpoint ?? environment["AWS_ENDPOINT_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The region in effect.
    public func effectiveRegion(environment: [String: String]) -> String {
        region ?? environment["AWS_REGION"].flatMap { $0.isEmpty ? nil : $0 } ?? "us-east-1"
    }

    /// The addressing in effect.
    public func effectivePathStyle(environment: [String: String]) -> Bool {
        pathStyle ?? (effectiveEndpoint(environment: environment) != nil)
    }
}

/// A bucket and a key prefix, from `s3://BUCKET/PREFIX`.
public struct BucketAddress: Sendable, Equatable, CustomStringConvertible {
    public var bucket: String
    /// Empty, or ending with `/`.
    public var prefix: String

    /// Reads `s3://BUCKET[/PREFIX]`; nil when it is not one (the bucket's name: 3 to 63 lowercase
    /// letters, digits, dots and hyphens, as S3 names buckets).
    public init?(_ text: String) {
        guard text.hasPrefix("s3://") else { return nil }
        let rest = text.dropFirst("s3://".count)
        let bucket = String(rest.prefix { $0 != "/" })
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789.-")
        guard (3...63).contains(bucket.count), bucket.allSatisfy(allowed.contains),
              bucket.first?.isLetter == true || bucket.first?.isNumber == true else { return nil }
        var prefix = String(rest.dropFirst(bucket.count).drop { $0 == "/" })
        if !prefix.isEmpty && !prefix.hasSuffix("/") { prefix += "/" }
        guard !prefix.contains("//") else { return nil }
        self.bucket = bucket
        self.prefix = prefix
    }

    public var description: String { "s3://\(bucket)/\(prefix)" }
}
