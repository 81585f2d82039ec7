/// A range of issuer identification numbers: every number whose first `digits` digits
/// fall in `low...high` belongs to `brand`.
struct IINRange: Sendable {
    let low: Int
    let high: Int
    let digits: Int
    let brand: CardBrand

    init(_ low: Int, _ high: Int? = nil, _ brand: CardBrand) {
        self.low = low
        self.high = high ?? low
        self.digits = String(low).count
        self.brand = brand
    }

    /// Whether a whole prefix of at least `digits` digits lies in the range.
    func contains(_ number: [UInt8]) -> Bool {
        guard number.count >= digits else { return false }
        let value = number.prefix(digits).reduce(0) { $0 * 10 + Int($1) }
        return value >= low && value <= high
    }

    /// Whether a number that starts with `prefix` (shorter than the range) could still land in it.
    func couldContain(_ prefix: [UInt8]) -> Bool {
        if prefix.count >= digits { return contains(prefix) }
        let value = prefix.reduce(0) { $0 * 10 + Int($1) }
        var scale = 1
        for _ in 0..<(digits - prefix.count) { scale *= 10 }
        // The prefix spans value*scale ... value*scale + scale - 1.
        return value * scale <= high && value * scale + scale - 1 >= low
    }
}

/// What a partly typed number says about its brand.
public struct PartialBrandMatch: Sendable, Equatable {
    /// The brand to show now: the most specific range the digits already match. Nil
    /// when the digits match no range yet.
    public let brand: CardBrand?
    /// Every brand the number could still turn out to be.
    public let candidates: [CardBrand]
    /// True when more digits cannot change ``brand``.
    public var isFinal: Bool { candidates.count <= 1 && brand != nil }
}

extension CardBrand {
    /// IIN ranges, from the schemes' published tables. Where ranges overlap the longest
    /// (most specific) prefix wins: Elo's 401178 beats Visa's 4.
    static let ranges: [IINRange] = [
        IINRange(4, nil, .visa),
        IINRange(51, 55, .mastercard), IINRange(2221, 2720, .mastercard),
        IINRange(34, nil, .amex), IINRange(37, nil, .amex),
        IINRange(6011, nil, .discover), IINRange(644, 649, .discover), IINRange(65, nil, .discover),
        IINRange(300, 305, .diners), IINRange(3095, nil, .diners), IINRange(36, nil, .diners),
        IINRange(38, 39, .diners),
        IINRange(3528, 3589, .jcb),
        IINRange(62, nil, .unionpay), IINRange(81, nil, .unionpay),
        IINRange(50, nil, .maestro), IINRange(56, 58, .maestro), IINRange(6304, nil, .maestro),
        IINRange(6759, nil, .maestro), IINRange(6761, 6763, .maestro),
        IINRange(2200, 2204, .mir),
        IINRange(401178, 401179, .elo), IINRange(431274, nil, .elo), IINRange(438935, nil, .elo),
        IINRange(451416, nil, .elo), IINRange(457393, nil, .elo), IINRange(457631, 457632, .elo),
        IINRange(504175, nil, .elo), IINRange(506699, 506778, .elo), IINRange(509000, 509999, .elo),
        IINRange(627780, nil, .elo), IINRange(636297, nil, .elo), IINRange(636368, nil, .elo),
        IINRange(650031, 650033, .elo), IINRange(650035, 650051, .elo), IINRange(650405, 650439, .elo),
        IINRange(650485, 650538, .elo), IINRange(650541, 650598, .elo), IINRange(650700, 650718, .elo),
        IINRange(650720, 650727, .elo), IINRange(650901, 650978, .elo), IINRange(651652, 651679, .elo),
        IINRange(655000, 655019, .elo), IINRange(655021, 655058, .elo),
        IINRange(606282, nil, .hipercard), IINRange(384100, nil, .hipercard), IINRange(384140, nil, .hipercard),
        IINRange(384160, nil, .hipercard),
        IINRange(637095, nil, .hiper), IINRange(637568, nil, .hiper), IINRange(637599, nil, .hiper),
        IINRange(637609, nil, .hiper), IINRange(637612, nil, .hiper),
        IINRange(506099, 506198, .verve), IINRange(650002, 650027, .verve), IINRange(507865, 507964, .verve),
    ]

    /// The brand of a whole (or long enough) number, or nil when no range matches.
    ///
    /// - Parameter number: the digits; spaces and dashes are ignored, any other character gives nil.
    public static func detect(_ number: String) -> CardBrand? {
        guard let digits = PAN.digits(of: number) else { return nil }
        return detect(digits: digits)
    }

    static func detect(digits: [UInt8]) -> CardBrand? {
        ranges.filter { $0.contains(digits) }.max { $0.digits < $1.digits }?.brand
    }

    /// The brand of a number still being typed: the brand to show now and every brand it could become.
    ///
    /// ```swift
    /// CardBrand.detectPartial("4").brand         // .visa (Elo's 4011 78… is still possible)
    /// CardBrand.detectPartial("5").brand         // nil: Mastercard, Maestro, Elo or Verve
    /// ```
    public static func detectPartial(_ prefix: String) -> PartialBrandMatch {
        guard let digits = PAN.digits(of: prefix) else {
            return PartialBrandMatch(brand: nil, candidates: [])
        }
        return detectPartial(digits: digits)
    }

    static func detectPartial(digits: [UInt8]) -> PartialBrandMatch {
        guard !digits.isEmpty else { return PartialBrandMatch(brand: nil, candidates: []) }
        let matched = detect(digits: digits)
        var candidates: [CardBrand] = []
        for range in ranges where range.couldContain(digits) && !candidates.contains(range.brand) {
            // A broad range that more digits would override is still a candidate; a range
            // already beaten by a longer matching prefix is not.
            candidates.append(range.brand)
        }
        if let matched, let best = ranges.filter({ $0.contains(digits) }).map(\.digits).max() {
            candidates = candidates.filter { brand in
                brand == matched || ranges.contains { $0.brand == brand && $0.digits > best && $0.couldContain(digits) }
            }
        }
        return PartialBrandMatch(brand: matched, candidates: candidates)
    }
}
