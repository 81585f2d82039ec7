import Foundation

/// Paths of the tiny PNG files in this target's Fixtures folder (see Fixtures/make_pngs.py).
enum FixtureFiles {
    static func path(_ name: String) -> String {
        guard let url = Bundle.module.url(forResource: "Fixtures/\(name)", withExtension: nil) else {
            fatalError("missing test fixture \(name); run Tests/OCRBridgeTests/Fixtures/make_pngs.py")
        }
        return url.path
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path(name))))
    }
}
