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
    /// How many digits had an alternative the recognizer weighed at half or more: a reading
    /// that was unsure between two digits somewhere, even if it chose one.
    public internal(set) var doubtfulDigits = 0
    /// Which reader produced it.
    public var source: Source = .tesseract
    /// Where the digits lie along the row, from the first one's left edge to the last one's
    /// right edge, in pixels of the row's image.
    public internal(set) var extent: ClosedRange<Double> = 0...0

    /// The readers a candidate can come from.
    public enum Source: String, Sendable {
        /// Tesseract with the card-digit model (``CardModel``), with Debian's `eng`, the
        /// digit templates, or pieced together from several readings.
        case cardModel = "card_model"
        case tesseract, templates, merged
        /// The learned engine's readers (``LearnedEngine``): the project's card-digit network
        /// (`learned`) and PP-OCRv4's recognizer (`ppocr`); `agreed` when Tesseract's
        /// card-digit model read the same number on the same row.
        case learned, ppocr, agreed
    }

    /// The candidate marked with its reader, its extent moved from the reading's image to
    /// the row's (see ``RowReading``).
    func from(_ source: Source, offset: Double = 0, scale: Double = 1) -> PANCandidate {
        var copy = self
        copy.source = source
        copy.extent = (extent.lowerBound - offset) / scale...(extent.upperBound - offset) / scale
        return copy
    }
}

/// Finds card numbers in OCR output using what a real number must satisfy: a brand's IIN
/// range, one of its lengths, its digit grouping and the Luhn check.
///
/// The check digit checks a reading; it never writes one. Where Tesseract's first choices
/// fail the check, one digit may be replaced by an alternative the recognizer itself offered
/// for that symbol with real weight (``minimumAlternativeWeight``), and the candidate's
/// confidence is then that alternative's. A whole number read that fails the check and has
/// no such repair is kept as a ``NumberReading`` that fails it: offered for correction
/// (``UnverifiedNumber``), never reported as a card.
public enum PANDecoder {
    struct Slot {
        var choices: [(digit: UInt8, confidence: Double)]
        var box: Box
    }

    /// The least confidence (0 to 1) an alternative must have, as Tesseract scored it, for it
    /// to replace a first choice that fails the check digit. Below this the recognizer did
    /// not really see that digit, and a repair with it would be the check digit writing one.
    public static let minimumAlternativeWeight = 0.25

    /// Everything a line says about a card number: the valid candidates and the whole
    /// numbers read that fail the check.
    public struct LineReading: Sendable {
        /// Valid card numbers, best first.
        public var candidates: [PANCandidate] = []
        /// Whole numbers (a brand's length and grouping, first choices only) that fail the
        /// check digit, strongest first.
        public var failing: [NumberReading] = []
    }

    /// A whole number as read, valid or not: first choices only.
    public struct NumberReading: Sendable, Hashable {
        public let digits: [UInt8]
        /// The weakest digit's confidence, 0 to 1.
        public let confidence: Double
    }

    /// The valid card numbers in a recognised line, best first.
    public static func candidates(in line: RecognizedLine) -> [PANCandidate] {
        read(line).candidates
    }

    /// The valid card numbers in a recognised line and the whole numbers read there that fail
    /// the check digit.
    ///
    /// - Parameter isolated: whether a number must stand apart from other digits on the line
    ///   (three digit heights). A line cut across a whole card row picks up stray marks at
    ///   its ends, which the learned readers read as digits; those readings pass false.
    public static func read(_ line: RecognizedLine, isolated mustStandApart: Bool = true) -> LineReading {
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
        var reading = LineReading()
        for start in groups.indices {
            var window: [Slot] = []
            var sizes: [Int] = []
            for end in start..<groups.count {
                window += groups[end]
                sizes.append(groups[end].count)
                if window.count > 19 { break }
                guard window.count >= 12, !mustStandApart || isolated(start, end) else { continue }
                let extent = Double(window[0].box.x)...Double(window[window.count - 1].box.maxX)
                if var candidate = decode(window, groupSizes: sizes) {
                    candidate.extent = extent
                    reading.candidates.append(candidate)
                }
                let first = window.map { $0.choices[0].digit }
                if !PAN.luhnValid(first), let brand = CardBrand.detect(digits: first), brand.lengths.contains(first.count),
                    groupingMatches(sizes, brand: brand, length: first.count)
                {
                    let confidence = window.map { $0.choices[0].confidence }.min() ?? 0
                    reading.failing.append(NumberReading(digits: first, confidence: confidence))
                }
            }
        }
        reading.candidates.sort { $0.confidence > $1.confidence }
        reading.failing.sort { $0.confidence > $1.confidence }
        return reading
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
            var candidate = PANCandidate(
                pan: pan,
                confidence: confidence,
                substitutions: 0,
                groupingMatches: groupingMatches(groupSizes, brand: brand, length: window.count)
            )
            candidate.doubtfulDigits = window.filter { slot in slot.choices.dropFirst().contains { $0.confidence >= 0.5 } }.count
            return candidate
        }
        return substituted(window, groupSizes: groupSizes)
    }

    /// Tries replacing one digit with an alternative Tesseract offered for it with real
    /// weight. Only one repair can pass the check, or none is made: two different repairs
    /// that both pass are a guess between numbers, not a reading.
    static func substituted(_ window: [Slot], groupSizes: [Int]) -> PANCandidate? {
        var repairs: [PANCandidate] = []
        let base = window.map { $0.choices[0].digit }
        for position in window.indices {
            for alternative in window[position].choices.dropFirst() where alternative.confidence >= minimumAlternativeWeight {
                var digits = base
                digits[position] = alternative.digit
                guard let brand = CardBrand.detect(digits: digits), brand.lengths.contains(digits.count),
                    PAN.luhnValid(digits), let pan = try? PAN(digits: digits)
                else { continue }
                // The repaired digit counts at the alternative's own (lower) confidence.
                var confidences = window.map { $0.choices[0].confidence }
                confidences[position] = alternative.confidence
                repairs.append(
                    PANCandidate(
                        pan: pan,
                        confidence: confidences.min() ?? 0,
                        substitutions: 1,
                        groupingMatches: groupingMatches(groupSizes, brand: brand, length: digits.count)
                    )
                )
            }
        }
        guard repairs.count == 1 else { return nil }
        return repairs[0]
    }

    /// Whether the gaps Tesseract saw are all gaps of one of the ways the brand prints its
    /// numbers (it may miss a gap, never add one).
    static func groupingMatches(_ sizes: [Int], brand: CardBrand, length: Int) -> Bool {
        // No card prints a lone digit apart from the rest: a digit a gap after the number is
        // something else (the card's edge, a mark), and with it the number is one digit too long.
        if sizes.count > 1, sizes.last == 1 { return false }
        return brand.groupings(forLength: length).contains { grouping in
            var expected = Set<Int>()
            var position = 0
            for size in grouping {
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
}

/// One reading of a number row, and where its image lies on the row: a point at `x` in the
/// reading is at `(x - offset) / scale` on the row.
struct RowReading {
    var line: RecognizedLine
    var offset: Double = 0
    var scale: Double = 1
    /// Which reader gave it: a group counts in a merged number only when two readers saw it alike.
    var source: PANCandidate.Source = .tesseract
}

extension PANDecoder {
    /// The number pieced together group by group from several readings of one row.
    ///
    /// Glare or a line of the design spoils a different group in each way of reading a row,
    /// so no single reading holds the whole number while every group is read right by some.
    /// Groups at the same place on the row are the same group; each combination of the
    /// readings' groups, in a brand's exact grouping, is checked (brand, length, Luhn).
    /// Only groups that two different readers (the card-digit model, the templates, `eng`)
    /// saw alike take part: one reader repeats its confusions over every variant of a row.
    /// Only when exactly one number results is it returned: two possible numbers are a guess.
    ///
    /// - Returns: the number, its confidence the weakest group's (the weakest digit of that
    ///   group's best reading), or nil.
    static func merged(_ readings: [RowReading]) -> PANCandidate? {
        struct Piece {
            let text: String
            let confidence: Double
            let left: Double
            let right: Double
            let source: PANCandidate.Source
        }
        var pieces: [Piece] = []
        for reading in readings {
            for word in reading.line.words {
                var run: [RecognizedSymbol] = []
                func close() {
                    guard let first = run.first, let last = run.last else { return }
                    pieces.append(
                        Piece(
                            text: run.map(\.text).joined(),
                            confidence: (run.map(\.confidence).min() ?? 0) / 100,
                            left: (Double(first.box.x) - reading.offset) / reading.scale,
                            right: (Double(last.box.maxX) - reading.offset) / reading.scale,
                            source: reading.source
                        )
                    )
                    run = []
                }
                for symbol in word.symbols {
                    if digitValue(symbol.text) != nil { run.append(symbol) } else { close() }
                }
                close()
            }
        }
        // Places on the row: a piece belongs to the first place whose first piece it
        // overlaps by at least half of the shorter of the two.
        var places: [(anchor: Piece, texts: [String: Double], readers: [String: Set<PANCandidate.Source>])] = []
        for piece in pieces.sorted(by: { $0.left + $0.right < $1.left + $1.right }) {
            let index = places.firstIndex { place in
                let overlap = min(place.anchor.right, piece.right) - max(place.anchor.left, piece.left)
                return overlap >= 0.5 * min(place.anchor.right - place.anchor.left, piece.right - piece.left)
            }
            if let index {
                places[index].texts[piece.text] = max(places[index].texts[piece.text] ?? 0, piece.confidence)
                places[index].readers[piece.text, default: []].insert(piece.source)
            } else {
                places.append((piece, [piece.text: piece.confidence], [piece.text: [piece.source]]))
            }
        }
        // A group one reader saw is not evidence enough to build a number on: with many
        // readings and several texts at each place, some combination passes the check by
        // chance, and a reader that confuses a 7 for a 1 does so in every variant of the row.
        for index in places.indices {
            places[index].texts = places[index].texts.filter { places[index].readers[$0.key, default: []].count >= 2 }
        }
        places.removeAll { $0.texts.isEmpty }
        var found: [String: PANCandidate] = [:]
        for start in places.indices {
            for count in 2...5 where start + count <= places.count {
                let window = places[start..<(start + count)].map { place in
                    place.texts.sorted { $0.value > $1.value }.prefix(6)
                }
                var combination = [Int](repeating: 0, count: count)
                while true {
                    let chosen = combination.enumerated().map { window[$0.offset][$0.element] }
                    let digits = chosen.flatMap { $0.key.utf8.map { $0 - 48 } }
                    if let brand = CardBrand.detect(digits: digits), brand.lengths.contains(digits.count),
                        brand.groupings(forLength: digits.count).contains(chosen.map(\.key.count)),
                        PAN.luhnValid(digits), let pan = try? PAN(digits: digits)
                    {
                        let confidence = chosen.map(\.value).min() ?? 0
                        // A group that is not its place's strongest reading was chosen by the
                        // check digit: it counts as a repair, which one reading alone never reports.
                        let repairs = combination.indices.filter { chosen[$0].value < window[$0][0].value }.count
                        if confidence > found[pan.revealed]?.confidence ?? -1 {
                            var candidate = PANCandidate(pan: pan, confidence: confidence, substitutions: repairs, groupingMatches: true)
                            candidate.extent = places[start].anchor.left...places[start + count - 1].anchor.right
                            found[pan.revealed] = candidate
                        }
                    }
                    // Next combination, like an odometer.
                    var digit = count - 1
                    while digit >= 0 {
                        combination[digit] += 1
                        if combination[digit] < window[digit].count { break }
                        combination[digit] = 0
                        digit -= 1
                    }
                    if digit < 0 { break }
                }
            }
        }
        guard found.count == 1 else { return nil }
        return found.values.first
    }
}
