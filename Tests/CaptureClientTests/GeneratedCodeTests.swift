import Crypto
import Foundation
import Testing

/// The client's generated half is committed (building swift-openapi-generator would take CI
/// minutes): each file names the SHA-256 of the openapi.json it was made from, and this test
/// holds them to the document the server serves.
@Suite("The generated client")
struct GeneratedCodeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("every generated file was made from the openapi.json of this checkout (else run `make client`)")
    func madeFromTheDocument() throws {
        let document = try Data(contentsOf: Self.root.appending(path: "Sources/CaptureServer/openapi.json"))
        let digest = SHA256.hash(data: document).map { String(format: "%02x", $0) }.joined()
        let folder = Self.root.appending(path: "Sources/CaptureClient/Generated")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }.sorted()
        #expect(files.contains("Client.swift") && files.contains("Types.swift"), "\(files)")
        for file in files {
            let text = try String(contentsOf: folder.appending(path: file), encoding: .utf8)
            let line = text.split(separator: "\n").first { $0.hasPrefix("// openapi.json SHA-256: ") }
            #expect(
                line == "// openapi.json SHA-256: \(digest)",
                "\(file) was generated from another openapi.json (\(line ?? "no digest")): run `make client` and commit Sources/CaptureClient/Generated"
            )
        }
    }
}
