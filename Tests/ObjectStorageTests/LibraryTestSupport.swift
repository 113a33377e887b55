import BucketStorage
import Crypto
import Foundation
import GatewayHarness
@testable import ObjectStorage
import Storage
#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` on a thread of its own, as the worker's threads call a `BlobStore` (the bucket's
/// `blocking` calls may not run on a task of the concurrency pool), and hands back its result.
/// Expectations stay in the calling test: only values cross.
func onPlainThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result(catching: body)) }
        thread.start()
    }
}

/// One store under test, the local directory or a bucket of the shared gateway, with a scratch
/// folder of its own for source files. `close()` removes what it made.
final class LibraryFixture: Sendable {
    enum Kind: String, Sendable {
        case directory
        case bucket
    }

    let kind: Kind
    let store: any BlobStore
    /// The bucket's library (its client and statistics), for the bucket.
    let bucket: BucketLibrary?
    /// The local library, for the directory.
    let library: Library?
    /// A folder for source files, removed by `close()`.
    let scratch: String

    private init(kind: Kind, store: any BlobStore, bucket: BucketLibrary?, library: Library?, scratch: String) {
        self.kind = kind
        self.store = store
        self.bucket = bucket
        self.library = library
        self.scratch = scratch
    }

    /// A fresh store of `kind`: an empty temporary directory, or an empty bucket of the shared
    /// gateway with the library under `library/` (so that keys are relative to a prefix).
    static func make(_ kind: Kind) throws -> LibraryFixture {
        let base = FileManager.default.temporaryDirectory.path + "/darkroom-conformance-" + UUID().uuidString.prefix(8).lowercased()
        let scratch = base + "/scratch"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        switch kind {
        case .directory:
            let library = try Library(root: base + "/library", backupRoot: nil)
            return LibraryFixture(kind: kind, store: library, bucket: nil, library: library, scratch: scratch)
        case .bucket:
            let gateway = try SharedGateway.gateway.get()
            let name = try SharedGateway.freshBucket(prefix: "library")
            let bucket = try BucketLibrary(configuration: gatewayConfiguration(gateway, bucket: name), prefix: "library")
            return LibraryFixture(kind: kind, store: bucket, bucket: bucket, library: nil, scratch: scratch)
        }
    }

    /// Runs `body` with a fresh store of `kind`, closing it however `body` ends.
    static func with(_ kind: Kind, _ body: (LibraryFixture) async throws -> Void) async throws {
        // On a plain thread: the shared gateway may be starting, and curl makes the bucket.
        let fixture = try await onPlainThread { try make(kind) }
        do {
            try await body(fixture)
            try await fixture.close()
        } catch {
            try? await fixture.close()
            throw error
        }
    }

    /// Calls the store from a plain thread.
    func call<T: Sendable>(_ body: @escaping @Sendable (any BlobStore) throws -> T) async throws -> T {
        let store = store
        return try await onPlainThread { try body(store) }
    }

    /// The bucket's counters now (empty for the directory).
    func statistics() -> ObjectStorageStatistics.Snapshot {
        bucket?.statistics.snapshot() ?? ObjectStorageStatistics.Snapshot()
    }

    /// A file's inode and modification time (nanoseconds), for the directory; nil when absent.
    func fileIdentity(_ relative: String) -> FileIdentity? {
        guard let library else { return nil }
        return FileIdentity(path: library.absolute(relative))
    }

    func close() async throws {
        try await bucket?.shutdown()
        try? FileManager.default.removeItem(atPath: (scratch as NSString).deletingLastPathComponent)
    }
}

/// What tells one file from a rewrite of it: its inode and modification time.
struct FileIdentity: Equatable, CustomStringConvertible {
    var inode: UInt64
    var modifiedNanoseconds: Int64

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        inode = UInt64(info.st_ino)
        modifiedNanoseconds = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    }

    var description: String { "inode \(inode), mtime \(modifiedNanoseconds) ns" }
}

/// The client's settings for a bucket of `gateway`: path-style, its keys and region.
func gatewayConfiguration(_ gateway: RadosGateway, bucket: String) -> S3Configuration {
    S3Configuration(endpoint: gateway.endpoint.absoluteString, region: gateway.region, bucket: bucket, addressing: .pathStyle,
                    credentials: S3Credentials(accessKey: gateway.accessKey, secretKey: gateway.secretKey))
}

/// Reproducible bytes standing in for a photo (SplitMix64), and their SHA-256.
struct SamplePhoto: Sendable {
    let bytes: [UInt8]
    let sha256: String

    init(seed: UInt64, count: Int) {
        var state = seed
        var words = [UInt64](repeating: 0, count: (count + 7) / 8)
        for index in words.indices {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            words[index] = z ^ (z >> 31)
        }
        self.init(words.withUnsafeBytes { Array($0.prefix(count)) })
    }

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        sha256 = sha256Hex(bytes)
    }

    /// `count` random bytes written to a new file at `path` (from /dev/urandom, which is quicker
    /// than a generator in a debug build), and read back.
    static func file(at path: String, count: Int) throws -> SamplePhoto {
        let random = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom"))
        defer { try? random.close() }
        var data = Data(capacity: count)
        while data.count < count {
            guard let chunk = try random.read(upToCount: min(8 << 20, count - data.count)), !chunk.isEmpty else { break }
            data.append(chunk)
        }
        try data.write(to: URL(fileURLWithPath: path))
        return SamplePhoto([UInt8](data))
    }
}

/// The lowercase hex SHA-256 of `bytes`.
func sha256Hex(_ bytes: [UInt8]) -> String {
    SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
}
