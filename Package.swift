// swift-tools-version:6.0
import PackageDescription

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
    ],
    targets: [
        // The C libraries, found by pkg-config (installed by `make deps`).
        .systemLibrary(name: "CLibJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CLibPNG", pkgConfig: "libpng16", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CEXIF", pkgConfig: "libexif", providers: [.apt(["libexif-dev"])]),
        // Thin C layers: libjpeg and libpng report errors by longjmp, which must never cross a Swift frame.
        .target(name: "CJPEG", dependencies: ["CLibJPEG"]),
        .target(name: "CPNG", dependencies: ["CLibPNG"]),
        // Allocator settings for the worker process (glibc's mallopt is not visible to Swift).
        .target(name: "CRuntime"),

        .target(name: "Imaging", dependencies: ["CJPEG", "CPNG"]),
        .target(name: "PhotoMetadata", dependencies: [
            "CEXIF",
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .target(name: "Moments"),
        // A reproducible generator for the property tests and the benchmark's synthetic data.
        .target(name: "SeededRandom"),
        .target(name: "Catalog", dependencies: [
            "Moments",
            .product(name: "GRDB", package: "GRDB.swift"),
        ]),
        .target(name: "Pipeline", dependencies: [
            "Imaging", "PhotoMetadata", "Moments", "Catalog", "CRuntime",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // Delivery of the outbox's events to the backend's endpoints, signed (issue: webhooks).
        .target(name: "Webhooks", dependencies: [
            "Catalog", "Pipeline",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // `darkroom serve`: the backend's upload hook and read API over HTTP.
        .target(name: "HTTPService", dependencies: [
            "Catalog", "Pipeline", "Webhooks",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            .product(name: "Crypto", package: "swift-crypto"),
        ], exclude: ["openapi.json"]),
        .executableTarget(name: "darkroom", dependencies: [
            "Pipeline", "Catalog", "HTTPService", "Webhooks",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .executableTarget(name: "darkroom-bench", dependencies: [
            "Imaging", "PhotoMetadata", "Moments", "Catalog", "Pipeline", "SeededRandom",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOCore", package: "swift-nio"),
        ]),

        .testTarget(name: "ImagingTests", dependencies: ["Imaging", "SeededRandom"]),
        .testTarget(name: "PhotoMetadataTests", dependencies: ["PhotoMetadata", "SeededRandom"]),
        .testTarget(name: "MomentsTests", dependencies: ["Moments", "SeededRandom"]),
        .testTarget(name: "CatalogTests", dependencies: [
            "Catalog", "Moments", "SeededRandom",
            .product(name: "GRDB", package: "GRDB.swift"),
        ]),
        .testTarget(name: "PipelineTests", dependencies: ["Pipeline"]),
        .testTarget(name: "WebhooksTests", dependencies: [
            "Webhooks", "Catalog", "Pipeline",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "GRDB", package: "GRDB.swift"),
        ]),
        .testTarget(name: "HTTPServiceTests", dependencies: [
            "HTTPService", "Catalog", "Pipeline",
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
            "Catalog",
            .product(name: "GRDB", package: "GRDB.swift"),
        ]),
    ]
)
