/// Tallies scan results against what the images show: recall (right number over cards
/// with a number), precision (right number over numbers reported), expiry accuracy and
/// time, overall and per group (kind, split, condition).
public struct Scoreboard: Sendable {
    public struct Tally: Sendable, Equatable {
        public var images = 0
        /// Images that show a card number.
        public var cards = 0
        /// Numbers reported that match the image.
        public var right = 0
        /// Numbers reported at all.
        public var reported = 0
        /// Cards whose expiry month and year were read right.
        public var expiryRight = 0
        /// Images whose reported number was wrong (never the number itself).
        public var wrongFiles: [String] = []
        public var milliseconds: [Double] = []

        public var recall: Double { cards == 0 ? .nan : Double(right) / Double(cards) }
        public var precision: Double { reported == 0 ? .nan : Double(right) / Double(reported) }
        public var expiryAccuracy: Double { cards == 0 ? .nan : Double(expiryRight) / Double(cards) }
        public var medianMilliseconds: Double { Self.percentile(milliseconds, 0.5) }
        public var p95Milliseconds: Double { Self.percentile(milliseconds, 0.95) }

        static func percentile(_ values: [Double], _ share: Double) -> Double {
            guard !values.isEmpty else { return .nan }
            let sorted = values.sorted()
            let position = share * Double(sorted.count - 1)
            let low = Int(position.rounded(.down))
            let high = min(sorted.count - 1, low + 1)
            return sorted[low] + (sorted[high] - sorted[low]) * (position - Double(low))
        }
    }

    public private(set) var overall = Tally()
    public private(set) var groups: [String: Tally] = [:]

    public init() {}

    /// Counts one image.
    ///
    /// - Parameters:
    ///   - entry: what the image shows.
    ///   - pan: the digits reported, or nil.
    ///   - expiry: the month and year reported, or nil.
    ///   - milliseconds: how long the scan took.
    public mutating func add(_ entry: FixtureEntry, pan: String?, expiry: (month: Int, year: Int)?, milliseconds: Double) {
        func update(_ tally: inout Tally) {
            tally.images += 1
            tally.milliseconds.append(milliseconds)
            if pan != nil { tally.reported += 1 }
            if let want = entry.pan {
                tally.cards += 1
                if pan == want { tally.right += 1 }
                if let expiry, expiry.month == entry.month, expiry.year == entry.year { tally.expiryRight += 1 }
            }
            if let pan, pan != entry.pan { tally.wrongFiles.append(entry.file) }
        }
        update(&overall)
        for group in entry.groups { update(&groups[group, default: Tally()]) }
    }
}
