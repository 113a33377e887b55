// swift-tools-version:6.0
import PackageDescription

/// The C layers are compiled in debug builds as release builds compile them (-O2), so that the
/// tests, which run debug builds, run the C that ships: an error path in CJPEG read libjpeg's
/// struct wrongly only when optimised, and the AVX2 transforms, unoptimised, took four fifths of
/// a debug worker's CPU (the end-to-end tests run debug workers by the hundred).
let shippedC: [CSetting] = [.unsafeFlags(["-O2"], .when(configuration: .debug))]

let package = Package(
    name: "Darkroom",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "darkroom", targets: ["darkroom"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // Already in the graph through Hummingbird: its thread pool and service lifecycle.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The job queue in PostgreSQL, for workers on several machines.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // The C libraries, found by pkg-config (installed by `make deps`).
        .systemLibrary(name: "CLibJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CLibPNG", pkgConfig: "libpng16", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CEXIF", pkgConfig: "libexif", providers: [.apt(["libexif-dev"])]),
        // HEIC, HEIF and AVIF; Debian 12's libheif1 carries its HEVC (libde265) and AV1 (dav1d, aom) decoders.
        .systemLibrary(name: "CLibHEIF", pkgConfig: "libheif", providers: [.apt(["libheif-dev"])]),
        // Colour management: photos with a wider profile than sRGB are converted to it.
        .systemLibrary(name: "CLibLCMS", pkgConfig: "lcms2", providers: [.apt(["liblcms2-dev"])]),
        // WebP variants: libwebp's encoder and muxer (for the ICC profile).
        .systemLibrary(name: "CLibWebP", pkgConfig: "libwebpmux", providers: [.apt(["libwebp-dev"])]),
        // Thin C layers: libjpeg and libpng report errors by longjmp, which must never cross a Swift
        // frame. CJPEG also holds the AVX2 inverse and forward DCTs that replace libjpeg-turbo's scaled ones.
        .target(name: "CJPEG", dependencies: ["CLibJPEG", "CDeadline"], cSettings: shippedC),
        .target(name: "CPNG", dependencies: ["CLibPNG", "CDeadline"], cSettings: shippedC),
        // libheif reports by return value; this layer releases its objects on every path and checks the pixel limit first.
        .target(name: "CHEIF", dependencies: ["CLibHEIF", "CDeadline"], cSettings: shippedC),
        // libwebp reports by return value; this layer releases its objects and embeds the profile.
        .target(name: "CWebP", dependencies: ["CLibWebP"], cSettings: shippedC),
        // lcms2 reports by return value; this layer releases its profiles and transforms.
        .target(name: "CColour", dependencies: ["CLibLCMS"], cSettings: shippedC),
        // Allocator settings for the worker process (glibc's mallopt is not visible to Swift).
        .target(name: "CRuntime", cSettings: shippedC),
        .target(name: "CDeadline", cSettings: shippedC),
        // The resampler's passes, in C so that they vectorise (8 lanes with AVX2, chosen at run time;
        // -Wno-psabi: its 8-lane helpers are always inlined, so their baseline-ABI notes do not apply).
        .target(name: "CResample", cSettings: [.unsafeFlags(["-O3", "-Wno-psabi"])]),
        // The build's commit and date (build_info.h, written by `make buildinfo`) and the C
        // libraries' versions.
        .target(name: "CBuildInfo", dependencies: ["CLibJPEG", "CLibPNG", "CLibHEIF", "CLibWebP", "CLibLCMS"],
                cSettings: shippedC, linkerSettings: [.linkedLibrary("sqlite3")]),
        .target(name: "BuildInfo", dependencies: ["CBuildInfo"]),

        // What kind of failure stopped a photo: the category every error type carries.
        .target(name: "Failures"),
        // One JSON value type: sidecars are read into it, outbox payloads are written from it.
        .target(name: "JSONValues"),
        .target(name: "Imaging", dependencies: ["CJPEG", "CPNG", "CHEIF", "CWebP", "CColour", "CDeadline", "CResample", "Failures"]),
        // GeoNames' cities (cities1000.bin, from tools/gazetteer): the nearest place's name and
        // a time zone for any point, offline. The data file is read from the source folder or
        // where `make install` puts it (share/darkroom/), not as a resource bundle.
        .target(name: "Gazetteer", exclude: ["README.md", "cities1000.bin"]),
        // What a photo's bytes and sidecars say: EXIF (JPEG, PNG, HEIF), maker-note zones, times as text, the sidecar formats.
        .target(name: "MetadataReading", dependencies: ["CEXIF", "CHEIF", "Failures", "JSONValues"]),
        // Which capture time and place win among what was read, and the photo's identity: `PhotoMetadata.read`.
        .target(name: "PhotoMetadata", dependencies: [
            "CHEIF", "Gazetteer", "JSONValues", "MetadataReading",
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .target(name: "Moments"),
        // A reproducible generator for the property tests and the benchmark's synthetic data.
        .target(name: "SeededRandom"),
        .target(name: "Catalog", dependencies: [
            "Failures", "Gazetteer", "JSONValues", "Moments",
            .product(name: "GRDB", package: "GRDB.swift"),
        ]),
        // The import's runs and its journal of files in the catalog: what `darkroom import`
        // resumes from and `status` lists.
        .target(name: "CatalogImports", dependencies: [
            "Catalog",
            .product(name: "GRDB", package: "GRDB.swift"),
        ]),
        // Synthetic pictures for the tests of both catalog stores.
        .target(name: "CatalogFixtures", dependencies: ["Catalog", "SeededRandom"]),
        // The `server` and `webhooks` settings alone, so that what needs only them (webhook
        // delivery) does not depend on the imaging stack.
        .target(name: "ServiceSettings"),
        // `pipeline.json`: every setting, its defaults and its checks.
        .target(name: "Settings", dependencies: ["ServiceSettings", "Imaging", "JSONValues", "Moments"]),
        // Log lines and progress bars on a terminal or for a log collector.
        .target(name: "Terminal", dependencies: [.product(name: "Logging", package: "swift-log")]),
        // The spool (incoming, processing, failed, staging, the watcher) and the library of
        // originals and variants: files, fsync, rename.
        .target(name: "Storage", dependencies: ["CRuntime", "Failures", "Imaging"]),
        // One photo from bytes to a committed picture, the worker pool, retries, the pixel
        // budget and the failures' categories.
        .target(name: "Ingest", dependencies: [
            "Settings", "Storage", "Terminal", "Failures", "Imaging", "JSONValues", "MetadataReading", "PhotoMetadata", "Moments", "Catalog", "CRuntime",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // `darkroom import`: walking a photo library, sidecars, the journal, report and progress.
        .target(name: "LibraryImport", dependencies: [
            "Ingest", "Settings", "Storage", "Terminal", "Failures", "Imaging", "MetadataReading", "PhotoMetadata", "Catalog", "CatalogImports",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // What the command line and the HTTP API both ask: moment views and exports,
        // declarations, inspect, checks of request fields.
        .target(name: "Operations", dependencies: [
            "Settings", "Storage", "Imaging", "JSONValues", "MetadataReading", "PhotoMetadata", "Moments", "Catalog",
        ]),
        // Delivery of the outbox's events to the backend's endpoints, signed.
        .target(name: "Webhooks", dependencies: [
            "Catalog", "ServiceSettings",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // Darkroom's own S3 client (AsyncHTTPClient, SigV4 with swift-crypto): objects put, read,
        // streamed, listed, presigned; large files in parts; retries and statistics.
        .target(name: "ObjectStorage", dependencies: [
            "Failures",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ]),
        // The library of originals and variants in an S3 bucket behind `BlobStore`, and the
        // store the settings name (`library.url`, else `library.root`).
        .target(name: "BucketStorage", dependencies: ["Failures", "ObjectStorage", "Settings", "Storage"]),
        // `darkroom library copy` (a local library into a bucket, resumable, every object
        // verified) and `library check` (orphans and missing files of either store, and repair).
        .target(name: "LibraryMaintenance", dependencies: [
            "BucketStorage", "Catalog", "Failures", "Imaging", "ObjectStorage", "PostgresCatalog", "Settings", "Storage", "Terminal",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
        ]),
        // PostgreSQL for the catalog and the queue: `postgres://` addresses, a blocking
        // connection pool for the worker's threads, transactions retried when they lose a race,
        // migrations by name, records to and from rows.
        .target(name: "PostgresStore", dependencies: [
            "Failures",
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The job queue in PostgreSQL: jobs inserted with what records them, claimed exclusively
        // (SKIP LOCKED) under a lease that a live worker renews and a dead one's loses.
        .target(name: "PostgresQueue", dependencies: [
            "Failures", "PostgresStore",
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The catalog in PostgreSQL: the same records, moments engine and outbox as the SQLite
        // catalog, behind the same seam, for workers on several machines.
        .target(name: "PostgresCatalog", dependencies: [
            "Catalog", "CatalogImports", "Moments", "PostgresStore", "PostgresQueue",
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // `darkroom catalog copy`: an SQLite catalog into an empty PostgreSQL one, ids kept, resumable, counts checked.
        .target(name: "CatalogCopy", dependencies: [
            "Catalog", "Failures", "PostgresCatalog", "PostgresStore", "Terminal",
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // A throwaway PostgreSQL cluster (initdb in a temporary directory, a free port) for the
        // tests and the benchmark; it stops and is removed when they are done.
        .target(name: "PostgresHarness", dependencies: ["ChildProcesses", "PostgresStore"]),
        // A real S3 server for the tests and the benchmark: Ceph's RADOS Gateway on a one-node
        // cluster (one monitor, one OSD in memory) in a temporary directory, on loopback ports.
        .target(name: "GatewayHarness", dependencies: ["ChildProcesses"]),
        // `multipart/form-data` read as it streams in, with limits checked as the bytes arrive.
        .target(name: "Multipart"),
        // The long-running parts of `serve` and `run` as services of swift-service-lifecycle.
        .target(name: "LifecycleServices", dependencies: [
            "Ingest", "Terminal", "Webhooks",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // What `darkroom serve` says of itself: the counters and histograms of `/metrics` in the
        // Prometheus text format, the process's resources, request ids, the readiness checks' threads.
        .target(name: "ServiceObservability", dependencies: [
            "BucketStorage", "BuildInfo", "Catalog", "Failures", "ObjectStorage", "Storage",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ]),
        // The channel handlers that protect `serve` from hostile or slow clients: connections per
        // client, the request head's timeout, a request's deadline and rate, `100-continue`.
        .target(name: "ConnectionDefences", dependencies: [
            "ServiceObservability",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ]),
        // `darkroom serve`: the backend's upload hook and read API over HTTP.
        .target(name: "HTTPService", dependencies: [
            "Catalog", "Failures", "Imaging", "Ingest", "JSONValues", "Moments", "Operations",
            "LifecycleServices", "Multipart", "Settings", "Storage", "Terminal", "Webhooks", "BucketStorage",
            "ConnectionDefences", "ServiceObservability",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ], resources: [.embedInCode("openapi.json")]),
        .executableTarget(name: "darkroom", dependencies: [
            "BuildInfo", "Catalog", "CatalogCopy", "CatalogImports", "HTTPService", "Imaging", "Ingest", "JSONValues", "LibraryImport", "LibraryMaintenance", "MetadataReading", "Moments", "Operations",
            "PhotoMetadata", "PostgresCatalog", "PostgresStore", "ServiceSettings", "Settings", "Storage", "Terminal", "Webhooks",
            "BucketStorage",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // For tests that start child processes: a wait for one's end that gives up (and kills it)
        // instead of hanging the run.
        .target(name: "ChildProcesses"),
        // What every benchmark uses: arguments, the machine's clocks and memory, child processes, tables and verdicts.
        .target(name: "BenchKit", dependencies: ["SeededRandom"]),
        // What the PostgreSQL benchmarks share: the queue's benchmark (claim, renew, complete
        // cycles a second), the cluster they measure against, the server's counters per run.
        .target(name: "PostgresBench", dependencies: [
            "BenchKit", "PostgresQueue", "PostgresStore", "PostgresHarness",
            .product(name: "PostgresNIO", package: "postgres-nio"),
        ]),
        // The benchmarks' inputs: 12 MP photo sets (windows of a corpus photo with its EXIF, or a
        // generated picture) and a synthetic library of outings and declared moments.
        .target(name: "BenchInputs", dependencies: ["BenchKit", "Imaging", "Moments", "SeededRandom"]),
        .executableTarget(name: "darkroom-bench", dependencies: [
            "BenchKit", "BenchInputs", "Gazetteer", "Imaging", "PhotoMetadata", "Moments", "Catalog", "Ingest", "LibraryImport", "Settings", "Storage",
            "SeededRandom", "PostgresHarness", "PostgresCatalog", "PostgresBench", "GatewayHarness",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOCore", package: "swift-nio"),
        ]),

        .testTarget(name: "ImagingTests", dependencies: ["ChildProcesses", "Imaging", "Failures", "SeededRandom"]),
        .testTarget(name: "PostgresCatalogTests", dependencies: [
            "PostgresCatalog", "PostgresStore", "PostgresHarness", "Catalog", "CatalogFixtures", "CatalogImports", "Moments", "SeededRandom",
        ]),
        .testTarget(name: "CatalogCopyTests", dependencies: [
            "ChildProcesses", "CatalogCopy", "Catalog", "CatalogFixtures", "CatalogImports", "Failures", "HTTPService", "JSONValues", "Moments", "Operations",
            "PostgresCatalog", "PostgresHarness", "PostgresStore", "Settings",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
        ]),
        .testTarget(name: "PostgresQueueTests", dependencies: ["PostgresQueue", "PostgresStore", "PostgresHarness", "Failures"]),
        .testTarget(name: "PhotoMetadataTests", dependencies: ["Gazetteer", "MetadataReading", "PhotoMetadata", "SeededRandom"]),
        .testTarget(name: "MomentsTests", dependencies: ["Moments", "SeededRandom"]),
        .testTarget(name: "CatalogTests", dependencies: [
            "Catalog", "CatalogFixtures", "Failures", "Moments", "SeededRandom",
            .product(name: "GRDB", package: "GRDB.swift"),
        ]),
        .testTarget(name: "SettingsTests", dependencies: ["Settings", "ServiceSettings", "Imaging", "Moments"]),
        .testTarget(name: "StorageTests", dependencies: ["Storage"]),
        .testTarget(name: "TerminalTests", dependencies: ["Terminal"]),
        .testTarget(name: "IngestTests", dependencies: [
            "Ingest", "Settings", "Storage", "Catalog", "Failures", "Imaging", "PhotoMetadata",
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "LibraryImportTests", dependencies: [
            "LibraryImport", "Catalog", "Failures", "Ingest", "MetadataReading", "PhotoMetadata", "Settings", "Storage",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "MultipartTests", dependencies: ["Multipart"]),
        .testTarget(name: "WebhooksTests", dependencies: [
            "Webhooks", "Catalog", "ServiceSettings", "PostgresCatalog", "PostgresHarness", "PostgresStore",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "GRDB", package: "GRDB.swift"),
        ]),
        .testTarget(name: "HTTPServiceTests", dependencies: [
            "BucketStorage", "ChildProcesses", "HTTPService", "ServiceObservability", "Catalog", "Failures", "Ingest", "ServiceSettings", "Settings", "Storage", "PostgresCatalog", "PostgresHarness",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .testTarget(name: "EndToEndTests", dependencies: [
            "ChildProcesses", "Catalog", "CatalogImports", "GatewayHarness", "PostgresCatalog", "PostgresHarness", "PostgresStore",
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
        ]),
        .testTarget(name: "ObjectStorageTests", dependencies: [
            "GatewayHarness", "ChildProcesses", "ObjectStorage", "Failures", "BucketStorage", "Storage", "Settings",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ]),
    ]
)
