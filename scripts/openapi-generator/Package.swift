// swift-tools-version:6.1
// The tool that writes Sources/CaptureClient/Generated from the server's openapi.json (`make client`).
// A package of its own, built into its own folder, so that neither the product nor `make test`
// builds the generator: the generated files are committed, and a test checks they match the document.

import PackageDescription

let package = Package(
    name: "capture-openapi-generator",
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator.git", exact: "1.14.3")
    ]
)
