// swift-tools-version:6.1
// Card capture and tokenization: read a payment card off an image, validate it, and exchange it for a token.

import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "card-capture",
    products: [
        .executable(name: "capture-cli", targets: ["capture-cli"]),
        .library(name: "CardCapture", targets: ["CardCapture"]),
        .library(name: "OCRBridge", targets: ["OCRBridge"]),
        .library(name: "Tokenizer", targets: ["Tokenizer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2")
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

        // MARK: - Swift modules
        .target(
            name: "OCRBridge",
            dependencies: ["CTesseract", "CLibPNG"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CardCapture",
            dependencies: ["OCRBridge"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Tokenizer",
            dependencies: ["CardCapture"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "capture-cli",
            dependencies: [
                "CardCapture",
                "Tokenizer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
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
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TokenizerTests",
            dependencies: ["Tokenizer"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CaptureCLITests",
            dependencies: ["capture-cli"],
            swiftSettings: swiftSettings
        ),
    ]
)
