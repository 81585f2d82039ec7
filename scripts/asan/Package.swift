// swift-tools-version: 6.1
// The C bridges (OCRBridge: libpng, libjpeg, Tesseract and OpenVINO) and their tests, alone, for the run under
// AddressSanitizer in `make test`. The folders are links to the main package's; this package
// has no dependencies, so the sanitized build compiles these few files and not the server's
// libraries (which took most of the five minutes that step used to take).
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// The learned engine's headers, from `make deps` (scripts/install-learned.py), in the main checkout's .vendor.
let vendor = Context.packageDirectory + "/../../.vendor"

let package = Package(
    name: "ocr-bridge-asan",
    targets: [
        .systemLibrary(name: "CTesseract", pkgConfig: "tesseract"),
        .target(name: "CLibPNG", linkerSettings: [.linkedLibrary("png16")]),
        .target(name: "CLibJPEG", linkerSettings: [.linkedLibrary("jpeg")]),
        .target(
            name: "COpenVINO",
            cSettings: [
                .define("COVINO_VENDOR_DIR", to: "\"\(vendor)\""),
                .unsafeFlags(["-I", vendor + "/openvino/include"]),
            ],
            linkerSettings: [.linkedLibrary("dl")]
        ),
        .target(name: "OCRBridge", dependencies: ["CTesseract", "CLibPNG", "CLibJPEG", "COpenVINO"], swiftSettings: swiftSettings),
        .testTarget(
            name: "OCRBridgeTests",
            dependencies: ["OCRBridge"],
            // OpenVINO's thread pool (TBB) opens a library with RTLD_DEEPBIND, which the sanitizer
            // runtime refuses outright (google/sanitizers#611), so the learned recognizer's tests
            // run in the plain build only (the recognizer's and the detector's); its C bridge is
            // still compiled here, sanitized.
            exclude: ["LineRecognizerTests.swift", "TextDetectorTests.swift"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
    ]
)
