import OCRBridge

/// The learned engine's route through a picture, in three stages one can follow:
///
/// 1. **Locate**: each way the card may lie (``CardScanner/hypotheses(for:)``: the best card
///    outlines straightened, the whole frame levelled, turned again by the detector's lines
///    where they still slant; then the frame's text enlarged, and levelled where it slants; the
///    frame turned a quarter either way and the likeliest card turned half round) goes to the
///    text detector, and the lines it finds on one row of the card are joined into that row's
///    box: the detector often splits an embossed number into pieces, and a number is read
///    whole or not at all.
/// 2. **Read**: every row in the card's number band is read by the card-digit network (as
///    found, taller, shorter, across the card, in its pieces) and by PP-OCRv4's recognizer
///    where the first saw most of a number; ``PANDecoder`` finds the whole numbers in each reading
///    (a brand's IIN, one of its lengths, its digit grouping, the check digit as a check).
/// 3. **Decide** (``CardScanner/decideLearned(_:failing:)``): a number is reported when one
///    network was sure of every digit or both networks read it as it is, and, with Tesseract
///    beside it, when Tesseract's card-digit model does not read a different number on the
///    same row.
///
/// The expiry comes from the lines below the number, each date voted on (``ExpiryBallot``)
/// and two readings needed; a VALID FROM date is never taken for the expiry.
extension CardScanner {
    /// A row of text on a straightened card: the detector's lines that lie on it, and their
    /// union.
    struct LearnedRow {
        var box: Box
        var pieces: [Box]
    }

    /// A crop of a straightened card read by one of the learned engine's recognizers: the
    /// detector's box and the margin cut beside it (``learnedLineImage(of:box:margin:)``).
    struct LineCrop: Hashable {
        enum Reader: Hashable {
            /// The card-digit network.
            case digits
            /// PP-OCRv4's recognizer.
            case text
        }

        var box: Box
        var margin: Int
        var reader: Reader

        /// The crop of `box` with `margin` beside it, by default the recognizers' own
        /// (``CardScanner/learnedMargin(of:)``).
        init(box: Box, margin: Int? = nil, reader: Reader) {
            self.box = box
            self.margin = margin ?? CardScanner.learnedMargin(of: box)
            self.reader = reader
        }
    }

    /// What the learned engine read on one straightened card.
    struct LearnedLook {
        var candidates: [PANCandidate] = []
        var failing: [PANDecoder.NumberReading] = []
        var decided: PANCandidate?
        /// The row the number was decided on (or where most whole numbers were read).
        var numberRow: LearnedRow?
        /// The most digits the card-digit network read in one crop of the number band.
        var mostDigits = 0
        /// How far the card's text runs from horizontal, in degrees (the median of the
        /// detector's long lines; positive: falling to the right).
        var slant = 0.0
        var rows: [LearnedRow] = []
        var readings: [(box: Box, text: String)] = []
        /// The whole numbers that fail the check digit, by the network that read them.
        var failingByReader: [PANCandidate.Source: [PANDecoder.NumberReading]] = [:]
        /// Every reading of a crop of this card, by crop and reader
        /// (``CardScanner/Evidence/lines``).
        var lines: [LineCrop: RecognizedLine] = [:]

        /// Whether this look settles that the card's number fails the check: both networks
        /// read one and the same whole number, each sure of every digit
        /// (``CardScanner/plainFailureConfidence``), and no number that passes it was read as
        /// it is. A specimen's printed number, or a misprint: another look at the card reads the
        /// same digits, or passes the check only by misreading one.
        var failsPlainly: Bool {
            guard decided == nil, candidates.isEmpty else { return false }
            let sure = { (reading: PANDecoder.NumberReading) in reading.confidence >= CardScanner.plainFailureConfidence }
            let byPPOCR = Set((failingByReader[.ppocr] ?? []).filter(sure).map(\.digits))
            return (failingByReader[.learned] ?? []).contains { sure($0) && byPPOCR.contains($0.digits) }
        }
    }

    /// Reads `bitmap` with the learned engine, Tesseract checking its number when `engines` is
    /// given; no look is started after the first once `search` is over.
    func readLearned(
        _ bitmap: Bitmap,
        learned: LearnedEngine,
        checkingWith engines: Engines?,
        search: Search
    ) throws -> Evidence {
        let grey = bitmap.grey()
        var evidence = Evidence()
        var best: (look: LearnedLook, card: Bitmap, outline: CardLocator.Outline?)?
        // The best look that is not a half turn: the one Tesseract's route may read after.
        var upright: (seen: Int, hypothesis: Hypothesis)?
        let numberStart = ContinuousClock.now
        // The views, the number row's first, and the outlines that cut that row: no look at
        // their cards settles that the number fails the check (``RowPlace/cuts``).
        let (views, cutting) = try ordered(hypotheses(for: grey, wholeAsItLies: true), in: grey, by: learned.numberRows)
        func consider(_ look: LearnedLook, card: Bitmap, outline: CardLocator.Outline?, halfTurn: Bool = false) {
            evidence.candidates += look.candidates
            evidence.failing += look.failing
            let seen = look.candidates.count + look.failing.count
            if look.decided != nil || best == nil || seen > (best!.look.candidates.count + best!.look.failing.count) {
                best = (look, card, outline)
            }
            if !halfTurn, upright == nil || seen > upright!.seen {
                upright = (seen, Hypothesis(outline: outline, quarterTurns: 0) { card })
            }
            if look.failsPlainly, !(outline.map(cutting.contains) ?? false) { evidence.numberFailsPlainly = true }
        }
        // Nothing decided yet, no look has settled that the number fails the check, and the
        // time budget lasts.
        func searching() -> Bool { best?.look.decided == nil && !evidence.numberFailsPlainly && !search.isOver }
        // Past the time budget a look reads no further row, but the first look reads its
        // ``firstLookRows`` widest rows whatever the budget.
        var firstLook = true
        func look(at card: Bitmap, edgesKnown: Bool = true, detectorSide: Int? = nil) throws -> LearnedLook {
            let leastRows = firstLook ? Self.firstLookRows : 1
            firstLook = false
            var look = try lookLearned(
                at: card,
                learned: learned,
                edgesKnown: edgesKnown,
                detectorSide: detectorSide,
                search: search,
                leastRows: leastRows
            )
            if let decided = look.decided, let engines, let row = look.numberRow {
                look.decided = try checked(decided, on: card, row: row, with: engines, look: &look)
            }
            return look
        }
        var zoomOn: (region: Box, frame: Bitmap)?
        for hypothesis in views {
            guard let card = hypothesis.makeCard() else { continue }
            let seen = try look(at: card, edgesKnown: hypothesis.outline != nil)
            consider(seen, card: card, outline: hypothesis.outline)
            guard searching() else { break }
            guard hypothesis.outline == nil, zoomOn == nil else { continue }
            // The frame's text still slanted (a card in perspective, or turned where the frame
            // gave the levelling too little to go by): the frame turned by the detector's lines.
            var frame = (look: seen, card: card)
            if let turned = Self.levelled(card, as: seen) {
                frame = (try look(at: turned, edgesKnown: false), turned)
                consider(frame.look, card: frame.card, outline: nil)
                guard searching() else { break }
            }
            if frame.look.mostDigits >= 6, let region = Self.textRegion(of: frame.look.rows, in: frame.card) {
                zoomOn = (region, frame.card)
            }
        }
        // The likeliest card again with the detector at a larger scale: its lines on an
        // embossed number split and end differently, and a group it lost at one scale it can
        // find at another.
        if let seen = best, searching() {
            consider(
                try look(at: seen.card, edgesKnown: seen.outline != nil, detectorSide: Self.secondDetectorSide),
                card: seen.card,
                outline: seen.outline
            )
        }
        // A card small in the frame, its outline not found, where the whole frame showed digits:
        // the part of the frame holding text, enlarged to the card's width, read again.
        if searching(), let zoomOn, let zoomed = Self.zoomed(on: zoomOn.region, in: zoomOn.frame) {
            let seen = try look(at: zoomed, edgesKnown: false)
            consider(seen, card: zoomed, outline: nil)
            // Enlarged, a card in perspective shows how far its text slants (on the whole
            // frame the ground's lines outvote it): turned level and read again.
            if searching(), let turned = Self.levelled(zoomed, as: seen) {
                consider(try look(at: turned, edgesKnown: false), card: turned, outline: nil)
            }
        }
        // A card lying across the frame, its number running up or down: the whole frame a
        // quarter turn either way; a card upside down: the likeliest card turned half round.
        // Upside-down digits can read as digits (a 6 as a 9, 4000…9995 as 5666…0007), so a
        // number counts only when the turns give no other number, and the half turn's
        // only when both networks read it as it is (or Tesseract agreed).
        if searching() {
            var turns: [(card: Bitmap, outline: CardLocator.Outline?, halfTurn: Bool)] = [1, 3].compactMap { turns in
                Self.levelled(grey, quarterTurns: turns, deskewRange: Self.wideDeskew).map { ($0, nil, false) }
            }
            if let best { turns.append((best.card.turned(quarterTurns: 2), best.outline, true)) }
            var looks = try turns.map { try look(at: $0.card, edgesKnown: $0.outline != nil) }
            for index in looks.indices where turns[index].halfTurn {
                if let decided = looks[index].decided, !Self.readByBoth(decided, in: looks[index]) { looks[index].decided = nil }
            }
            // Two turns that read the same number agree (the first is kept, its card read for
            // the date); two numbers refuse both.
            let decidedNumbers = Set(looks.compactMap { $0.decided?.pan })
            let first = looks.firstIndex { $0.decided != nil }
            for (index, (turn, var seen)) in zip(turns, looks).enumerated() {
                if decidedNumbers.count > 1 || index != first { seen.decided = nil }
                consider(seen, card: turn.card, outline: turn.outline, halfTurn: turn.halfTurn)
            }
        }
        StageTimings.add(phase: ScanPhase.number.rawValue, since: numberStart)
        guard let best else { return evidence }
        evidence.uprightCard = upright?.hypothesis
        evidence.decided = best.look.decided
        evidence.decidedByBoth = best.look.decided.map { Self.readByBoth($0, in: best.look) } ?? false
        evidence.card = best.card
        evidence.outline = best.outline
        evidence.rows = best.look.readings
        evidence.numberBox = best.look.numberRow?.box
        evidence.learnedRows = best.look.rows
        evidence.lines = best.look.lines
        // With Tesseract beside it, the date of a number decided is weighed by the caller.
        if engines == nil || evidence.decided == nil {
            let ballot = try StageTimings.measure(phase: ScanPhase.expiry.rawValue) {
                try learnedExpiry(learned: learned, into: &evidence, search: search)
            }
            evidence.expiry = ballot.isSettled(votes: 2) ? ballot.leader : nil
        }
        // The holder's name beside a number reported, or one both networks read plainly failing
        // the check (a specimen, a misprint): offered with it to be corrected by hand.
        if evidence.decided != nil || evidence.numberFailsPlainly {
            evidence.holder = try StageTimings.measure(phase: ScanPhase.holder.rawValue) {
                try learnedHolder(learned: learned, into: &evidence)
            }
        }
        return evidence
    }

    /// How many rows of a card (besides the number's) PP-OCRv4 reads for a sample word once a
    /// number is decided or a whole one read, the tallest first: a SAMPLE banner is as tall as a
    /// bank's name.
    static let specimenRows = 8

    /// A word that marks the card as a sample (``Specimen/inText(_:)``), read anywhere on the card
    /// a number was decided or read whole on: the rows PP-OCRv4 and Tesseract's `eng` read
    /// already (both routes'), then the card's other rows
    /// (``specimenRows``), by the learned engine's detector and PP-OCRv4, which reads Latin, CJK
    /// and Cyrillic words. Nil without the learned engine (`--engine tesseract` reads no words).
    func sampleWord(on evidence: inout Evidence) throws -> Specimen? {
        for (_, text) in evidence.earlierRows + evidence.rows {
            if let found = Specimen.inText(text) { return found }
        }
        guard let learned, let card = evidence.card else { return nil }
        var rows = evidence.learnedRows
        if rows.isEmpty { rows = Self.rows(of: try learned.detector.detect(card, maximumSide: nil).map(\.box)) }
        let read = Set(evidence.rows.filter { $0.text.hasPrefix("ppocr: ") }.map(\.box))
        let number = evidence.numberBox
        let others = rows.filter { row in
            let onNumberRow = number.map { row.box.midY >= Double($0.y) && row.box.midY <= Double($0.maxY) } ?? false
            return row.box.width >= row.box.height && row.box.height >= 8 && !read.contains(row.box) && !onNumberRow
        }
        for row in others.sorted(by: { $0.box.height > $1.box.height }).prefix(Self.specimenRows) {
            guard let text = try line(row.box, by: .text, of: learned, into: &evidence)?.text else { continue }
            evidence.rows.append((row.box, "ppocr: " + text))
            if let found = Specimen.inText(text) { return found }
        }
        return nil
    }

    /// The holder's name: a row under the number, starting in the card's left half and long
    /// enough for two words, that PP-OCRv4 reads as capital words (``CardScanner/holderName(in:)``:
    /// no label, no brand). The two likeliest rows at most, nearest the number first; a row
    /// read with a digit or a "/" (a date, MONTH/YEAR, a small number under the card's) is not
    /// a name's and does not count, up to ``holderRows`` rows in all.
    func learnedHolder(learned: LearnedEngine, into evidence: inout Evidence) throws -> String? {
        guard let numberBox = evidence.numberBox, let card = evidence.card else { return nil }
        let rows = evidence.learnedRows.filter { row in
            row.box.midY > Double(numberBox.maxY) && row.box.x < card.width / 2 && row.box.width >= 3 * row.box.height
                && row.box.height <= numberBox.height
        }
        var tried = 0
        for row in rows.prefix(Self.holderRows) where tried < 2 {
            // A brand's logo often shares the name's row at the card's right: the pieces that
            // start in its left three fifths only.
            let pieces = row.pieces.filter { $0.x < card.width * 3 / 5 }
            guard let first = pieces.first else { continue }
            let box = pieces.dropFirst().reduce(first, Self.enclosing)
            guard let line = try line(box, by: .text, of: learned, into: &evidence) else { continue }
            evidence.rows.append((box, "ppocr: " + line.text))
            if let name = Self.holderName(in: Recognition(lines: [line])) { return name }
            if !line.text.contains(where: { $0.isASCIIDigit || $0 == "/" }) { tried += 1 }
        }
        return nil
    }

    /// How many rows under the number the holder's name is looked for on, date rows included.
    static let holderRows = 4

    /// The networks' votes for the expiry: the bands of rows under the number row (or, with
    /// none, in the lower half), top to bottom, read by both networks (PP-OCRv4 only where the
    /// card-digit network saw a date's digits) until a date has two votes. Each date a reading
    /// shows is then cut out where it stands and read alone by both: a label beside it, read as
    /// digits, no longer hides it. A date only one reading saw may be a misread digit or a VALID
    /// FROM date whose later partner was missed: the caller takes the leader only with two votes.
    ///
    /// Past the time budget (`search`), no band after the ``budgetedDateBands`` nearest the number.
    func learnedExpiry(learned: LearnedEngine, into evidence: inout Evidence, search: Search) throws -> ExpiryBallot {
        guard let card = evidence.card else { return ExpiryBallot() }
        let below = Self.bands(
            of: evidence.learnedRows.filter { row in
                guard let numberBox = evidence.numberBox else { return row.box.midY > Double(card.height / 2) }
                return row.box.midY > Double(numberBox.maxY)
            }
        )
        var ballot = ExpiryBallot()
        // A row is read whole, and in its parts, before the ballot is looked at: a VALID FROM
        // date and its expiry on one row are seen together.
        for (index, row) in below.enumerated() where !ballot.isSettled(votes: 2) {
            // A picture full of text (a receipt) has dozens of bands under any row.
            if index >= Self.budgetedDateBands, search.isOver { break }
            var readings: [(left: Int, right: Int, text: String)] = []
            var dateBoxes: [Box] = []
            // A piece that is the whole row is read once: two readings of one crop are one vote.
            // PP-OCRv4 reads a piece of the band only where the band whole showed a "/" to
            // either network, or the piece does to the card-digit network: that network reads
            // digits into labels and logos, and most pieces are those (same dates in all three
            // sets, about 50 ms less a picture on cards-dev).
            var bandShowsDate = false
            for box in [row.box] + row.pieces.filter({ $0 != row.box }) {
                guard let line = try line(box, by: .digits, of: learned, into: &evidence) else { continue }
                evidence.rows.append((box, line.text))
                guard line.text.contains("/") || line.text.filter(\.isASCIIDigit).count >= 4 else { continue }
                if box != row.box, !bandShowsDate, !line.text.contains("/") { continue }
                guard let other = try self.line(box, by: .text, of: learned, into: &evidence) else { continue }
                if other.text.contains("/") || line.text.contains("/") { bandShowsDate = true }
                evidence.rows.append((box, "ppocr: " + other.text))
                readings += [(box.x, box.maxX, line.text), (box.x, box.maxX, other.text)]
                let left = box.x - Self.learnedMargin(of: box)
                for found in Self.dateSpans(in: line) + Self.dateSpans(in: other) {
                    let date = Box(x: left + found.x, y: box.y, width: found.width, height: box.height)
                    if !dateBoxes.contains(where: { Self.overlap(of: $0, and: date) > 0.5 }) { dateBoxes.append(date) }
                }
                // Both networks read the band whole as one and the same date, and nothing else
                // as a date: two votes already, and no earlier date beside it to mark as a
                // start date. Its pieces and the date cut out would only repeat it.
                if box == row.box, Self.sameLoneDate(line.text, other.text) {
                    dateBoxes.removeAll()
                    break
                }
            }
            // A date read inside a longer reading (a label beside it read as digits, VALID
            // 05/26 as 0305/26) is cut out where the reading put it and read alone by both.
            for date in dateBoxes {
                for (reader, prefix) in [(LineCrop.Reader.digits, "date: "), (.text, "date ppocr: ")] {
                    guard let text = try line(date, margin: date.height * 2 / 5, by: reader, of: learned, into: &evidence)?.text else { continue }
                    evidence.rows.append((date, prefix + text))
                    readings.append((date.x, date.maxX, Self.dateAlone(text)))
                }
            }
            ballot.add(row: readings)
        }
        return ballot
    }

    /// How many bands under the number the networks read for its date once the time budget is
    /// spent: the date prints close under the number, and a picture full of text (a receipt)
    /// has dozens of bands.
    static let budgetedDateBands = 2

    /// Whether two readings each show exactly one date, the same, and no other "/".
    static func sameLoneDate(_ one: String, _ other: String) -> Bool {
        let dates = ExpiryFinder.dates(in: one)
        return dates.count == 1 && ExpiryFinder.dates(in: other) == dates
            && one.filter { $0 == "/" }.count == 1 && other.filter { $0 == "/" }.count == 1
    }

    /// Where a reading shows a date: from the second character before each "/" to the last of
    /// up to four digits after it (in its word, or the next word when the "/" ends its own),
    /// in the reading's image pixels.
    static func dateSpans(in line: RecognizedLine) -> [Box] {
        let symbols = line.words.enumerated().flatMap { word in word.element.symbols.map { (word: word.offset, symbol: $0) } }
        var spans: [Box] = []
        for (index, slash) in symbols.enumerated() where slash.symbol.text == "/" && index >= 1 {
            var last = index
            while last + 1 < symbols.count, last - index < 4, symbols[last + 1].symbol.text.allSatisfy(\.isASCIIDigit),
                symbols[last + 1].word == symbols[last].word || last == index
            {
                last += 1
            }
            guard last - index >= 2 else { continue }
            let first = symbols[max(0, index - 2)].symbol
            spans.append(Box(x: first.box.x, y: 0, width: max(1, symbols[last].symbol.box.maxX - first.box.x), height: line.box.height))
        }
        return spans
    }

    /// A reading of a date cut out alone, from two characters before its "/": the crop's edge
    /// can show a label's last letter or a neighbour's edge, read as a digit (011/27).
    static func dateAlone(_ text: String) -> String {
        guard let slash = text.firstIndex(of: "/"), let start = text.index(slash, offsetBy: -2, limitedBy: text.startIndex) else { return text }
        return String(text[start...])
    }

    /// Rows below the number that share a band of the card (their heights overlapping by half
    /// the shorter's), joined: a small VALID FROM date and a taller expiry beside it are read
    /// together, so that the earlier date is known for a start date.
    static func bands(of rows: [LearnedRow]) -> [LearnedRow] {
        // Each band is judged by the row that started it, not by the union: a union that
        // grows would take in the rows above and below one by one.
        var bands: [(first: Box, row: LearnedRow)] = []
        for row in rows {
            if let index = bands.firstIndex(where: { band in
                let shared = min(band.first.maxY, row.box.maxY) - max(band.first.y, row.box.y)
                return shared * 2 >= min(band.first.height, row.box.height)
            }) {
                bands[index].row.box = enclosing(bands[index].row.box, row.box)
                bands[index].row.pieces = (bands[index].row.pieces + row.pieces).sorted { $0.x < $1.x }
            } else {
                bands.append((row.box, row))
            }
        }
        return bands.map(\.row)
    }

    /// The share of the narrower box's width that two boxes share.
    static func overlap(of one: Box, and other: Box) -> Double {
        let shared = min(one.maxX, other.maxX) - max(one.x, other.x)
        return Double(max(0, shared)) / Double(max(1, min(one.width, other.width)))
    }

    /// The expiry from Tesseract's readings of the strip under the number and the networks'
    /// readings of the rows below it. Each engine's date counts with two votes of its own; when
    /// both have one and they differ, there is no expiry: Tesseract misreads one digit of some
    /// typefaces the same way in every rendering (8/2030 for 3/2030), the networks take a
    /// VALID FROM date alone, and a wrong date is worse than none (it is asked for). When
    /// neither engine has two votes, one vote each for the same date is agreement. A date
    /// either engine read before a later one is a start date for both.
    static func agreedExpiry(tesseract: ExpiryBallot, networks: ExpiryBallot) -> Expiry? {
        var tesseract = tesseract
        var networks = networks
        tesseract.addStarts(of: networks)
        networks.addStarts(of: tesseract)
        let fromTesseract = tesseract.isSettled(votes: 2) ? tesseract.leader : nil
        let fromNetworks = networks.isSettled(votes: 2) ? networks.leader : nil
        switch (fromTesseract, fromNetworks) {
        case let (one?, other?):
            return one == other ? one : nil
        case let (one?, nil), let (nil, one?):
            return one
        case (nil, nil):
            var together = tesseract
            together.add(networks)
            return together.isSettled(votes: 2) ? together.leader : nil
        }
    }

    /// How many rows of its number band the first look at a picture reads, widest first,
    /// however little time budget is left: the number is not always the widest row of the
    /// band (a name and VALID THRU date beside it can be wider), and
    /// a budget spent should still read a card that lies plainly in the frame.
    static let firstLookRows = 3

    /// Locates and reads the number rows of one straightened card, the widest first; once
    /// `search` is over, no row after the first `leastRows`. `edgesKnown` is false for a
    /// whole frame, or a part of one, whose sides are not the card's: there the number-row
    /// detector's row bounds what a crop across it reads as the row (``PANDecoder/read(_:inner:row:)``).
    func lookLearned(
        at card: Bitmap,
        learned: LearnedEngine,
        edgesKnown: Bool = true,
        detectorSide: Int? = nil,
        search: Search,
        leastRows: Int = 1
    ) throws -> LearnedLook {
        var look = LearnedLook()
        let regions = try learned.detector.detect(card, maximumSide: detectorSide)
        look.rows = Self.rows(of: regions.map(\.box))
        let slants = regions.map(\.slant).filter { $0 != 0 }.sorted()
        if !slants.isEmpty { look.slant = slants[slants.count / 2] }
        // The number band: cards print the number between a quarter and nine tenths down.
        let band = Double(card.height) * 0.25...Double(card.height) * 0.9
        var mostWhole = 0
        // Widest first: the number is the widest row of the band on nearly every card, and the
        // rows above it (a chip's edge, a bank's name, a logo) read as digits by the card-digit
        // network cost as many readings each as the number itself.
        var bandRows = look.rows.filter { band.contains($0.box.midY) && $0.box.width * 2 >= $0.box.height * 3 }
            .sorted { $0.box.width > $1.box.width }
        // The number-row detector's row on this card: the band's rows on it are read first, or
        // its own box where the text detector found none there (it split the number, or lost it).
        let found = try learned.numberRows.rows(in: card).first(where: Self.levelNumberRow)
        if let found {
            let onIt = { (row: LearnedRow) in Double(found.box.y)...Double(found.box.maxY) ~= row.box.midY }
            if bandRows.contains(where: onIt) {
                bandRows = bandRows.filter(onIt) + bandRows.filter { !onIt($0) }
            } else if band.contains(found.box.midY) {
                bandRows.insert(LearnedRow(box: found.box, pieces: [found.box]), at: 0)
            }
        }
        for (index, row) in bandRows.enumerated() {
            // A picture full of text (a receipt, a letter) has dozens of rows: past the time
            // budget, the rows already read are enough.
            if index >= leastRows, search.isOver { break }
            var rowCandidates: [PANCandidate] = []
            var rowFailing: [PANDecoder.NumberReading] = []
            // The detector often stops short of an embossed number's first or last digit, or
            // misses a group: the row is read as found, a little taller and shorter, and across
            // the card's width as well.
            let across = Box(x: card.width / 40, y: row.box.y, width: card.width * 38 / 40, height: row.box.height)
            // On a whole frame the card's edges are not known, and a crop across the frame
            // reads them, and the ground beyond, as digits beside the number: where the
            // number-row detector found this row, what lies beyond its ends is read as not the
            // row's (``PANDecoder/read(_:inner:row:)``).
            var rowEnds: ClosedRange<Double>?
            if !edgesKnown, let found, Double(found.box.y)...Double(found.box.maxY) ~= row.box.midY {
                let slack = Double(found.box.height) / 4
                rowEnds = (Double(min(found.box.x, row.box.x)) - slack)...(Double(max(found.box.maxX, row.box.maxX)) + slack)
            }
            let taller = Box(x: row.box.x, y: row.box.y - row.box.height / 8, width: row.box.width, height: row.box.height * 5 / 4)
            let shorter = Box(x: row.box.x, y: row.box.y + row.box.height / 10, width: row.box.width, height: row.box.height * 4 / 5)
            // The detector also stops short of a group on line art or a hologram: the row
            // carried to the card's right edge, and to its left edge.
            let toRight = Box(x: row.box.x, y: row.box.y, width: across.maxX - row.box.x, height: row.box.height)
            let toLeft = Box(x: across.x, y: row.box.y, width: row.box.maxX - across.x, height: row.box.height)
            let carried = [toRight, toLeft].filter { $0.width * 10 > row.box.width * 11 && $0.width * 10 < across.width * 9 }
            let pieces = row.pieces.count > 1 ? row.pieces.filter { $0.width >= $0.height * 6 } : []
            var digitsSeen = 0
            var fullest = row.box
            // Every run of digits any crop of the row showed: a number is refused where a crop
            // saw it as part of a longer row (``PANDecoder/isPartOfLongerRun(_:runs:)``).
            var rowRuns: [[UInt8]] = []
            var acrossRead = false
            func read(_ box: Box, with reader: LineRecognizer, as source: PANCandidate.Source) throws {
                guard let image = learnedLineImage(of: card, box: box) else { return }
                let line = try reader.recognize(image)
                look.lines[LineCrop(box: box, reader: source == .ppocr ? .text : .digits)] = line
                look.readings.append((box, source == .ppocr ? "ppocr: " + line.text : line.text))
                let digits = line.text.filter(\.isASCIIDigit).count
                if digits > digitsSeen {
                    digitsSeen = digits
                    fullest = box
                }
                if source == .learned { look.mostDigits = max(look.mostDigits, digits) }
                if box == across { acrossRead = true }
                // A crop reaching the card's edge zone: a lone mark there is the edge.
                let left = max(0, box.x - Self.learnedMargin(of: box))
                let edge = Double(card.width) * Self.cardEdgeShare
                let reaches = Double(left) < edge || Double(left + image.width) > Double(card.width) - edge
                let inner = (edge - Double(left))...(Double(card.width) - edge - Double(left))
                let onRow = rowEnds.map { ($0.lowerBound - Double(left))...($0.upperBound - Double(left)) }
                let reading = PANDecoder.read(line, inner: reaches ? inner : nil, row: onRow)
                rowRuns += reading.runs
                rowCandidates += reading.candidates.map { $0.from(source) }
                rowFailing += reading.failing
                look.failingByReader[source, default: []] += reading.failing
            }
            /// The row's decision on its readings so far, without the numbers a crop saw as part
            /// of a longer row.
            func decideRow() -> PANCandidate? {
                PANDecoder.dropPartsOfLongerRuns(&rowCandidates, &rowFailing, runs: rowRuns)
                return decideLearned(rowCandidates, failing: rowFailing)
            }
            // The card-digit network until its readings decide the row.
            var decided: PANCandidate?
            for box in [row.box, taller, shorter, across] + carried + pieces where decided == nil {
                try read(box, with: learned.digits, as: .learned)
                if rowCandidates.count >= 2 { decided = decideRow() }
            }
            if decided == nil { decided = decideRow() }
            // The detector's pieces of the row one at a time (a group of digits each, often, as
            // the card-digit network learned them), their readings joined left to right.
            if decided == nil, row.pieces.count >= 2 {
                let line = try piecewise(row, on: card, with: learned.digits)
                look.readings.append((row.box, "pieces: " + line.text))
                let reading = PANDecoder.read(line)
                rowRuns += reading.runs
                rowCandidates += reading.candidates.map { $0.from(.learned) }
                rowFailing += reading.failing
                look.failingByReader[.learned, default: []] += reading.failing
                decided = decideRow()
            }
            // PP-OCRv4's reader, on the crop where the card-digit network saw most digits: a
            // second opinion on a number decided (another number read plainly refuses it), and a
            // second reader where the first saw most of a number.
            if decided != nil || digitsSeen >= 10 {
                try read(fullest, with: learned.text, as: .ppocr)
                decided = decideRow()
            }
            // A number is the whole row: the row across the card is read before one is taken
            // (the detector's box can cut a group off, leaving a shorter number that passes).
            if decided != nil, !acrossRead {
                try read(across, with: learned.digits, as: .learned)
                decided = decideRow()
            }
            look.candidates += rowCandidates
            look.failing += rowFailing
            if let decided {
                look.decided = decided
                look.numberRow = row
                return look
            }
            let whole = rowCandidates.count + rowFailing.count
            if whole > mostWhole {
                mostWhole = whole
                look.numberRow = row
            }
        }
        return look
    }

    /// How far in from the card's left and right edges (a share of its width) no card prints
    /// its number: a lone mark a crop picks up there is the edge (``PANDecoder/read(_:inner:)``).
    static let cardEdgeShare = 0.06

    /// The least confidence (the weakest digit's probability) at which one reading of a row by
    /// one network is reported on its own.
    static let learnedAloneConfidence = 0.85

    /// How sure of every digit each network must be of a whole number that fails the check for
    /// the search to stop there (``LearnedLook/failsPlainly``). On cards-dev, the second
    /// generator and the fixtures, no card read in the end came near: upside down or blurred,
    /// the two networks' failing readings differ, or one of them is unsure of a digit (0.31 at
    /// most), except on guail_10, where the same look also read its valid number as it is.
    static let plainFailureConfidence = 0.7

    /// How sure a reading that fails the check must be, as a share of the valid reading's
    /// confidence, to count against it.
    static let failingComparableShare = 0.75

    /// How many of a row's failing readings read the row's number otherwise: the same length
    /// read whole (a crop that cut a digit off reads shorter and says nothing about this one),
    /// and nearly as sure as the valid reading (``failingComparableShare``: a crop that blurred a
    /// digit reads it unsurely; a specimen's printed number reads as surely as its misreading).
    static func failingAlike(_ candidate: PANCandidate, in failing: [PANDecoder.NumberReading]) -> Int {
        let comparable = candidate.confidence * failingComparableShare
        return failing.filter { $0.digits.count == candidate.pan.length && $0.confidence >= comparable }.count
    }

    /// The number a row's learned readings support, or nil. Both networks reading the number
    /// as it is is agreement; one network alone must be sure of every digit. A number of the same length,
    /// read whole and nearly as surely, that fails the check as often as the valid one (a
    /// specimen's printed number) refuses it; another number read as it is with some
    /// confidence refuses both.
    func decideLearned(_ candidates: [PANCandidate], failing: [PANDecoder.NumberReading]) -> PANCandidate? {
        struct Support {
            var best: PANCandidate
            var plain = 0
            var readers: Set<PANCandidate.Source> = []
        }
        var byNumber: [String: Support] = [:]
        for candidate in candidates where candidate.groupingMatches {
            var entry = byNumber[candidate.pan.revealed] ?? Support(best: candidate)
            if candidate.confidence > entry.best.confidence { entry.best = candidate }
            entry.plain += 1
            entry.readers.insert(candidate.source)
            byNumber[candidate.pan.revealed] = entry
        }
        let seen = byNumber.values.filter { $0.plain >= 1 && $0.best.confidence >= configuration.minimumAgreedConfidence }
        let accepted = seen.filter { entry in
            guard entry.plain > Self.failingAlike(entry.best, in: failing) else { return false }
            // One network agreeing with itself over crops of one row is weak evidence: its
            // confusions repeat (a specimen's failing number, one digit misread alike in every
            // crop, passes the check one time in ten). Two networks are independent readers.
            if entry.readers.count >= 2 { return true }
            return entry.best.confidence >= Self.learnedAloneConfidence
        }
        guard accepted.count == 1, seen.count == 1 else { return nil }
        return accepted[0].best
    }

    /// Whether a decided number has two independent readers: Tesseract's agreement, or both
    /// networks reading it as it is.
    static func readByBoth(_ decided: PANCandidate, in look: LearnedLook) -> Bool {
        if decided.source == .agreed { return true }
        let readers = Set(look.candidates.filter { $0.pan == decided.pan }.map(\.source))
        return readers.contains(.learned) && readers.contains(.ppocr)
    }

    /// The longest side (pixels) the card is scaled to for the detector's second look, where
    /// the first (``TextDetector/Configuration/maximumSide``, 640) decided nothing. 800 read one
    /// more number in cards-dev and in the second generator, and more dates; 512 lost dates.
    static let secondDetectorSide = 800

    /// The least slant (degrees) of the text on the frame, or on the part of it enlarged, for
    /// which it is turned level and read again: across a number row 600 pixels wide on the card,
    /// 2 degrees rise by half the height of its digits, and a line recognizer reading a crop that
    /// slants that much misreads or drops digits (4 degrees left cards in perspective unread).
    static let minimumSlant = 2.0

    /// `card` turned by the slant of the text a look at it found, where that is
    /// ``minimumSlant`` or more; nil where it is level enough.
    static func levelled(_ card: Bitmap, as look: LearnedLook) -> Bitmap? {
        guard abs(look.slant) >= minimumSlant else { return nil }
        return card.rotated(degrees: -look.slant, fill: UInt8(card.meanLevel.rounded()))
    }

    /// Where a card's text lies on the whole frame: the detector's lines (those narrower than
    /// three fifths of the frame: a line across it is the ground's pattern), enclosed, with a
    /// margin. Nil when that is most of the frame's width already: nothing to enlarge.
    static func textRegion(of rows: [LearnedRow], in frame: Bitmap) -> Box? {
        let pieces = rows.flatMap(\.pieces).filter { $0.width * 5 < frame.width * 3 && $0.height >= 8 }
        guard let first = pieces.first else { return nil }
        let union = pieces.dropFirst().reduce(first, enclosing)
        let marginX = union.width / 12
        let marginY = union.height / 8
        let region = Box(x: union.x - marginX, y: union.y - marginY, width: union.width + 2 * marginX, height: union.height + 2 * marginY)
        guard region.width * 5 < frame.width * 4 else { return nil }
        return region
    }

    /// A region of the frame cut out and enlarged to the card's width.
    static func zoomed(on region: Box, in frame: Bitmap) -> Bitmap? {
        guard let crop = frame.cropped(x: region.x, y: region.y, width: region.width, height: region.height) else { return nil }
        return crop.scaled(toWidth: cardWidth, height: max(1, crop.height * cardWidth / crop.width))
    }

    /// The learned engine's number, checked by Tesseract's card-digit model on the same row:
    /// the same number read is agreement; another valid number read is a disagreement, and
    /// then neither is reported.
    func checked(_ decided: PANCandidate, on card: Bitmap, row: LearnedRow, with engines: Engines, look: inout LearnedLook) throws -> PANCandidate? {
        let textRow = TextRow(box: row.box, energy: 0)
        guard let base = lineImage(of: card, row: textRow, textHeight: configuration.lineHeight) else { return decided }
        var others: [PANCandidate] = []
        for variant in numberVariants(of: base).prefix(2) {
            let result = try engines.digits.recognize(variant(), mode: .singleLine, whitelist: "0123456789 ")
            look.readings.append((row.box, "tesseract: " + result.text))
            for line in result.lines {
                let candidates = PANDecoder.read(line).candidates.filter { $0.groupingMatches }
                if candidates.contains(where: { $0.pan == decided.pan }) {
                    var agreed = decided
                    agreed.source = .agreed
                    return agreed
                }
                others += candidates
            }
        }
        if !others.isEmpty {
            look.readings.append((row.box, "engines disagree"))
            return nil
        }
        return decided
    }

    /// The detector's lines grouped into rows: a line joins a row when one of the row's lines
    /// has its middle within half a line's height and a like height (a small label at a row's
    /// start does not keep the taller date after it off the row), top to bottom.
    static func rows(of boxes: [Box]) -> [LearnedRow] {
        var rows: [LearnedRow] = []
        for box in boxes.sorted(by: { $0.x < $1.x }) {
            if let index = rows.firstIndex(where: { row in
                row.pieces.contains { piece in
                    let ratio = Double(box.height) / Double(max(1, piece.height))
                    return abs(box.midY - piece.midY) < 0.5 * Double(min(box.height, piece.height)) && ratio > 0.6 && ratio < 1.6
                }
            }) {
                rows[index].box = Self.enclosing(rows[index].box, box)
                rows[index].pieces.append(box)
            } else {
                rows.append(LearnedRow(box: box, pieces: [box]))
            }
        }
        return rows.sorted { $0.box.y < $1.box.y }
    }

    /// The smallest box holding both.
    static func enclosing(_ one: Box, _ other: Box) -> Box {
        let x = min(one.x, other.x)
        let y = min(one.y, other.y)
        return Box(x: x, y: y, width: max(one.maxX, other.maxX) - x, height: max(one.maxY, other.maxY) - y)
    }

    /// A row read a piece at a time, left to right, as one line in the card's coordinates.
    func piecewise(_ row: LearnedRow, on card: Bitmap, with reader: LineRecognizer) throws -> RecognizedLine {
        var words: [RecognizedWord] = []
        for piece in row.pieces.sorted(by: { $0.x < $1.x }) {
            guard let image = learnedLineImage(of: card, box: piece) else { continue }
            let left = max(0, piece.x - Self.learnedMargin(of: piece))
            for var word in try reader.recognize(image).words {
                word.box.x += left
                for index in word.symbols.indices { word.symbols[index].box.x += left }
                words.append(word)
            }
        }
        let x = words.first?.box.x ?? row.box.x
        return RecognizedLine(
            text: words.map(\.text).joined(separator: " "),
            confidence: words.map(\.confidence).min() ?? 0,
            box: Box(x: x, y: row.box.y, width: max(1, (words.last?.box.maxX ?? x + 1) - x), height: row.box.height),
            words: words
        )
    }

    /// The margin left and right of a detector's box when it is cut for the recognizer.
    static func learnedMargin(of box: Box) -> Int { max(4, box.height * 3 / 5) }

    /// A row cut from the card for the recognizer: the box with a margin, as it is. The
    /// margin is wide enough for a digit the detector's box cut through; a date cut out where a
    /// reading put it takes a narrower one, given.
    func learnedLineImage(of card: Bitmap, box: Box, margin: Int? = nil) -> Bitmap? {
        let margin = margin ?? Self.learnedMargin(of: box)
        let vertical = box.height / 10
        return card.cropped(x: box.x - margin, y: box.y - vertical, width: box.width + 2 * margin, height: box.height + 2 * vertical)
    }

    /// A crop of the evidence's card (``learnedLineImage(of:box:margin:)``) read by `reader`,
    /// once: the number's look, the holder's rows, the date's bands and the sample-word search
    /// often read the same row, and a recognizer reads one crop the same way every time. Nil
    /// where the crop lies off the card.
    func line(
        _ box: Box,
        margin: Int? = nil,
        by reader: LineCrop.Reader,
        of learned: LearnedEngine,
        into evidence: inout Evidence
    ) throws -> RecognizedLine? {
        let crop = LineCrop(box: box, margin: margin, reader: reader)
        if let known = evidence.lines[crop] { return known }
        guard let card = evidence.card, let image = learnedLineImage(of: card, box: box, margin: crop.margin) else { return nil }
        let line = try (reader == .digits ? learned.digits : learned.text).recognize(image)
        evidence.lines[crop] = line
        return line
    }
}
