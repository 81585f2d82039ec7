#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One image of a benchmark folder and what it shows, from its `manifest.json`.
public struct FixtureEntry: Decodable, Sendable {
    public let file: String
    /// The card number shown, or nil for images with none (backs, receipts).
    public let pan: String?
    public let month: Int?
    public let year: Int?
    public let brand: String?
    /// flat, photo, embossed, back, other, specimen (a sample card: never a card) or failing (a
    /// card whose printed number fails the check digit: unverified, digits as printed).
    public let kind: String
    /// The digits printed on a sample card or a failing one (`pan` is nil for both).
    public let printed: String?
    /// `tune` or `holdout`; older manifests have none (read as tune).
    public let split: String?
    /// Hard conditions: low_contrast, glare, blur, jpeg, small, rotated.
    public let conditions: [String]?
    /// The holder's name printed on the card, where the manifest gives one.
    public let holder: String?

    /// The groups this image counts in: its kind, its split and each of its conditions.
    public var groups: [String] {
        [kind, "split:\(split ?? "tune")"] + (conditions ?? []).map { "condition:\($0)" }
    }
}

/// Reads a folder's `manifest.json`.
public enum FixtureManifest {
    public static func load(folder: String) throws -> [FixtureEntry] {
        let url = URL(fileURLWithPath: folder).appendingPathComponent("manifest.json")
        return try JSONDecoder().decode([FixtureEntry].self, from: Data(contentsOf: url))
    }
}
