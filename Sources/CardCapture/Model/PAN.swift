/// A validated primary account number (the long number on a card).
///
/// A `PAN` never prints in full by accident: `description`, `debugDescription`, string
/// interpolation, `dump` and `print` all give the masked form, the first six and last four
/// digits (`411111******1111`). The digits are reachable only through ``revealed``, whose
/// name makes every use easy to find in review.
///
/// ```swift
/// let pan = try PAN("4111 1111 1111 1111")
/// print(pan)            // 411111******1111
/// pan.brand             // .visa
/// ```
public struct PAN: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let digits: [UInt8]
    /// The card's brand, from its IIN.
    public let brand: CardBrand

    /// Parses and validates a card number as a person would type it.
    ///
    /// Spaces and dashes between digits are ignored. The number must belong to one known
    /// brand, have one of that brand's lengths and pass the Luhn check (UnionPay numbers
    /// need not: the scanner, which must never invent a number, still asks for it).
    ///
    /// - Parameter input: the number, for example `4111 1111 1111 1111`.
    /// - Throws: ``CardValidationError`` with code `invalid_number` or `incomplete_number`.
    public init(_ input: String) throws(CardValidationError) {
        guard let digits = Self.digits(of: input) else {
            throw CardValidationError(
                .invalidNumber,
                .number,
                "a card number may contain only digits, spaces and dashes"
            )
        }
        try self.init(digits: digits)
    }

    init(digits: [UInt8]) throws(CardValidationError) {
        guard !digits.isEmpty else {
            throw CardValidationError(.incompleteNumber, .number, "enter the card number")
        }
        guard digits.count <= 19 else {
            throw CardValidationError(
                .invalidNumber,
                .number,
                "a card number has at most 19 digits; this one has \(digits.count)"
            )
        }
        let match = CardBrand.detectPartial(digits: digits)
        guard let brand = match.brand else {
            if match.candidates.isEmpty {
                throw CardValidationError(
                    .invalidNumber,
                    .number,
                    "no card brand issues numbers that start this way; check the first digits"
                )
            }
            throw CardValidationError(
                .incompleteNumber,
                .number,
                "this number is too short to be a card's (it could be \(CardBrand.list(match.candidates))); enter every digit on the card"
            )
        }
        // A number at one of the brand's lengths that fails the check digit, or between two
        // of its lengths, may still grow into a valid one: it is incomplete, not invalid,
        // until it reaches the brand's longest (as card-validator has it).
        let canGrow = digits.count < brand.maximumLength
        guard brand.lengths.contains(digits.count) else {
            if digits.count < (brand.lengths.min() ?? 12) {
                throw CardValidationError(
                    .incompleteNumber,
                    .number,
                    "this number has only \(digits.count) digits; \(brand.withArticle) number has \(Self.describe(brand.lengths))"
                )
            }
            throw CardValidationError(
                canGrow ? .incompleteNumber : .invalidNumber,
                .number,
                "\(brand.withArticle) number has \(Self.describe(brand.lengths)) digits; this one has \(digits.count)"
            )
        }
        guard !brand.checksLuhn || Self.luhnValid(digits) else {
            throw CardValidationError(
                canGrow ? .incompleteNumber : .invalidNumber,
                .number,
                "this number fails the check digit; check the digits, especially the last ones"
                    + (canGrow
                        ? " (\(brand.withArticle) number may also have \(Self.describe(brand.lengths.filter { $0 > digits.count })) digits)" : "")
            )
        }
        self.digits = digits
        self.brand = brand
    }

    // MARK: - Reading it

    /// The full number, digits only. Use it only to encrypt or to hand to a processor.
    public var revealed: String { Self.text(digits[...]) }

    /// The digit values, for the scanner's checks inside the module (reading them is
    /// revealing them, as ``revealed`` is).
    var revealedDigits: [UInt8] { digits }

    /// Digits as text, made straight from the digit values (no whole number made first).
    private static func text(_ digits: ArraySlice<UInt8>) -> String {
        String(unsafeUninitializedCapacity: digits.count) { buffer in
            for (offset, digit) in digits.enumerated() { buffer[offset] = digit + 48 }
            return digits.count
        }
    }

    /// The first six and last four digits with the rest masked: `411111******1111`.
    public var masked: String { Self.masked(digits) }

    /// The first six digits (the bank identification number).
    public var bin: String { Self.text(digits.prefix(6)) }
    /// The last four digits.
    public var last4: String { Self.text(digits.suffix(4)) }
    /// How many digits the number has.
    public var length: Int { digits.count }

    /// The whole number grouped as its brand prints it (`4111 1111 1111 1111`): for the
    /// buyer's own form only, like ``revealed``.
    public var revealedGrouped: String { Self.grouped(Array(revealed), brand.grouping(forLength: revealed.count)) }

    /// The number grouped as its brand prints it, masked: `4111 11** **** 1111`.
    public var maskedGrouped: String { Self.grouped(Array(masked), brand.grouping(forLength: digits.count)) }

    public var description: String { masked }
    public var debugDescription: String { "PAN(\(masked), \(brand.id))" }
    public var customMirror: Mirror { Mirror(self, children: ["masked": masked, "brand": brand.id]) }

    // MARK: - Helpers

    /// The Luhn (mod 10) check over a number's digits.
    public static func luhnValid(_ number: String) -> Bool {
        guard let digits = digits(of: number), !digits.isEmpty else { return false }
        return luhnValid(digits)
    }

    static func luhnValid(_ digits: [UInt8]) -> Bool {
        var sum = 0
        for (index, digit) in digits.reversed().enumerated() {
            var value = Int(digit)
            if index % 2 == 1 {
                value *= 2
                if value > 9 { value -= 9 }
            }
            sum += value
        }
        return sum % 10 == 0
    }

    /// The digits of `input`, ignoring white space and dashes; nil when anything else appears.
    static func digits(of input: String) -> [UInt8]? {
        var digits: [UInt8] = []
        for scalar in input.unicodeScalars {
            switch scalar {
            case "0"..."9": digits.append(UInt8(scalar.value - 48))
            case "-": continue
            default:
                // Spaces of every kind are ignored, as people and pasted text put them in.
                guard Self.separators.contains(scalar) else { return nil }
            }
        }
        return digits
    }

    /// The white space left out of a number: JavaScript's `\s`, as card-validator strips it
    /// (a byte-order mark included, U+0085 not).
    static let separators: Set<Unicode.Scalar> = [
        "\t", "\n", "\u{0B}", "\u{0C}", "\r", " ", "\u{A0}", "\u{1680}", "\u{2000}", "\u{2001}", "\u{2002}", "\u{2003}",
        "\u{2004}", "\u{2005}", "\u{2006}", "\u{2007}", "\u{2008}", "\u{2009}", "\u{200A}", "\u{2028}", "\u{2029}",
        "\u{202F}", "\u{205F}", "\u{3000}", "\u{FEFF}",
    ]

    /// Any run of card digits with all but the first six and last four masked.
    static func masked(_ digits: [UInt8]) -> String {
        let shown = Set(Array(0..<min(6, digits.count)) + Array(max(0, digits.count - 4)..<digits.count))
        return String(digits.indices.map { shown.contains($0) ? Character(String(digits[$0])) : "*" })
    }

    static func grouped(_ characters: [Character], _ groups: [Int]) -> String {
        var parts: [String] = []
        var start = 0
        for size in groups where start < characters.count {
            let end = min(characters.count, start + size)
            parts.append(String(characters[start..<end]))
            start = end
        }
        if start < characters.count { parts.append(String(characters[start...])) }
        return parts.joined(separator: " ")
    }

    private static func describe(_ lengths: [Int]) -> String {
        let sorted = lengths.sorted()
        if sorted.count == 1 { return "\(sorted[0])" }
        if sorted.count > 2, sorted.last! - sorted.first! == sorted.count - 1 {
            return "\(sorted.first!) to \(sorted.last!)"
        }
        return sorted.dropLast().map(String.init).joined(separator: ", ") + " or \(sorted.last!)"
    }
}

extension PAN {
    /// `text` with every Unicode decimal digit that is not ASCII (`４`, `٤`, `४`) written as
    /// the ASCII digit it stands for.
    static func asciiDigits(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar.value >= 0x80, scalar.properties.numericType == .decimal, let value = scalar.properties.numericValue,
                let digit = Unicode.Scalar(UInt32(48 + Int(value)))
            {
                scalars.append(digit)
            } else {
                scalars.append(scalar)
            }
        }
        return String(scalars)
    }

    /// `text` with every run of 12 or more digits masked as a card number is (first six and
    /// last four digits shown): for messages and log lines that repeat what a caller sent,
    /// which may be a card number where an id belongs.
    ///
    /// A run may be written in groups, as people and forms write card numbers: digits with
    /// one separator between groups (a space, tab, `-`, `.`, `_` or `+`, or one of these
    /// percent-encoded, as in a logged path). The separators are kept:
    /// `4242 4242 4242 4242` becomes `4242 42** **** 4242`.
    ///
    /// Digits of other scripts (full-width `４`, Arabic-Indic `٤`, any Unicode decimal digit) are
    /// read as the ASCII digits they stand for, so a number written in them is masked too
    /// (and shown in ASCII).
    public static func maskingDigitRuns(in text: String) -> String {
        let text = text.utf8.contains(where: { $0 >= 0x80 }) ? asciiDigits(text) : text
        // Every request's path comes through here for the log; almost none has 12 digits.
        guard text.utf8.count(where: isDigit) >= 12 else { return text }
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            guard isDigit(bytes[index]) else {
                output.append(bytes[index])
                index += 1
                continue
            }
            // The run: digits, and single separators that have a digit after them.
            var digits: [Int] = []
            var end = index
            while end < bytes.count {
                if isDigit(bytes[end]) {
                    digits.append(end)
                    end += 1
                    continue
                }
                let separator = separatorLength(in: bytes, at: end)
                guard separator > 0, end + separator < bytes.count, isDigit(bytes[end + separator]) else { break }
                end += separator
            }
            if digits.count >= 12 {
                var run = Array(bytes[index..<end])
                for (place, position) in digits.enumerated() where place >= 6 && place < digits.count - 4 {
                    run[position - index] = UInt8(ascii: "*")
                }
                output += run
            } else {
                output += bytes[index..<end]
            }
            index = end
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (48...57).contains(byte)
    }

    /// How many bytes at `index` make one group separator: 1 for the character itself, 3 for
    /// its percent-encoding (`%20`, `%2D`, …), 0 for anything else.
    private static func separatorLength(in bytes: [UInt8], at index: Int) -> Int {
        if groupSeparators.contains(bytes[index]) { return 1 }
        guard bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
            let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]),
            groupSeparators.contains(high << 4 | low)
        else { return 0 }
        return 3
    }

    /// Space, tab, `-`, `.`, `_` and `+`.
    private static let groupSeparators: Set<UInt8> = [0x20, 0x09, 0x2D, 0x2E, 0x5F, 0x2B]

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: byte - 48
        case 65...70: byte - 55
        case 97...102: byte - 87
        default: nil
        }
    }
}
