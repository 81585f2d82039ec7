public import OCRBridge

/// A card number read from one line of OCR output, with how sure the reading is.
public struct PANCandidate: Sendable, Equatable {
    public let pan: PAN
    /// 0 to 1: the weakest digit's confidence in the reading, as the reader gave it.
    public let confidence: Double
    /// True when the spaces on the card match the brand's grouping (4-4-4-4, 4-6-5, …).
    public let groupingMatches: Bool
    /// How many digits had an alternative the recognizer weighed at half or more: a reading
    /// that was unsure between two digits somewhere, even if it chose one.
    public internal(set) var doubtfulDigits = 0
    /// True when the reader saw every gap of a way the brand prints the number, and no other
    /// (``groupingMatches`` also takes a reading that missed a gap).
    public internal(set) var gapsAsPrinted = false
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

    public init(pan: PAN, confidence: Double, groupingMatches: Bool) {
        self.pan = pan
        self.confidence = confidence
        self.groupingMatches = groupingMatches
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

/// Finds card numbers in OCR output using what a real number must satisfy: a whole printed
/// row, a brand's IIN range, one of its lengths, its digit grouping and the Luhn check.
///
/// A number is a whole row: every digit group close beside it on the line belongs to it, so a
/// part of a longer row (a group dropped at either end, or a group of another row joined to
/// it) is never a candidate (``read(_:)``). The check digit only checks: it checks the reading
/// as the reader gave it (each symbol's first choice) and never replaces a digit, chooses
/// between readings of one or between extents of a row. A whole number that fails it is kept
/// as a ``NumberReading`` that fails: offered for correction (``UnverifiedNumber``), never
/// reported as a card.
public enum PANDecoder {
    struct Slot {
        var digit: UInt8
        var confidence: Double
        /// Whether the recognizer weighed another digit at half or more for this symbol.
        var doubtful: Bool
        var box: Box
    }

    /// A stretch of a line: consecutive digits of one word, or consecutive other letters.
    struct Piece {
        var slots: [Slot] = []
        var isDigits: Bool
        var symbols = 0
        var left: Int
        var right: Int
    }

    /// Everything a line says about a card number: the valid candidates, the whole numbers
    /// read there that fail the check, and every row of digits it holds.
    public struct LineReading: Sendable {
        /// Valid card numbers, best first.
        public var candidates: [PANCandidate] = []
        /// Whole numbers (a brand's length and grouping) that fail the check digit, strongest first.
        public var failing: [NumberReading] = []
        /// The digits of each run of digit groups on the line (groups closer than
        /// ``apartHeights`` digit heights), as read: what a row holds, whatever it is.
        var runs: [[UInt8]] = []
    }

    /// A whole number as read, valid or not: first choices only.
    public struct NumberReading: Sendable, Hashable {
        public let digits: [UInt8]
        /// The weakest digit's confidence, 0 to 1.
        public let confidence: Double
        /// Whether the reader saw exactly the gaps of a way the brand prints the number
        /// (``PANCandidate/gapsAsPrinted``).
        public var gapsAsPrinted = false
    }

    /// How far apart (in digit heights) two groups of characters on a line must be to belong
    /// to different things. The groups of a card number are a digit's width apart (about two
    /// thirds of its height); the nearest other text on a number's row (a logo, a date) lies
    /// much further.
    static let apartHeights = 3.0
    /// How far (in digit heights) a lone character at a line's end must lie from a number to be
    /// taken for a stray mark rather than its digit, when it also lies at the card's edge: a
    /// crop across a whole card row picks the edges up, and readers read them as digits.
    static let strayHeights = 1.0

    /// The valid card numbers in a recognised line, best first.
    public static func candidates(in line: RecognizedLine) -> [PANCandidate] {
        read(line).candidates
    }

    /// The whole numbers in a recognised line: valid ones as candidates, the others as
    /// failing readings.
    ///
    /// A window of digit groups is a number only when it is the whole of its row: nothing lies
    /// within ``apartHeights`` digit heights of either end but a lone mark at the card's edge
    /// (``strayHeights`` away, and outside `inner`), and no letter lies inside it. A lone digit
    /// anywhere else may be what glare left of a group. When two windows of one line would both
    /// pass, neither is a candidate: the check digit would be choosing the extent.
    ///
    /// - Parameters:
    ///   - inner: where on the line the card's inside lies (in the line's pixels), for a crop
    ///     that reaches the card's edges: a lone mark outside it is the edge. Nil for a crop
    ///     inside the card: no mark beside a number is taken for a stray.
    ///   - row: where a detector of whole number rows found the row (in the line's pixels), on a
    ///     picture whose card edges are not known: anything wholly beyond it that stands
    ///     ``strayHeights`` or more from the next piece inward (further than two groups of a
    ///     number stand apart) is not part of the row, a mark of the ground or the card's edge.
    ///     A group the detector cut off lies a group's gap from the number, and still counts.
    public static func read(
        _ line: RecognizedLine,
        inner: ClosedRange<Double>? = nil,
        row: ClosedRange<Double>? = nil
    ) -> LineReading {
        let pieces = Self.pieces(of: line)
        let heights = pieces.flatMap { $0.slots.map(\.box.height) }.sorted()
        let digitHeight = Double(heights.isEmpty ? 0 : heights[heights.count / 2])
        func gap(_ left: Int, _ right: Int) -> Double { Double(pieces[right].left - pieces[left].right) }
        let apart = apartHeights * digitHeight
        let stray = strayHeights * digitHeight
        /// Whether a piece is a lone mark at the card's edge.
        func atEdge(_ index: Int) -> Bool {
            guard let inner, pieces[index].symbols == 1 else { return false }
            return Double(pieces[index].right) < inner.lowerBound || Double(pieces[index].left) > inner.upperBound
        }
        /// Whether a piece lies wholly beyond the detector's row on the side `step` points to
        /// (-1 leftward, +1 rightward).
        func beyondRow(_ index: Int, step: Int) -> Bool {
            guard let row else { return false }
            return step < 0 ? Double(pieces[index].right) < row.lowerBound : Double(pieces[index].left) > row.upperBound
        }
        /// Whether the window's edge at `inner`, with `outer` the next piece outward
        /// (`step` -1 leftward, +1 rightward), ends the row there.
        func endsRow(inner: Int, outer: Int, step: Int) -> Bool {
            guard pieces.indices.contains(outer) else { return true }
            let distance = step < 0 ? gap(outer, inner) : gap(inner, outer)
            if distance >= apart { return true }
            // Beyond the detector's row, and further than a group's gap.
            if beyondRow(outer, step: step), distance >= stray { return true }
            // A lone mark at the card's edge, itself standing apart from anything further out.
            guard atEdge(outer), distance >= stray else { return false }
            let further = outer + step
            guard pieces.indices.contains(further) else { return true }
            return (step < 0 ? gap(further, outer) : gap(outer, further)) >= apart
        }
        var reading = LineReading()
        // Runs: digit pieces closer than `apart`, letters between them skipped, and without a
        // lone mark at the card's edge at either end (as a window's end may have): a crop
        // across a card reads the card's edge as a 1 beside the number.
        var runs: [[Int]] = []
        for index in pieces.indices where pieces[index].isDigits {
            if let last = runs.last?.last, gap(last, index) < apart {
                runs[runs.count - 1].append(index)
            } else {
                runs.append([index])
            }
        }
        for var run in runs {
            // Beyond the detector's row: cut at the first piece, going outward, that stands a
            // stray's distance from the one inside it.
            if let cut = (1..<max(1, run.count)).reversed().first(where: { beyondRow(run[$0 - 1], step: -1) && gap(run[$0 - 1], run[$0]) >= stray }) {
                run.removeFirst(cut)
            }
            if let cut = (1..<max(1, run.count)).first(where: { beyondRow(run[$0], step: 1) && gap(run[$0 - 1], run[$0]) >= stray }) {
                run.removeLast(run.count - cut)
            }
            while run.count > 1, atEdge(run[0]), gap(run[0], run[1]) >= stray { run.removeFirst() }
            while run.count > 1, atEdge(run[run.count - 1]), gap(run[run.count - 2], run[run.count - 1]) >= stray {
                run.removeLast()
            }
            reading.runs.append(run.flatMap { pieces[$0].slots.map(\.digit) })
        }

        for start in pieces.indices where pieces[start].isDigits && endsRow(inner: start, outer: start - 1, step: -1) {
            var window: [Slot] = []
            var sizes: [Int] = []
            for end in start..<pieces.count {
                // A letter inside, or a gap as wide as between two things, ends the window.
                guard pieces[end].isDigits, end == start || gap(end - 1, end) < apart else { break }
                window += pieces[end].slots
                sizes.append(pieces[end].slots.count)
                if window.count > 19 { break }
                guard window.count >= 12, endsRow(inner: end, outer: end + 1, step: 1) else { continue }
                let digits = window.map(\.digit)
                let confidence = window.map(\.confidence).min() ?? 0
                guard let brand = CardBrand.detect(digits: digits), brand.lengths.contains(digits.count) else { continue }
                let grouped = groupingMatches(sizes, brand: brand, length: digits.count)
                let asPrinted = brand.groupings(forLength: digits.count).contains(sizes)
                if PAN.luhnValid(digits), let pan = try? PAN(digits: digits) {
                    var candidate = PANCandidate(pan: pan, confidence: confidence, groupingMatches: grouped)
                    candidate.gapsAsPrinted = asPrinted
                    candidate.doubtfulDigits = window.filter(\.doubtful).count
                    candidate.extent = Double(window[0].box.x)...Double(window[window.count - 1].box.maxX)
                    reading.candidates.append(candidate)
                } else if grouped {
                    reading.failing.append(NumberReading(digits: digits, confidence: confidence, gapsAsPrinted: asPrinted))
                }
            }
        }
        // Two extents of one line that both pass: the check digit would choose between them.
        if Set(reading.candidates.map(\.pan)).count > 1 { reading.candidates = [] }
        reading.candidates.sort { $0.confidence > $1.confidence }
        reading.failing.sort { $0.confidence > $1.confidence }
        return reading
    }

    /// How far apart (in the line's digit pitch, centre to centre) two digits a reader put in
    /// different words must be to be in different groups. A space between groups is about a
    /// digit wide, so their digits' centres are two pitches apart; a network reading a dim or
    /// blurred row can put a space between two digits of one group, a pitch apart.
    static let groupBreakPitches = 1.45

    /// The line's symbols as pieces, left to right: runs of digits inside one word, and runs
    /// of letters; punctuation (a dash, a dot, a slash) ends a piece and is no piece itself.
    /// Two runs of digits in neighbouring words closer than ``groupBreakPitches`` are one
    /// group: the reader's space between them is not on the card.
    static func pieces(of line: RecognizedLine) -> [Piece] {
        var pieces: [Piece] = []
        for word in line.words {
            var current: Piece?
            func close() {
                if let piece = current { pieces.append(piece) }
                current = nil
            }
            for symbol in word.symbols {
                if let slot = slot(for: symbol) {
                    if current?.isDigits != true { close() }
                    current = current ?? Piece(isDigits: true, left: symbol.box.x, right: symbol.box.maxX)
                    current!.slots.append(slot)
                } else if symbol.text.unicodeScalars.contains(where: { $0.properties.isAlphabetic || $0.properties.numericType != nil }) {
                    if current?.isDigits != false { close() }
                    current = current ?? Piece(isDigits: false, left: symbol.box.x, right: symbol.box.maxX)
                } else {
                    close()
                    continue
                }
                current!.symbols += 1
                current!.right = symbol.box.maxX
            }
            close()
        }
        pieces.sort { $0.left < $1.left }
        // The pitch: centre to centre of neighbouring digits inside one word.
        let pitches = pieces.flatMap { piece in
            zip(piece.slots.dropFirst(), piece.slots).map { $0.box.midX - $1.box.midX }
        }.sorted()
        guard !pitches.isEmpty else { return pieces }
        let pitch = pitches[pitches.count / 2]
        var joined: [Piece] = []
        for piece in pieces {
            if var last = joined.last, last.isDigits, piece.isDigits, let end = last.slots.last, let start = piece.slots.first,
                start.box.midX - end.box.midX < groupBreakPitches * pitch
            {
                last.slots += piece.slots
                last.symbols += piece.symbols
                last.right = piece.right
                joined[joined.count - 1] = last
            } else {
                joined.append(piece)
            }
        }
        return joined
    }

    static func slot(for symbol: RecognizedSymbol) -> Slot? {
        guard let digit = digitValue(symbol.text) else { return nil }
        let doubtful = symbol.choices.dropFirst().contains { choice in
            choice.text != symbol.text && digitValue(choice.text) != nil && min(choice.confidence, symbol.confidence) >= 50
        }
        return Slot(digit: digit, confidence: symbol.confidence / 100, doubtful: doubtful, box: symbol.box)
    }

    static func digitValue(_ text: String) -> UInt8? {
        guard text.count == 1, let ascii = text.unicodeScalars.first?.value, (48...57).contains(ascii) else { return nil }
        return UInt8(ascii - 48)
    }

    /// Whether the gaps the reader saw are all gaps of one of the ways the brand prints its
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

    /// Leaves out of a row's numbers, valid and failing, those that are part of a longer row
    /// (``isPartOfLongerRun(_:runs:)``): neither reported nor offered.
    static func dropPartsOfLongerRuns(_ candidates: inout [PANCandidate], _ failing: inout [NumberReading], runs: [[UInt8]]) {
        candidates.removeAll { isPartOfLongerRun($0.pan.revealedDigits, runs: runs) }
        failing.removeAll { isPartOfLongerRun($0.digits, runs: runs) }
    }

    /// Whether `number` is part of a longer row another reading of the same row saw: a run of
    /// at least two more digits that holds the number, at one place, with at most one digit
    /// read otherwise. A row whose first group one crop lost (the detector's box cut it off)
    /// reads as a shorter number that can pass the check; the crops that saw the whole row
    /// say what it is. A run only one digit longer may be the number and the card's edge read
    /// as a 1 beside it; a whole number one digit longer, its gaps as its brand prints them,
    /// refuses it at the decision (``CardScanner/isShortOfWholeReading(_:in:)``).
    static func isPartOfLongerRun(_ number: [UInt8], runs: [[UInt8]]) -> Bool {
        runs.contains { $0.count >= number.count + 2 && holds($0, number) }
    }

    /// Whether `run` holds `number` at one place, with at most one digit read otherwise.
    static func holds(_ run: [UInt8], _ number: [UInt8]) -> Bool {
        guard run.count >= number.count else { return false }
        return (0...(run.count - number.count)).contains { offset in
            var differences = 0
            for index in number.indices where run[offset + index] != number[index] {
                differences += 1
                if differences > 1 { return false }
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
    /// Groups at the same place on the row are the same group. Only groups that two different
    /// readers (the card-digit model, the templates, `eng`) saw alike take part: one reader
    /// repeats its confusions over every variant of a row. A place gives its group only when one
    /// group alone is seen so there (two different ones leave it undecided, and then nothing is
    /// made: the check digit would choose); the places make a number only as a whole row
    /// (nothing within ``apartHeights`` digits' heights beside it), in a brand's exact grouping,
    /// and only when exactly one number results.
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
        var places: [(anchor: Piece, texts: [String: Double], readers: [String: Set<PANCandidate.Source>], spans: [String: ClosedRange<Double>])] = []
        for piece in pieces.sorted(by: { $0.left + $0.right < $1.left + $1.right }) {
            let index = places.firstIndex { place in
                let overlap = min(place.anchor.right, piece.right) - max(place.anchor.left, piece.left)
                return overlap >= 0.5 * min(place.anchor.right - place.anchor.left, piece.right - piece.left)
            }
            if let index {
                places[index].texts[piece.text] = max(places[index].texts[piece.text] ?? 0, piece.confidence)
                places[index].readers[piece.text, default: []].insert(piece.source)
                let span = places[index].spans[piece.text] ?? piece.left...piece.right
                places[index].spans[piece.text] = min(span.lowerBound, piece.left)...max(span.upperBound, piece.right)
            } else {
                places.append((piece, [piece.text: piece.confidence], [piece.text: [piece.source]], [piece.text: piece.left...piece.right]))
            }
        }
        // Each place's strongest group that two readers saw alike: a group one reader saw is
        // not evidence enough to build a number on (a reader that confuses a 7 for a 1 does so
        // in every variant of the row), and with several texts at each place some combination
        // would pass the check by chance. A group inside a longer one at its place is that one
        // half seen (glare ate the rest). Two different groups so seen leave the place
        // undecided, and then no number is made: the check digit would choose. A place without
        // a group still shows where the row goes on.
        var undecided = false
        let groups: [(text: String?, confidence: Double, left: Double, right: Double)] = places.map { place in
            let seenTwice = place.texts.filter { place.readers[$0.key, default: []].count >= 2 }
            let whole = seenTwice.filter { text in !seenTwice.keys.contains { $0 != text.key && $0.contains(text.key) } }
            if whole.count > 1 { undecided = true }
            // Where the group lies (where its readings put it), else where the place does.
            let text = whole.count == 1 ? whole.first?.key : nil
            let span = text.flatMap { place.spans[$0] } ?? place.anchor.left...place.anchor.right
            return (text, whole.first?.value ?? 0, span.lowerBound, span.upperBound)
        }
        guard !undecided else { return nil }
        // A digit's height, from the groups' widths (a digit is about two thirds as wide as tall).
        let pitches = groups.compactMap { group in group.text.map { (group.right - group.left) / Double(max(1, $0.count)) } }.sorted()
        let height = 1.5 * (pitches.isEmpty ? 0 : pitches[pitches.count / 2])
        func gap(_ left: Int, _ right: Int) -> Double { groups[right].left - groups[left].right }
        /// Whether the row ends between `inner` and the next place outward (`step` ±1): nothing
        /// within ``apartHeights`` digit heights (a row cut from inside the card: no stray marks).
        func endsRow(inner: Int, outer: Int, step: Int) -> Bool {
            guard groups.indices.contains(outer) else { return true }
            return (step < 0 ? gap(outer, inner) : gap(inner, outer)) >= apartHeights * height
        }
        var found: [String: PANCandidate] = [:]
        for start in groups.indices where endsRow(inner: start, outer: start - 1, step: -1) {
            for count in 2...5 where start + count <= groups.count {
                let end = start + count - 1
                if gap(end - 1, end) >= apartHeights * height { break }
                guard endsRow(inner: end, outer: end + 1, step: 1) else { continue }
                let chosen = groups[start...end]
                let texts = chosen.compactMap(\.text)
                guard texts.count == count else { continue }
                let digits = texts.flatMap { $0.utf8.map { $0 - 48 } }
                guard let brand = CardBrand.detect(digits: digits), brand.lengths.contains(digits.count),
                    brand.groupings(forLength: digits.count).contains(texts.map(\.count)),
                    PAN.luhnValid(digits), let pan = try? PAN(digits: digits)
                else { continue }
                var candidate = PANCandidate(pan: pan, confidence: chosen.map(\.confidence).min() ?? 0, groupingMatches: true)
                candidate.extent = groups[start].left...groups[end].right
                found[pan.revealed] = candidate
            }
        }
        guard found.count == 1 else { return nil }
        return found.values.first
    }
}
