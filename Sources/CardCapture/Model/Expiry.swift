/// A card's expiry: the last month in which it is valid.
///
/// A card is valid through the last day of its expiry month.
///
/// ```swift
/// let expiry = try Expiry.parse("12/27")          // December 2027
/// try expiry.validate(on: CalendarDate(year: 2027, month: 12, day: 31))   // fine
/// ```
public struct Expiry: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let month: Int
    /// The four-digit year.
    public let year: Int

    /// Years after today beyond which an expiry is taken for a typing mistake.
    public static let maximumYearsAhead = 20

    /// Creates an expiry, checking the month and that the year has four digits.
    public init(month: Int, year: Int) throws(CardValidationError) {
        guard (1...12).contains(month) else {
            throw CardValidationError(.invalidExpiryMonth, .expiry, "the month must be 01 to 12; \(month) is not a month")
        }
        guard (2000...2099).contains(year) else {
            throw CardValidationError(.invalidExpiryYear, .expiry, "the year must be 2000 to 2099 (or 00 to 99); \(year) is not")
        }
        self.month = month
        self.year = year
    }

    /// Reads an expiry as people type it and cards print it.
    ///
    /// Accepted: `12/27`, `12/2027`, `12 / 2027`, `1227`, `122027`, `12-27`, `12.27`,
    /// `12 27`, `2027-12`, `2027/12`, and one-digit months with a separator (`1/27`).
    /// Two-digit years are in the 2000s.
    ///
    /// - Throws: ``CardValidationError`` `invalid_expiry_month` or `invalid_expiry_year`.
    public static func parse(_ input: String) throws(CardValidationError) -> Expiry {
        let text = input.filter { !$0.isWhitespace }
        guard !text.isEmpty else {
            throw CardValidationError(.invalidExpiryMonth, .expiry, "enter the expiry as MM/YY, for example 12/27")
        }
        let separators: Set<Character> = ["/", "-", ".", "\\"]
        let tokens = text.split(omittingEmptySubsequences: false, whereSeparator: { separators.contains($0) })
        guard tokens.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }) else {
            throw Self.unreadable()
        }
        let fields: (month: Substring, year: Substring)
        switch tokens.count {
        case 1:
            // No separator: but "12 27" had a space, which we removed; MMYY or MMYYYY.
            let digits = tokens[0]
            switch digits.count {
            case 4: fields = (digits.prefix(2), digits.suffix(2))
            case 6: fields = (digits.prefix(2), digits.suffix(4))
            case 3: fields = (digits.prefix(1), digits.suffix(2))
            default: throw Self.unreadable()
            }
        case 2:
            if tokens[0].count == 4 && tokens[1].count <= 2 {
                fields = (tokens[1], tokens[0])  // 2027-12
            } else {
                fields = (tokens[0], tokens[1])
            }
        default:
            throw Self.unreadable()
        }
        guard fields.month.count <= 2, let month = Int(fields.month) else { throw Self.unreadable() }
        guard (1...12).contains(month) else {
            throw CardValidationError(
                .invalidExpiryMonth,
                .expiry,
                "the month must be 01 to 12; \(fields.month) is not a month"
            )
        }
        guard fields.year.count == 2 || fields.year.count == 4, let rawYear = Int(fields.year) else {
            throw CardValidationError(.invalidExpiryYear, .expiry, "the year must have two or four digits, as in 12/27 or 12/2027")
        }
        return try Expiry(month: month, year: fields.year.count == 2 ? 2000 + rawYear : rawYear)
    }

    /// Checks that the card has not expired on `today` and that the year is plausible.
    ///
    /// - Throws: `expired_card` when the expiry month has ended; `invalid_expiry_year`
    ///   when it is more than ``maximumYearsAhead`` years away.
    public func validate(on today: CalendarDate) throws(CardValidationError) {
        if (year, month) < (today.year, today.month) {
            throw CardValidationError(.expiredCard, .expiry, "this card expired in \(formatted); use a card that is still valid")
        }
        if year > today.year + Self.maximumYearsAhead {
            throw CardValidationError(
                .invalidExpiryYear,
                .expiry,
                "\(year) is too far ahead for an expiry; check the year"
            )
        }
    }

    /// The last day on which the card is valid.
    public var lastValidDay: CalendarDate {
        CalendarDate(year: year, month: month, day: CalendarDate.daysIn(month: month, year: year))
    }

    /// `MM/YY`, as printed on cards.
    public var formatted: String {
        (month < 10 ? "0\(month)" : "\(month)") + "/" + String(String(year).suffix(2))
    }

    public var description: String { formatted }

    public static func < (lhs: Expiry, rhs: Expiry) -> Bool {
        (lhs.year, lhs.month) < (rhs.year, rhs.month)
    }

    private static func unreadable() -> CardValidationError {
        CardValidationError(.invalidExpiryMonth, .expiry, "write the expiry as MM/YY, for example 12/27")
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
