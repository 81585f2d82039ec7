/// A card scheme, with the lengths, CVC size and digit grouping its cards use.
///
/// ```swift
/// let brand = CardBrand.detect("378282246310005")   // .amex
/// brand?.grouping(forLength: 15)                   // [4, 6, 5]
/// ```
public struct CardBrand: Sendable, Hashable, CustomStringConvertible {
    /// The brand's identifier as it appears in JSON: `visa`, `mastercard`, `amex`, ….
    public let id: String
    /// The brand's name for people: `Visa`, `American Express`, ….
    public let displayName: String
    /// Every number length the brand issues.
    public let lengths: [Int]
    /// Digits in the card's security code.
    public let cvcLength: Int

    init(_ id: String, _ displayName: String, lengths: [Int], cvcLength: Int = 3) {
        self.id = id
        self.displayName = displayName
        self.lengths = lengths
        self.cvcLength = cvcLength
    }

    public var description: String { id }

    /// How the brand prints a number of `length` digits, as group sizes.
    ///
    /// American Express prints 4-6-5, Diners Club's 14-digit cards 4-6-4; everything else
    /// groups by four, with a short last group (19 digits: 4-4-4-4-3).
    public func grouping(forLength length: Int) -> [Int] {
        if self == .amex && length == 15 { return [4, 6, 5] }
        if self == .diners && length == 14 { return [4, 6, 4] }
        var groups = Array(repeating: 4, count: length / 4)
        if length % 4 != 0 { groups.append(length % 4) }
        return groups
    }

    /// Every way the brand's cards print a number of `length` digits: ``grouping(forLength:)``
    /// first, then the others seen on real cards (China's 19-digit cards print 6-13 as often
    /// as 4-4-4-4-3; 16- and 19-digit cards also print 4-4-4-4 with the rest, or 6-10).
    public func groupings(forLength length: Int) -> [[Int]] {
        var all = [grouping(forLength: length)]
        if length >= 16, length <= 19, length % 4 != 0 || length == 16 {
            all.append([6, length - 6])
        }
        return all
    }

    /// The longest number the brand issues.
    public var maximumLength: Int { lengths.max() ?? 19 }

    // MARK: - Brands

    public static let visa = CardBrand("visa", "Visa", lengths: [13, 16, 19])
    public static let mastercard = CardBrand("mastercard", "Mastercard", lengths: [16])
    public static let amex = CardBrand("amex", "American Express", lengths: [15], cvcLength: 4)
    public static let discover = CardBrand("discover", "Discover", lengths: [16, 17, 18, 19])
    public static let diners = CardBrand("diners", "Diners Club", lengths: [14, 15, 16, 17, 18, 19])
    public static let jcb = CardBrand("jcb", "JCB", lengths: [16, 17, 18, 19])
    public static let unionpay = CardBrand("unionpay", "UnionPay", lengths: [16, 17, 18, 19])
    public static let maestro = CardBrand("maestro", "Maestro", lengths: [12, 13, 14, 15, 16, 17, 18, 19])
    public static let mir = CardBrand("mir", "Mir", lengths: [16, 17, 18, 19])
    public static let elo = CardBrand("elo", "Elo", lengths: [16])
    public static let hipercard = CardBrand("hipercard", "Hipercard", lengths: [16, 19])
    public static let hiper = CardBrand("hiper", "Hiper", lengths: [16])
    public static let verve = CardBrand("verve", "Verve", lengths: [16, 18, 19])

    /// Every brand this package knows.
    public static let all: [CardBrand] = [
        .visa, .mastercard, .amex, .discover, .diners, .jcb, .unionpay, .maestro, .mir, .elo, .hipercard, .hiper,
        .verve,
    ]

    /// The brand with this identifier, if known.
    public init?(id: String) {
        guard let brand = Self.all.first(where: { $0.id == id }) else { return nil }
        self = brand
    }
}
