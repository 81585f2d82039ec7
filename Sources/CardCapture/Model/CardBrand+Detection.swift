/// One IIN pattern of a brand: a prefix (`low == high`) or an inclusive range of prefixes of
/// the same number of digits.
struct IINPattern: Sendable {
    let low: Int
    let high: Int
    /// Digits in the prefix: how long a number must be before the pattern is wholly matched.
    let digits: Int

    static func prefix(_ value: Int) -> IINPattern { range(value, value) }

    static func range(_ low: Int, _ high: Int) -> IINPattern {
        let digits = String(low).count
        // ``Prefixes`` holds eight digits: the longest prefix any network publishes.
        precondition(digits <= 8, "an IIN pattern has at most 8 digits")
        return IINPattern(low: low, high: high, digits: digits)
    }

    /// Whether a number fits the pattern as far as it goes: its first digits lie in the
    /// range, or, when it is shorter than the pattern, some continuation of it could.
    /// `prefixes[n]` is the value of the number's first n digits (``Prefixes``).
    func fits(_ prefixes: Prefixes) -> Bool {
        guard prefixes.count < digits else {
            let value = prefixes.values[digits]
            return value >= low && value <= high
        }
        var scale = 1
        for _ in 0..<(digits - prefixes.count) { scale *= 10 }
        // The range's bounds cut to the digits the number has.
        let value = prefixes.values[prefixes.count]
        return value >= low / scale && value <= high / scale
    }

    /// The values of a number's first 0 to 8 digits (no pattern is longer), worked out
    /// once for all the brands' patterns.
    struct Prefixes {
        /// Digits there are, up to 8.
        let count: Int
        var values = [Int](repeating: 0, count: 9)

        init(_ number: [UInt8]) {
            count = min(number.count, 8)
            for index in 0..<count { values[index + 1] = values[index] * 10 + Int(number[index]) }
        }
    }
}

/// What a number, whole or still being typed, says about its brand.
public struct PartialBrandMatch: Sendable, Equatable {
    /// Every brand the number can still be, in ``CardBrand/all``'s order; empty when no
    /// brand issues numbers that start this way.
    public let candidates: [CardBrand]

    /// The brand, once only one is left.
    public var brand: CardBrand? { candidates.count == 1 ? candidates[0] : nil }
    /// True when the brand is known.
    public var isFinal: Bool { brand != nil }
}

extension CardBrand {
    /// The brand of a whole (or long enough) number, or nil when no brand, or more than one,
    /// fits it.
    ///
    /// - Parameter number: the digits; spaces and dashes are ignored, any other character gives nil.
    public static func detect(_ number: String) -> CardBrand? {
        detectPartial(number).brand
    }

    static func detect(digits: [UInt8]) -> CardBrand? {
        detectPartial(digits: digits).brand
    }

    /// The brands a number can be, from its first digit on, as the reference libraries
    /// (credit-card-type) tell them:
    ///
    /// - each brand is tried with its patterns in order, and the first that fits counts;
    /// - when every brand that fits has a pattern the number already covers whole, the one
    ///   with the longest pattern wins (the more specific range: Elo's 650901 over Discover's
    ///   65), the earlier in ``all`` on a tie; until then, every brand that fits is a candidate.
    ///
    /// ```swift
    /// CardBrand.detectPartial("4").candidates     // [.visa, .maestro, .elo]
    /// CardBrand.detectPartial("41").brand         // .visa
    /// CardBrand.detectPartial("").candidates      // every brand
    /// ```
    public static func detectPartial(_ prefix: String) -> PartialBrandMatch {
        guard let digits = PAN.digits(of: prefix) else { return PartialBrandMatch(candidates: []) }
        return detectPartial(digits: digits)
    }

    static func detectPartial(digits: [UInt8]) -> PartialBrandMatch {
        let prefixes = IINPattern.Prefixes(digits)
        var fitting: [(brand: CardBrand, strength: Int?)] = []
        for brand in all {
            guard let pattern = brand.patterns.first(where: { $0.fits(prefixes) }) else { continue }
            fitting.append((brand, digits.count >= pattern.digits ? pattern.digits : nil))
        }
        let strengths = fitting.compactMap(\.strength)
        guard strengths.count == fitting.count, let strongest = strengths.max(),
            let winner = fitting.first(where: { $0.strength == strongest })
        else { return PartialBrandMatch(candidates: fitting.map(\.brand)) }
        return PartialBrandMatch(candidates: [winner.brand])
    }
}

extension CardBrand {
    /// "Visa, Maestro or Elo": brands' names for a message; past four, the first three and
    /// how many more.
    public static func list(_ brands: [CardBrand]) -> String {
        let names = brands.count <= 4 ? brands.map(\.displayName) : brands.prefix(3).map(\.displayName) + ["\(brands.count - 3) more"]
        guard names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " or " + names[names.count - 1]
    }
}
