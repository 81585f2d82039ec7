// swift-tools-version: 6.1
// The C bridges (OCRBridge: libpng and Tesseract) and their tests, alone, for the run under
// AddressSanitizer in `make test`. The folders are links to the main package's; this package
// has no dependencies, so the sanitized build compiles these few files and not the server's
// libraries (which took most of the five minutes that step used to take).
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "ocr-bridge-asan",
    targets: [
        .systemLibrary(name: "CTesseract", pkgConfig: "tesseract"),
        .target(name: "CLibPNG", linkerSettings: [.linkedLibrary("png16")]),
        .target(name: "OCRBridge", dependencies: ["CTesseract", "CLibPNG"], swiftSettings: swiftSettings),
        .testTarget(
            name: "OCRBridgeTests",
            dependencies: ["OCRBridge"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
    ]
)
