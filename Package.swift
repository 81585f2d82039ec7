// swift-tools-version:6.1
// Card capture and tokenization: read a payment card off an image, validate it, and exchange it for a token.

import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// The image work (decoding, transforms, the scanner's search) is optimized in debug builds
/// too: unoptimized, a scan took 2 to 4 s and the fixture test most of `make test`'s minutes.
/// Everything else stays debuggable.
let imageWorkSettings = swiftSettings + [.unsafeFlags(["-O"], .when(configuration: .debug))]

/// What `make deps` installs for the learned engine (scripts/install-learned.py): OpenVINO's C
/// headers, its libraries and the models, in the checkout's git-ignored .vendor folder. The
/// headers are needed to build COpenVINO's full bridge (without them it builds as a stub that
/// says to run the set-up); the libraries are opened at run time, never linked.
let vendor = Context.packageDirectory + "/.vendor"

let package = Package(
    name: "card-capture",
    products: [
        .executable(name: "capture-cli", targets: ["capture-cli"]),
        .library(name: "CardCapture", targets: ["CardCapture"]),
        .library(name: "OCRBridge", targets: ["OCRBridge"]),
        .library(name: "Tokenizer", targets: ["Tokenizer"]),
        .library(name: "Payments", targets: ["Payments"]),
        .library(name: "SQLiteVault", targets: ["SQLiteVault"]),
        .library(name: "PostgresVault", targets: ["PostgresVault"]),
        .library(name: "CaptureServer", targets: ["CaptureServer"]),
        .library(name: "CaptureClient", targets: ["CaptureClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.100.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
    ],
    targets: [
        // MARK: - C libraries
        .systemLibrary(
            name: "CTesseract",
            pkgConfig: "tesseract",
            providers: [.apt(["libtesseract-dev", "tesseract-ocr-eng"])]
        ),
        .target(
            name: "CLibPNG",
            linkerSettings: [.linkedLibrary("png16")]
        ),
        // libjpeg-turbo's libjpeg API (Debian's libjpeg62-turbo-dev): phones' photos.
        .target(
            name: "CLibJPEG",
            linkerSettings: [.linkedLibrary("jpeg")]
        ),

        .target(
            name: "COpenVINO",
            cSettings: [
                .define("COVINO_VENDOR_DIR", to: "\"\(vendor)\""),
                .unsafeFlags(["-I", vendor + "/openvino/include"]),
            ],
            linkerSettings: [.linkedLibrary("dl")]
        ),

        // MARK: - Swift modules
        .target(
            name: "OCRBridge",
            dependencies: ["CTesseract", "CLibPNG", "CLibJPEG", "COpenVINO"],
            swiftSettings: imageWorkSettings
        ),
        .target(
            name: "CardCapture",
            dependencies: ["OCRBridge"],
            // The card-digit model (`make model`; Models/README.md says how it was trained).
            resources: [.copy("Resources/card.traineddata")],
            swiftSettings: imageWorkSettings
        ),
        // The vault (tokens, scans, keys and sealing, ids) and the store contract with its records:
        // no HTTP, no database, no payment flow in here.
        .target(
            name: "Tokenizer",
            dependencies: [
                "CardCapture",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The payment flows on the store contract: charges, refunds, clients and saved cards,
        // checkout sessions, webhooks and events, the processor, return and webhook addresses.
        .target(
            name: "Payments",
            dependencies: [
                "Tokenizer",
                "CardCapture",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The vault on SQLite (GRDB): one server's vault in a file, the store contract's first
        // implementation, beside PostgresVault.
        .target(
            name: "SQLiteVault",
            dependencies: [
                "Tokenizer",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's own calls, for the writer's busiest statements (DirectStatement).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The vault on PostgreSQL, for several servers sharing one vault: the store and its
        // driver apart from the vault's core, which knows only the VaultStore protocol.
        .target(
            name: "PostgresVault",
            dependencies: [
                "Tokenizer",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The HTTP API over the vault.
        .target(
            name: "CaptureServer",
            dependencies: [
                "Tokenizer",
                "Payments",
                "OCRBridge",
                .product(name: "Hummingbird", package: "hummingbird"),
                // `serve --tls-cert --tls-key`: HTTPS itself, over swift-nio-ssl.
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                // The HTTP/1 head conversion's errors, answered as JSON before routing.
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Mustache", package: "swift-mustache"),
                // Webhook deliveries: timeouts, no redirects followed, on the server's own NIO.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            resources: [.copy("openapi.json"), .copy("Pages")],
            swiftSettings: swiftSettings
        ),
        // The official Swift client of the HTTP API: swift-openapi-generator's code from openapi.json
        // (Generated/, `make client`) and what a payments SDK adds to it. Nothing of the vault, the
        // scanner or the server: an app brings the transport (AsyncHTTPClient, URLSession).
        .target(
            name: "CaptureClient",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // HMAC-SHA256 for webhook signatures.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "capture-cli",
            dependencies: [
                "CardCapture",
                "Tokenizer",
                "Payments",
                "SQLiteVault",
                "PostgresVault",
                "CaptureServer",
                "CaptureClient",
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: - Tests
        .testTarget(
            name: "OCRBridgeTests",
            dependencies: ["OCRBridge"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CardCaptureTests",
            dependencies: ["CardCapture", "OCRBridge"],
            // Read from the source tree (#filePath), never copied.
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        // What the vault's and the API's tests share: the two stores they run against.
        .target(
            name: "StoreTestSupport",
            dependencies: ["Tokenizer", "Payments", "SQLiteVault", "PostgresVault", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Tests/StoreTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TokenizerTests",
            dependencies: [
                "Tokenizer", "Payments", "SQLiteVault", "StoreTestSupport", "PostgresVault", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CaptureServerTests",
            dependencies: [
                "CaptureServer",
                // Webhook deliveries read as a merchant's endpoint reads them.
                "CaptureClient",
                "CardCapture",
                "Tokenizer",
                "Payments",
                "SQLiteVault",
                "StoreTestSupport",
                "PostgresVault",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        // The Swift client against a live server: retries behind a proxy that drops an answer,
        // pagination, webhook signatures, and the generated files against the document.
        .testTarget(
            name: "CaptureClientTests",
            dependencies: [
                "CaptureClient",
                "CaptureServer",
                "Tokenizer",
                "Payments",
                "StoreTestSupport",
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CaptureCLITests",
            // Tokenizer for what a test signs as the server would; OCRBridge for the phone photos a
            // test writes; a PostgreSQL database of its own for the tests of a shared vault.
            dependencies: ["capture-cli", "Tokenizer", "Payments", "StoreTestSupport", "OCRBridge"],
            swiftSettings: swiftSettings
        ),
    ]
)
