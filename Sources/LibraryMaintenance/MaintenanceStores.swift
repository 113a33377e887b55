import BucketStorage
import Foundation
import Logging
import Settings
import Storage

/// The stores `library check` and `library copy` work on, opened from the settings.
public enum MaintenanceStores {
    /// The store the settings name: the bucket of `library.url` when set, else the directory
    /// `library.root`. Close it with `close` once done.
    public static func configured(_ configuration: Configuration,
                                  environment: [String: String] = ProcessInfo.processInfo.environment) throws(LibraryMaintenanceError) -> any MaintainedStore {
        let opened: any BlobStore
        do {
            opened = try LibraryStores.open(configuration, environment: environment)
        } catch {
            throw LibraryMaintenanceError("\(error)", category: .configuration)
        }
        switch opened {
        case let bucket as BucketLibrary: return BucketStore(bucket)
        case let library as Library: return DirectoryStore(root: library.root)
        default: throw LibraryMaintenanceError("the library at \(opened.location) is a store that cannot be checked", category: .configuration)
        }
    }

    /// Closes a bucket's connections (nothing for a directory); once no call is in flight.
    public static func close(_ store: any MaintainedStore) async {
        if let bucket = store as? BucketStore { try? await bucket.bucket.shutdown() }
    }
}

extension LibraryCopy {
    /// Copies the local library at `sourceRoot` into the bucket at `address`, reached as the
    /// settings' `library.s3` and the environment's credentials say (see `run`).
    public static func copy(from sourceRoot: String, to address: BucketAddress, configuration: Configuration,
                            references: LibraryReferences, concurrency: Int = Self.defaultConcurrency,
                            environment: [String: String] = ProcessInfo.processInfo.environment,
                            logger: Logger, progress: LibraryCopyProgress,
                            stop: StopRequest) async throws(LibraryMaintenanceError) -> LibraryCopySummary {
        let bucket: BucketLibrary
        do {
            bucket = try LibraryStores.bucket(address, configuration: configuration, environment: environment)
        } catch {
            throw LibraryMaintenanceError("\(error)", category: .configuration)
        }
        let copy = LibraryCopy(sourceRoot: sourceRoot, target: bucket, references: references, concurrency: concurrency, logger: logger)
        let result: Result<LibraryCopySummary, LibraryMaintenanceError>
        do {
            result = .success(try await copy.run(progress: progress, stop: stop))
        } catch {
            result = .failure(error)
        }
        try? await bucket.shutdown()
        return try result.get()
    }
}
