import Foundation

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
    public static let maximumYearsAhead = 19

    /// Creates an expiry, checking the month and that the year has four digits.
    public init(month: Int, year: Int) throws(CardValidationError) {
        guard (1...12).contains(month) else {
            throw CardValidationError(.invalidExpiryMonth, .expiry, "the month must be 01 to 12; \(month) is not a month")
        }
        guard (2000...2099).contains(year) else {
            throw CardValidationError(.invalidExpiryYear, .expiry, "the year must be 2000 to 2099; \(year) is not")
        }
        self.month = month
        self.year = year
    }

    /// Reads an expiry as people type it, by card-validator's rules (its `expirationDate`),
    /// and checks it against `today`: the month must not have ended, the year must be at most
    /// ``maximumYearsAhead`` years ahead.
    ///
    /// Accepted: `12/27`, `12/2027`, `12 / 2027`, `1/27`, `12 27`, `1 2027`, `2027-12`, and
    /// digits alone, split as card-validator splits them: a leading 0 takes two digits for the
    /// month (`0727`), 2 to 9 one (`92027`), 13 to 19 one (`130` is January 2030); a leading
    /// 10, 11 or 12 takes one digit when the rest can still be a year from now on (`12030`,
    /// read on any day from 2011 to 2030, is January 2030) and two otherwise (`1227`).
    /// Outer white space is ignored.
    ///
    /// - Throws: ``CardValidationError`` `incomplete_expiry` while the input can still become a
    ///   valid expiry (`1`, `12/2`, `12 2`, `12/202`, `0/27`); `expired_card` (`12/20` too:
    ///   December 2020, not the start of 12/2030); `invalid_expiry_month`
    ///   or `invalid_expiry_year` otherwise.
    public static func parse(_ input: String, today: CalendarDate) throws(CardValidationError) -> Expiry {
        let text = input.trimmingCharacters(in: Self.outerSpace)
        guard !text.isEmpty else {
            throw CardValidationError(.incompleteExpiry, .expiry, "enter the expiry as MM/YY, for example 12/27")
        }
        let (monthText, yearText) = split(text, today: today)
        let month = Month(monthText)
        let year = Year(yearText, today: today)
        switch (month, year) {
        case (.valid(let month), .valid(let year)):
            let expiry = try Expiry(month: month, year: year)
            if (year, month) < (today.year, today.month) {
                throw CardValidationError(.expiredCard, .expiry, "this card expired in \(expiry.formatted); use a card that is still valid")
            }
            return expiry
        case (.valid(let month), .past(let year)):
            // A two-digit year is read in today's century: shown whole when that is not the
            // 2000s (`--as-of 1999-06-01` reads 12/30 as 1930), so that "expired" makes sense.
            let shownYear = (2000...2099).contains(year) ? String(String(year).suffix(2)) : String(year)
            let formatted = (month < 10 ? "0" : "") + "\(month)/" + shownYear
            throw CardValidationError(.expiredCard, .expiry, "this card expired in \(formatted); use a card that is still valid")
        case (.valid, .partial), (.partial, .valid), (.partial, .partial):
            throw CardValidationError(.incompleteExpiry, .expiry, "the expiry is not complete; write it as MM/YY, for example 12/27")
        case (.invalid, _):
            let named = monthText.allSatisfy(\.isASCIIDigit) ? "\(monthText) is not a month" : "write the expiry as MM/YY, for example 12/27"
            throw CardValidationError(.invalidExpiryMonth, .expiry, "the month must be 01 to 12; \(named)")
        case (_, .tooFar(let year)):
            throw CardValidationError(.invalidExpiryYear, .expiry, "\(year) is too far ahead for an expiry; check the year")
        case (_, .past), (_, .invalid):
            throw CardValidationError(
                .invalidExpiryYear,
                .expiry,
                "the year must be this year or later, written with two or four digits, as in 12/27 or 12/2027"
            )
        }
    }

    /// ``parse(_:today:)`` on the system clock's date.
    public static func parse(_ input: String) throws(CardValidationError) -> Expiry {
        try parse(input, today: CardClock.system.today())
    }

    /// White space around an expiry, ignored: the number's separators (line breaks and a
    /// byte-order mark included).
    static let outerSpace: CharacterSet = {
        var set = CharacterSet()
        for scalar in PAN.separators { set.insert(scalar) }
        return set
    }()

    /// The month and year an input names, whether or not they are valid today (an expired
    /// card's date, to show it), a two-digit year read in today's century as ``parse(_:today:)``
    /// reads it; nil when either is not a number.
    public static func fields(of input: String, today: CalendarDate) -> (month: Int, year: Int)? {
        let (monthText, yearText) = split(input.trimmingCharacters(in: Self.outerSpace), today: today)
        guard monthText.allSatisfy(\.isASCIIDigit), yearText.allSatisfy(\.isASCIIDigit), yearText.count == 2 || yearText.count == 4,
            let month = Int(monthText), let year = Int(yearText)
        else { return nil }
        return (month, year < 100 ? (today.year / 100) * 100 + year : year)
    }

    /// The month and year parts of an expiry, as card-validator's `parseDate` splits them.
    static func split(_ text: String, today: CalendarDate) -> (month: Substring, year: Substring) {
        let characters = Array(text)
        // YYYY-M or YYYY-MM: the HTML autofill form.
        if characters.count >= 6, characters.count <= 7, characters[4] == "-",
            characters[..<4].allSatisfy(\.isASCIIDigit), characters[5...].allSatisfy(\.isASCIIDigit)
        {
            return (Substring(String(characters[5...])), Substring(String(characters[..<4])))
        }
        if text.contains("/") {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            return (Substring(parts[0]), Substring(parts.dropFirst().joined(separator: ",")))
        }
        if text.contains(where: \.isWhitespace) {
            let parts = text.split(separator: " ")
            return (parts.first ?? "", Substring(parts.dropFirst().joined(separator: ",")))
        }
        let monthDigits: Int
        switch characters.first {
        case "0": monthDigits = 2
        case "1":
            if characters.count > 1, ("3"..."9").contains(characters[1]) {
                monthDigits = 1
            } else {
                // 10, 11, 12 or 1 and a year: one digit when the rest can still be a year.
                monthDigits = Year(Substring(String(characters.dropFirst())), today: today).isPotentiallyValid ? 1 : 2
            }
        default: monthDigits = 1
        }
        let index = text.index(text.startIndex, offsetBy: min(monthDigits, text.count))
        return (text[..<index], text[index...])
    }

    /// A month part: valid, still being typed ("" or "0"), or wrong.
    private enum Month {
        case valid(Int)
        case partial, invalid

        init(_ text: Substring) {
            if text.isEmpty || text == "0" {
                self = .partial
            } else if text.allSatisfy(\.isASCIIDigit), let month = Int(text), (1...12).contains(month) {
                self = .valid(month)
            } else {
                self = .invalid
            }
        }
    }

    /// A year part against today: valid (this year to ``maximumYearsAhead`` years on),
    /// still being typed (one digit, "20" and a digit), past, too far, or wrong.
    private enum Year {
        case valid(Int)
        case partial
        case past(Int)
        case tooFar(Int)
        case invalid

        init(_ text: Substring, today: CalendarDate) {
            let century = String(today.year).prefix(2)
            guard text.allSatisfy(\.isASCIIDigit) else {
                self = .invalid
                return
            }
            let year: Int
            switch text.count {
            case 0, 1:
                self = .partial
                return
            case 2:
                // Two digits are a year of this century, "20" too: an expiry is read once it
                // is given whole (a form sent, a line entered), so 05/20 is May 2020, expired,
                // not the start of 05/2030.
                year = (today.year / 100) * 100 + (Int(text) ?? 0)
            case 3:
                self = text.hasPrefix(century) ? .partial : .invalid
                return
            case 4:
                year = Int(text) ?? 0
            default:
                self = .invalid
                return
            }
            if year < today.year {
                self = .past(year)
            } else if year > today.year + Expiry.maximumYearsAhead {
                self = .tooFar(year)
            } else {
                self = .valid(year)
            }
        }

        var isPotentiallyValid: Bool {
            switch self {
            case .valid, .partial: true
            case .past, .tooFar, .invalid: false
            }
        }
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

}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
