/// Finds a card's expiry among the lines read off it.
///
/// Looks for `MM/YY` or `MM/YYYY` (also with `-`), with a plausible year; where the card
/// prints two dates (VALID FROM … VALID THRU …) the later one is the expiry.
public enum ExpiryFinder {
    /// Years a printed expiry may fall in; anything else is taken for a misreading.
    public static let plausibleYears = 2000...2060

    /// Letters OCR often reads in place of digits in a printed date.
    static let lookalikes: [Character: Character] = [
        "O": "0", "Q": "0", "D": "0", "U": "0", "I": "1", "L": "1", "Z": "2", "S": "5", "B": "8", "G": "6", "T": "7",
    ]

    /// A word with look-alike letters read as digits, when the word is date-shaped (digits,
    /// look-alikes and one separator, and at least two real digits).
    static func normalised(_ word: Substring) -> String {
        let digits = word.filter(\.isASCIIDigit).count
        guard digits >= 2, word.contains(where: { $0 == "/" || $0 == "-" }),
            word.allSatisfy({ $0.isASCIIDigit || $0 == "/" || $0 == "-" || lookalikes[$0] != nil })
        else { return String(word) }
        return String(word.map { lookalikes[$0] ?? $0 })
    }

    /// Every date-like `MM/YY` in a text, in order.
    public static func dates(in text: String) -> [Expiry] {
        let characters = Array(text.split(whereSeparator: \.isWhitespace).map(normalised).joined(separator: " "))
        var found: [Expiry] = []
        var index = 0
        while index < characters.count {
            defer { index += 1 }
            // Month: two digits not preceded by a digit.
            if index > 0 && characters[index - 1].isASCIIDigit { continue }
            guard index + 1 < characters.count, characters[index].isASCIIDigit, characters[index + 1].isASCIIDigit else { continue }
            var cursor = index + 2
            while cursor < characters.count && characters[cursor] == " " { cursor += 1 }
            guard cursor < characters.count, characters[cursor] == "/" || characters[cursor] == "-" else { continue }
            cursor += 1
            while cursor < characters.count && characters[cursor] == " " { cursor += 1 }
            var yearDigits = ""
            while cursor < characters.count && characters[cursor].isASCIIDigit && yearDigits.count < 5 {
                yearDigits.append(characters[cursor])
                cursor += 1
            }
            guard yearDigits.count == 2 || yearDigits.count == 4,
                let month = Int(String(characters[index...index + 1])), let rawYear = Int(yearDigits)
            else { continue }
            let year = yearDigits.count == 2 ? 2000 + rawYear : rawYear
            guard plausibleYears.contains(year), let expiry = try? Expiry(month: month, year: year) else { continue }
            found.append(expiry)
        }
        return found
    }

    /// The expiry among several lines: the latest plausible date.
    public static func expiry(in lines: [String]) -> Expiry? {
        lines.flatMap { dates(in: $0) }.max()
    }

    /// The expiry from several independent readings of the same part of a card (see
    /// ``ExpiryBallot``).
    public static func expiry(voting readings: [String]) -> Expiry? {
        var ballot = ExpiryBallot()
        for reading in readings { ballot.add(reading) }
        return ballot.leader
    }
}

/// Votes of independent readings of the same part of a card for the dates in them.
///
/// The expiry is the latest date that at least two readings agree on: a misread date shows
/// in one reading only. A date read before a later one in the same reading is a start date
/// (VALID FROM), never the expiry, even when other readings missed the later date. A date
/// read where another reading saw a different one (``add(row:)``) counts only with more votes
/// than its rival. When no two readings agree, the latest date read.
public struct ExpiryBallot: Sendable {
    private var votes: [Expiry: Int] = [:]
    private var starts: Set<Expiry> = []
    /// Dates read in one place of the card by different readings: readings of one date, at
    /// most one of them right.
    private var rivals: [Expiry: Set<Expiry>] = [:]

    public init() {}

    /// Counts one reading: one vote for each date in it.
    public mutating func add(_ reading: String) {
        add(ExpiryFinder.dates(in: reading))
    }

    private mutating func add(_ dates: [Expiry]) {
        guard let latest = dates.max() else { return }
        for date in Set(dates) {
            votes[date, default: 0] += 1
            if date < latest { starts.insert(date) }
        }
    }

    /// Counts the readings of one row's parts (each with the left and right edges of the part
    /// it read): one vote for each date in each, and a date is a start date when a part wholly
    /// to its right read a later one (VALID FROM 12/21 and EXPIRES 07/26 read apart). Two
    /// readings of one date each, over the same place, that read different dates are rivals:
    /// one date misread (12/37 for 12/27), never a start date and its expiry.
    public mutating func add(row readings: [(left: Int, right: Int, text: String)]) {
        let dated = readings.map { (left: $0.left, right: $0.right, dates: ExpiryFinder.dates(in: $0.text)) }
        for reading in dated {
            add(reading.dates)
            let later = dated.filter { $0.left >= reading.right }.flatMap(\.dates).max()
            if let later { starts.formUnion(reading.dates.filter { $0 < later }) }
        }
        let lone = dated.filter { $0.dates.count == 1 }
        for one in lone {
            for other in lone where other.dates[0] != one.dates[0] {
                let shared = min(one.right, other.right) - max(one.left, other.left)
                // Over the same place: sharing more than half of the wider (a whole row that saw
                // only its expiry is no rival to a part that read the VALID FROM date).
                guard shared * 2 > max(one.right - one.left, other.right - other.left) else { continue }
                rivals[one.dates[0], default: []].insert(other.dates[0])
            }
        }
    }

    /// Counts another ballot's votes and start dates in with these.
    public mutating func add(_ other: ExpiryBallot) {
        votes.merge(other.votes, uniquingKeysWith: +)
        starts.formUnion(other.starts)
        rivals.merge(other.rivals) { $0.union($1) }
    }

    /// Takes the start dates another ballot found as start dates here too.
    public mutating func addStarts(of other: ExpiryBallot) {
        starts.formUnion(other.starts)
    }

    /// The date the votes so far elect, if any.
    public var leader: Expiry? {
        // A date with a rival read as often or more is in doubt (a start date is no rival:
        // it was read right, elsewhere).
        let candidates = votes.filter { date, count in
            !starts.contains(date) && !(rivals[date] ?? []).contains { !starts.contains($0) && votes[$0, default: 0] >= count }
        }
        guard let most = candidates.values.max() else { return nil }
        return candidates.filter { $0.value >= min(2, most) }.keys.max()
    }

    /// Whether the leader has `votes` votes or more: agreement enough to stop reading.
    public func isSettled(votes needed: Int = 3) -> Bool {
        guard let leader else { return false }
        return votes[leader, default: 0] >= needed
    }
}
