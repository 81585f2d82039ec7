public import OCRBridge

/// A card number read from one line of OCR output, with how sure the reading is.
public struct PANCandidate: Sendable, Equatable {
    public let pan: PAN
    /// 0 to 1: the weakest digit's confidence, lowered for every digit that had to be
    /// taken from Tesseract's alternatives rather than its first choice.
    public let confidence: Double
    /// How many digits came from alternatives.
    public let substitutions: Int
    /// True when the spaces on the card match the brand's grouping (4-4-4-4, 4-6-5, …).
    public let groupingMatches: Bool
    /// Which reader produced it.
    public var source: Source = .tesseract

    /// The readers a candidate can come from.
    public enum Source: String, Sendable {
        case tesseract, templates
    }

    func from(_ source: Source) -> PANCandidate {
        var copy = self
        copy.source = source
        return copy
    }
}

/// Finds card numbers in OCR output using what a real number must satisfy: a brand's IIN
/// range, one of its lengths, its digit grouping and the Luhn check. Where Tesseract's
/// first choices fail the check, its per-symbol alternatives are searched for the most
/// likely valid number.
public enum PANDecoder {
    struct Slot {
        var choices: [(digit: UInt8, confidence: Double)]
        var box: Box
    }

    /// The valid card numbers in a recognised line, best first.
    public static func candidates(in line: RecognizedLine) -> [PANCandidate] {
        // Digit groups: runs of digits inside one word. A non-digit symbol ends a group.
        var groups: [[Slot]] = []
        for word in line.words {
            var current: [Slot] = []
            for symbol in word.symbols {
                if let slot = slot(for: symbol) {
                    current.append(slot)
                } else if !current.isEmpty {
                    groups.append(current)
                    current = []
                }
            }
            if !current.isEmpty { groups.append(current) }
        }
        let heights = groups.flatMap { $0.map(\.box.height) }.sorted()
        let digitHeight = heights.isEmpty ? 0 : heights[heights.count / 2]
        /// A card number stands alone on its row: a window with another digit group close
        /// beside it is part of something longer (or a misread), not a number.
        func isolated(_ start: Int, _ end: Int) -> Bool {
            if start > 0, groups[start][0].box.x - groups[start - 1].last!.box.maxX < 3 * digitHeight { return false }
            if end + 1 < groups.count, groups[end + 1][0].box.x - groups[end].last!.box.maxX < 3 * digitHeight {
                return false
            }
            return true
        }
        var found: [PANCandidate] = []
        for start in groups.indices {
            var window: [Slot] = []
            var sizes: [Int] = []
            for end in start..<groups.count {
                window += groups[end]
                sizes.append(groups[end].count)
                if window.count > 19 { break }
                guard window.count >= 12, isolated(start, end) else { continue }
                if let candidate = decode(window, groupSizes: sizes) {
                    found.append(candidate)
                }
            }
        }
        return found.sorted { $0.confidence > $1.confidence }
    }

    static func slot(for symbol: RecognizedSymbol) -> Slot? {
        var choices: [(digit: UInt8, confidence: Double)] = []
        if let digit = digitValue(symbol.text) {
            choices.append((digit, symbol.confidence / 100))
        } else {
            return nil
        }
        for choice in symbol.choices.dropFirst() {
            if let digit = digitValue(choice.text), !choices.contains(where: { $0.digit == digit }) {
                choices.append((digit, min(choice.confidence, symbol.confidence) / 100))
            }
        }
        return Slot(choices: choices, box: symbol.box)
    }

    static func digitValue(_ text: String) -> UInt8? {
        guard text.count == 1, let ascii = text.unicodeScalars.first?.value, (48...57).contains(ascii) else { return nil }
        return UInt8(ascii - 48)
    }

    /// The best valid number in a window of digit slots, or nil.
    static func decode(_ window: [Slot], groupSizes: [Int]) -> PANCandidate? {
        let best = window.map { $0.choices[0].digit }
        guard let brand = CardBrand.detect(digits: best), brand.lengths.contains(window.count)
        else {
            return substituted(window, groupSizes: groupSizes)
        }
        if PAN.luhnValid(best), let pan = try? PAN(digits: best) {
            let confidence = window.map { $0.choices[0].confidence }.min() ?? 0
            return PANCandidate(
                pan: pan,
                confidence: confidence,
                substitutions: 0,
                groupingMatches: groupingMatches(groupSizes, brand: brand, length: window.count)
            )
        }
        return substituted(window, groupSizes: groupSizes)
    }

    /// Tries replacing one digit with one of Tesseract's alternatives for it.
    static func substituted(_ window: [Slot], groupSizes: [Int]) -> PANCandidate? {
        var bestCandidate: PANCandidate?
        let base = window.map { $0.choices[0].digit }
        for position in window.indices {
            for alternative in window[position].choices.dropFirst() {
                var digits = base
                digits[position] = alternative.digit
                guard let brand = CardBrand.detect(digits: digits), brand.lengths.contains(digits.count),
                    PAN.luhnValid(digits), let pan = try? PAN(digits: digits)
                else { continue }
                // The substituted digit counts at its own (lower) confidence, halved for the doubt.
                var confidences = window.map { $0.choices[0].confidence }
                confidences[position] = alternative.confidence * 0.5
                let candidate = PANCandidate(
                    pan: pan,
                    confidence: confidences.min() ?? 0,
                    substitutions: 1,
                    groupingMatches: groupingMatches(groupSizes, brand: brand, length: digits.count)
                )
                if candidate.confidence > (bestCandidate?.confidence ?? -1) { bestCandidate = candidate }
            }
        }
        return bestCandidate
    }

    /// Whether the gaps Tesseract saw are all gaps the brand prints (it may miss a gap, never add one).
    static func groupingMatches(_ sizes: [Int], brand: CardBrand, length: Int) -> Bool {
        var expected = Set<Int>()
        var position = 0
        for size in brand.grouping(forLength: length) {
            position += size
            expected.insert(position)
        }
        var seen = 0
        for size in sizes.dropLast() {
            seen += size
            if !expected.contains(seen) { return false }
        }
        return true
    }
}
