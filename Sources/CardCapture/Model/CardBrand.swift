/// A card scheme: the numbers it issues (IIN patterns and lengths), its security code's name
/// and size, whether its numbers carry a Luhn check digit, and how it groups digits.
///
/// ```swift
/// let brand = CardBrand.detect("378282246310005")   // .amex
/// brand?.grouping(forLength: 15)                   // [4, 6, 5]
/// ```
///
/// The table (``all``) follows Braintree's credit-card-type 10.1 (MIT), the table behind
/// card-validator, for every brand it has, with its newest release's Naranja and Troy's 65
/// range; the issue tracker added Troy's 9792 and Hipercard's 3841xx prefixes. Each brand's patterns are kept in the order they are tried:
/// only the first one that matches a number counts (see ``detectPartial(_:)``).
public struct CardBrand: Sendable, Hashable, CustomStringConvertible {
    /// The brand's identifier as it appears in JSON: `visa`, `mastercard`, `amex`, ….
    public let id: String
    /// The brand's name for people: `Visa`, `American Express`, ….
    public let displayName: String
    /// Every number length the brand issues.
    public let lengths: [Int]
    /// Digits in the card's security code.
    public let cvcLength: Int
    /// What the brand calls its security code: CVV, CVC, CID, CVN, CVE, CVP2.
    public let cvcName: String
    /// False for UnionPay, whose numbers need not pass the Luhn check.
    public let checksLuhn: Bool
    /// The IIN prefixes and ranges, in the order they are tried.
    let patterns: [IINPattern]

    init(
        _ id: String,
        _ displayName: String,
        lengths: [Int],
        cvc: (name: String, length: Int) = ("CVC", 3),
        checksLuhn: Bool = true,
        _ patterns: [IINPattern]
    ) {
        self.id = id
        self.displayName = displayName
        self.lengths = lengths
        self.cvcLength = cvc.length
        self.cvcName = cvc.name
        self.checksLuhn = checksLuhn
        self.patterns = patterns
    }

    public var description: String { id }

    public static func == (lhs: CardBrand, rhs: CardBrand) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

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
        // China Construction Bank's old Long Card prints its 19 digits 6-3-3-7.
        if self == .unionpay, length == 19 { all.append([6, 3, 3, 7]) }
        return all
    }

    /// The IIN prefixes and ranges, in the order they are tried: a prefix is a range of one
    /// (`4...4`); both bounds have the same number of digits.
    public var iinRanges: [ClosedRange<Int>] { patterns.map { $0.low...$0.high } }

    /// The longest number the brand issues.
    public var maximumLength: Int { lengths.max() ?? 19 }

    // MARK: - Brands

    public static let visa = CardBrand("visa", "Visa", lengths: [16, 18, 19], cvc: ("CVV", 3), [.prefix(4)])
    public static let mastercard = CardBrand(
        "mastercard",
        "Mastercard",
        lengths: [16],
        [.range(51, 55), .range(2221, 2229), .range(223, 229), .range(23, 26), .range(270, 271), .prefix(2720)]
    )
    public static let amex = CardBrand("amex", "American Express", lengths: [15], cvc: ("CID", 4), [.prefix(34), .prefix(37)])
    public static let diners = CardBrand(
        "diners",
        "Diners Club",
        lengths: [14, 16, 19],
        cvc: ("CVV", 3),
        [.range(300, 305), .prefix(36), .prefix(38), .prefix(39)]
    )
    public static let discover = CardBrand(
        "discover",
        "Discover",
        lengths: [16, 19],
        cvc: ("CID", 3),
        [.prefix(6011), .range(644, 649), .prefix(65)]
    )
    public static let jcb = CardBrand(
        "jcb",
        "JCB",
        lengths: [16, 17, 18, 19],
        cvc: ("CVV", 3),
        [.prefix(2131), .prefix(1800), .range(3528, 3589)]
    )
    public static let unionpay = CardBrand(
        "unionpay",
        "UnionPay",
        lengths: [14, 15, 16, 17, 18, 19],
        cvc: ("CVN", 3),
        checksLuhn: false,
        [
            .prefix(620), .range(62100, 62182), .range(62184, 62187), .range(62185, 62197), .range(62200, 62205),
            .range(622010, 622999), .prefix(622018), .range(62207, 62209), .range(623, 626), .prefix(6270), .prefix(6272),
            .prefix(6276), .range(627700, 627779), .range(627781, 627799), .range(6282, 6289), .prefix(6291), .prefix(6292),
            .prefix(810), .range(8110, 8131), .range(8132, 8151), .range(8152, 8163), .range(8164, 8171),
        ]
    )
    public static let verve = CardBrand(
        "verve",
        "Verve",
        lengths: [16, 18, 19],
        cvc: ("CVV", 3),
        [
            .range(506099, 506127), .prefix(506129), .range(506133, 506150), .range(506158, 506163), .prefix(506166),
            .prefix(506168), .prefix(506170), .prefix(506173), .range(506176, 506180), .prefix(506184), .range(506187, 506188),
            .prefix(506191), .prefix(506195), .prefix(506197), .prefix(507865), .prefix(507866), .range(507868, 507877),
            .range(507880, 507888), .prefix(507900), .prefix(507941),
        ]
    )
    public static let maestro = CardBrand(
        "maestro",
        "Maestro",
        lengths: [12, 13, 14, 15, 16, 17, 18, 19],
        [
            .prefix(493698), .range(500000, 504174), .range(504176, 506698), .range(506779, 508999), .range(56, 59), .prefix(63),
            .prefix(67), .prefix(6),
        ]
    )
    public static let elo = CardBrand(
        "elo",
        "Elo",
        lengths: [16],
        cvc: ("CVE", 3),
        [
            .prefix(401178), .prefix(401179), .prefix(438935), .prefix(457631), .prefix(457632), .prefix(431274), .prefix(451416),
            .prefix(457393), .prefix(504175), .range(506699, 506778), .range(509000, 509999), .prefix(627780), .prefix(636297),
            .prefix(636368), .range(650031, 650033), .range(650035, 650051), .range(650405, 650439), .range(650485, 650538),
            .range(650541, 650598), .range(650700, 650718), .range(650720, 650727), .range(650901, 650978),
            .range(651652, 651679), .range(655000, 655019), .range(655021, 655058),
        ]
    )
    public static let mir = CardBrand("mir", "Mir", lengths: [16, 17, 18, 19], cvc: ("CVP2", 3), [.range(2200, 2204)])
    public static let hiper = CardBrand(
        "hiper",
        "Hiper",
        lengths: [16],
        [.prefix(637095), .prefix(63_737_423), .prefix(63_743_358), .prefix(637568), .prefix(637599), .prefix(637609), .prefix(637612)]
    )
    public static let hipercard = CardBrand(
        "hipercard",
        "Hipercard",
        lengths: [16],
        [.prefix(606282), .prefix(384100), .prefix(384140), .prefix(384160)]
    )
    /// Turkey's network: its own 9792 numbers, and the 65 numbers it issues beside Discover's
    /// (a 65 number is Discover's unless a longer Troy or Elo range claims it).
    public static let troy = CardBrand("troy", "Troy", lengths: [16], cvc: ("CVV", 3), [.prefix(9792), .range(650274, 650923)])
    /// Argentina's Tarjeta Naranja, including its Visa and Mastercard co-brands' BINs.
    public static let naranja = CardBrand(
        "naranja",
        "Naranja",
        lengths: [16],
        cvc: ("CVV", 3),
        [.prefix(589562), .prefix(402918), .prefix(527572)]
    )

    /// Every brand this package knows, in the order they are tried: where two brands match a
    /// number equally well (Verve's BINs lie inside Maestro's ranges), the earlier wins.
    public static let all: [CardBrand] = [
        .visa, .mastercard, .amex, .diners, .discover, .jcb, .unionpay, .verve, .maestro, .elo, .mir, .hiper, .hipercard, .troy,
        .naranja,
    ]

    /// The brand's name with its article, for messages: "a Visa", "an Elo", "an American
    /// Express".
    public var withArticle: String {
        let first = displayName.lowercased().first
        return (first.map { "aeiou".contains($0) } ?? false ? "an " : "a ") + displayName
    }

    /// The brand with this identifier, if known.
    public init?(id: String) {
        guard let brand = Self.all.first(where: { $0.id == id }) else { return nil }
        self = brand
    }
}
