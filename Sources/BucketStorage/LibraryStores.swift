import Foundation
import ObjectStorage
import Settings
import Storage
#if canImport(Glibc)
import Glibc
#endif

/// The library store the settings name: the bucket of `library.url` when set, else the local
/// directory `library.root` (with `library.backup_dir`). What every command that reads or writes
/// the library opens it through.
public enum LibraryStores {
    /// The `BucketLibrary` of `library.url` when it is set (its endpoint, region and addressing
    /// from the settings, else the environment; its credentials from the environment only),
    /// else the local `Library`. Throws a `LibraryStoreError` naming what is missing or wrong,
    /// or the local library's `FileSystemError`. A bucket's client must be closed once done:
    /// see `close`.
    public static func open(_ configuration: Configuration,
                            environment: [String: String] = ProcessInfo.processInfo.environment) throws -> any BlobStore {
        guard let url = configuration.libraryURL else {
            return try Library(root: configuration.libraryRoot, backupRoot: configuration.backupDir)
        }
        guard let address = BucketAddress(url) else {
            throw LibraryStoreError(description: "library.url is \(url), which is not s3://BUCKET/PREFIX")
        }
        return try bucket(address, configuration: configuration, environment: environment, setting: "library.url")
    }

    /// The `BucketLibrary` at `address` (for `library copy --to s3://...`), reached with the
    /// settings' `library.s3` (endpoint, region, addressing) and the environment's credentials.
    public static func bucket(_ address: BucketAddress, configuration: Configuration,
                              environment: [String: String] = ProcessInfo.processInfo.environment) throws -> BucketLibrary {
        try bucket(address, configuration: configuration, environment: environment, setting: nil)
    }

    /// Closes what `open` opened: a bucket's HTTP connections; nothing for a directory. Call it
    /// from a plain thread, once no operation is in flight.
    @available(*, noasync, message: "call the bucket's shutdown() from async code")
    public static func close(_ store: any BlobStore) throws {
        if let bucket = store as? BucketLibrary { try bucket.shutdownBlocking() }
    }

    /// Throws unless the store answers, cheaply, for readiness: a listing of at most one key
    /// under a bucket's prefix; for a directory, that the root (and the backup directory) can
    /// be written. From a plain thread.
    public static func checkReachable(_ store: any BlobStore) throws {
        switch store {
        case let bucket as BucketLibrary:
            try bucket.checkReachable()
        case let library as Library:
            for directory in [library.root] + (library.backupRoot.map { [$0] } ?? []) {
                guard access(directory, W_OK | X_OK) == 0 else { throw FileSystemError.current("write to", directory) }
            }
        default:
            _ = try store.size(of: "originals/00/00/reachable")
        }
    }

    private static func bucket(_ address: BucketAddress, configuration: Configuration,
                               environment: [String: String], setting: String?) throws -> BucketLibrary {
        let named = setting.map { "\($0) is \(address)" } ?? "the library at \(address)"
        let credentials: S3Credentials
        do {
            credentials = try S3Credentials.fromEnvironment(environment)
        } catch {
            let missing = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"].filter {
                (environment[$0]?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "").isEmpty
            }
            let verb = missing.count == 1 ? "is" : "are"
            throw LibraryStoreError(description: "\(named) but \(missing.joined(separator: " and ")) \(verb) not set in the environment")
        }
        let settings = configuration.libraryS3
        let region = settings.effectiveRegion(environment: environment)
        let endpoint = settings.effectiveEndpoint(environment: environment) ?? "https://s3.\(region).amazonaws.com"
        let s3 = S3Configuration(endpoint: endpoint, region: region, bucket: address.bucket,
                                 addressing: settings.effectivePathStyle(environment: environment) ? .pathStyle : .virtualHosted,
                                 credentials: credentials)
        do {
            return try BucketLibrary(configuration: s3, prefix: address.prefix)
        } catch {
            if case .configuration(let reason) = error {
                throw LibraryStoreError(description: "\(named) but \(reason)")
            }
            throw error
        }
    }
}
