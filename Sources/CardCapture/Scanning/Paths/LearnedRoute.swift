import OCRBridge

/// The learned engine's two paths through a picture, each through the same stages: locate a
/// view of the card (``CardScanner/Hypothesis``), read its number rows
/// (``CardScanner/lookLearned(at:learned:edgesKnown:detectorSide:search:leastRows:)``), decide
/// (``CardScanner/decideLearned(_:failing:)``, Tesseract's check where it reads beside).
///
/// - **The first pass** (``firstPass()``): one look at the likeliest view, the one the
///   number-row detector points to. Bounded whatever the picture; a camera's frames and
///   ``CardScanner/Configuration/firstPassOnly`` stop there.
/// - **The fallback** (``fallback()``), while nothing is decided, no look has settled that the
///   number fails the check, and the time budget lasts: the frame turned level by the text's
///   slant, the other views, the likeliest card with the detector at a larger scale, the frame's
///   text enlarged, the frame a quarter turn either way and the likeliest card turned half round.
///
/// Then ``finish()`` takes the best look's card for the date, the holder's name and the
/// evidence the verdict reads.
extension CardScanner {
    /// Reads `bitmap` with the learned engine, Tesseract checking its number when `engines` is
    /// given: the first pass, then the fallback unless the search is over.
    func readLearned(
        _ bitmap: Bitmap,
        learned: LearnedEngine,
        checkingWith engines: Engines?,
        search: Search
    ) throws -> Evidence {
        let grey = bitmap.grey()
        let numberStart = ContinuousClock.now
        var route = try LearnedRoute(scanner: self, grey: grey, learned: learned, engines: engines, search: search)
        try route.firstPass()
        try route.fallback()
        StageTimings.add(phase: ScanPhase.number.rawValue, since: numberStart)
        return try route.finish()
    }

    /// One picture's way through the learned engine: the views, the looks taken at them, and
    /// the best so far.
    struct LearnedRoute {
        let scanner: CardScanner
        let grey: Bitmap
        let learned: LearnedEngine
        /// Tesseract's engines, checking a number the networks decide; nil with the learned
        /// engine alone.
        let engines: Engines?
        let search: Search
        /// The ways the card may lie, the number row's view first (``CardScanner/ordered(_:in:by:)``).
        let views: [Hypothesis]
        /// The outlines that cut the number row: no look at their cards settles that the number
        /// fails the check (``RowPlace/cuts``).
        let cutting: [CardLocator.Outline]

        var evidence = Evidence()
        /// The look that decided a number, else the one that read most whole numbers.
        var best: (look: LearnedLook, card: Bitmap, outline: CardLocator.Outline?)?
        /// The best look that is not a half turn: the one Tesseract's route may read after.
        var upright: (seen: Int, hypothesis: Hypothesis)?
        /// The next view to look at.
        var nextView = 0
        /// The first pass's view, card and look, which the fallback follows up.
        var first: (view: Hypothesis, card: Bitmap, look: LearnedLook)?
        /// Whether no look has been taken yet: the first reads ``CardScanner/firstLookRows`` rows
        /// whatever the time budget.
        var firstLook = true
        /// Where the whole frame showed text, to enlarge (once).
        var zoomOn: (region: Box, frame: Bitmap)?

        init(scanner: CardScanner, grey: Bitmap, learned: LearnedEngine, engines: Engines?, search: Search) throws {
            self.scanner = scanner
            self.grey = grey
            self.learned = learned
            self.engines = engines
            self.search = search
            (views, cutting) = try scanner.ordered(scanner.hypotheses(for: grey, wholeAsItLies: true), in: grey, by: learned.numberRows)
        }

        /// Nothing decided yet, no look has settled that the number fails the check, and the
        /// time budget lasts.
        var searching: Bool { best?.look.decided == nil && !evidence.numberFailsPlainly && !search.isOver }

        /// The first pass: one look at the first view that makes a card.
        mutating func firstPass() throws {
            while nextView < views.count {
                let view = views[nextView]
                nextView += 1
                guard let card = view.makeCard() else { continue }
                let seen = try look(at: card, edgesKnown: view.outline != nil)
                consider(seen, card: card, outline: view.outline)
                first = (view, card, seen)
                return
            }
        }

        /// The fallback: every other way of seeing the picture, in order, until one decides.
        mutating func fallback() throws {
            if let first, searching {
                try followUp(first.view, card: first.card, seen: first.look)
            }
            while nextView < views.count, searching {
                let view = views[nextView]
                nextView += 1
                guard let card = view.makeCard() else { continue }
                let seen = try look(at: card, edgesKnown: view.outline != nil)
                consider(seen, card: card, outline: view.outline)
                if searching { try followUp(view, card: card, seen: seen) }
            }
            // The likeliest card again with the detector at a larger scale: its lines on an
            // embossed number split and end differently, and a group it lost at one scale it can
            // find at another.
            if let seen = best, searching {
                consider(
                    try look(at: seen.card, edgesKnown: seen.outline != nil, detectorSide: CardScanner.secondDetectorSide),
                    card: seen.card,
                    outline: seen.outline
                )
            }
            // A card small in the frame, its outline not found, where the whole frame showed digits:
            // the part of the frame holding text, enlarged to the card's width, read again.
            if searching, let zoomOn, let zoomed = CardScanner.zoomed(on: zoomOn.region, in: zoomOn.frame) {
                let seen = try look(at: zoomed, edgesKnown: false)
                consider(seen, card: zoomed, outline: nil)
                // Enlarged, a card in perspective shows how far its text slants (on the whole
                // frame the ground's lines outvote it): turned level and read again.
                if searching, let turned = CardScanner.levelled(zoomed, as: seen) {
                    consider(try look(at: turned, edgesKnown: false), card: turned, outline: nil)
                }
            }
            if searching { try turns() }
        }

        /// After a look at the whole frame (the first such look only): the frame's text still
        /// slanted (a card in perspective, or turned where the frame gave the levelling too little
        /// to go by), the frame turned by the detector's lines; and where it showed digits, the
        /// region of its text kept to enlarge.
        mutating func followUp(_ view: Hypothesis, card: Bitmap, seen: LearnedLook) throws {
            guard view.outline == nil, zoomOn == nil else { return }
            var frame = (look: seen, card: card)
            if let turned = CardScanner.levelled(card, as: seen) {
                frame = (try look(at: turned, edgesKnown: false), turned)
                consider(frame.look, card: frame.card, outline: nil)
                guard searching else { return }
            }
            if frame.look.mostDigits >= 6, let region = CardScanner.textRegion(of: frame.look.rows, in: frame.card) {
                zoomOn = (region, frame.card)
            }
        }

        /// A card lying across the frame, its number running up or down: the whole frame a
        /// quarter turn either way; a card upside down: the likeliest card turned half round.
        /// Upside-down digits can read as digits (a 6 as a 9, 4000…9995 as 5666…0007), so a
        /// number counts only when the turns give no other number, and the half turn's
        /// only when both networks read it as it is (or Tesseract agreed).
        mutating func turns() throws {
            var turns: [(card: Bitmap, outline: CardLocator.Outline?, halfTurn: Bool)] = [1, 3].compactMap { turns in
                CardScanner.levelled(grey, quarterTurns: turns, deskewRange: CardScanner.wideDeskew).map { ($0, nil, false) }
            }
            if let best { turns.append((best.card.turned(quarterTurns: 2), best.outline, true)) }
            var looks = try turns.map { try look(at: $0.card, edgesKnown: $0.outline != nil, settling: !$0.halfTurn) }
            for index in looks.indices where turns[index].halfTurn {
                if let decided = looks[index].decided, !CardScanner.readByBoth(decided, in: looks[index]) { looks[index].decided = nil }
            }
            // Two turns that read the same number agree (the first is kept, its card read for
            // the date); two numbers refuse both.
            let decidedNumbers = Set(looks.compactMap { $0.decided?.pan })
            let firstDecided = looks.firstIndex { $0.decided != nil }
            for (index, (turn, var seen)) in zip(turns, looks).enumerated() {
                if decidedNumbers.count > 1 || index != firstDecided { seen.decided = nil }
                consider(seen, card: turn.card, outline: turn.outline, halfTurn: turn.halfTurn)
            }
        }

        /// One look at a card: its number rows read and decided, the number checked by
        /// Tesseract where it reads beside, or a number the networks left contested settled by
        /// it (``CardScanner/settled(_:on:row:with:look:)``), except with `settling` false: on a
        /// card turned half round, where the readers' errors are alike (each reads an
        /// upside-down 6 as a 9). Past the time budget a look reads no further row, but the
        /// first reads ``CardScanner/firstLookRows`` rows whatever the budget.
        mutating func look(at card: Bitmap, edgesKnown: Bool = true, detectorSide: Int? = nil, settling: Bool = true) throws -> LearnedLook {
            let leastRows = firstLook ? CardScanner.firstLookRows : 1
            firstLook = false
            var look = try scanner.lookLearned(
                at: card,
                learned: learned,
                edgesKnown: edgesKnown,
                detectorSide: detectorSide,
                search: search,
                leastRows: leastRows
            )
            if let engines, let row = look.numberRow {
                if let decided = look.decided {
                    look.decided = try scanner.checked(decided, on: card, row: row, with: engines, look: &look)
                } else if settling, let contested = scanner.contested(in: look) {
                    look.decided = try scanner.settled(contested, on: card, row: row, with: engines, look: &look)
                }
            }
            return look
        }

        /// A look taken: its numbers into the evidence, and the best look kept.
        mutating func consider(_ look: LearnedLook, card: Bitmap, outline: CardLocator.Outline?, halfTurn: Bool = false) {
            evidence.candidates += look.candidates
            evidence.failing += look.failing
            evidence.sampleRows.formUnion(look.sampleRows)
            let seen = look.candidates.count + look.failing.count
            if look.decided != nil || best == nil || seen > (best!.look.candidates.count + best!.look.failing.count) {
                best = (look, card, outline)
            }
            if !halfTurn, upright == nil || seen > upright!.seen {
                upright = (seen, Hypothesis(outline: outline, quarterTurns: 0) { card })
            }
            if look.failsPlainly, !(outline.map(cutting.contains) ?? false) { evidence.numberFailsPlainly = true }
        }

        /// The evidence of the best look: its card, rows and number; the date where Tesseract
        /// does not weigh it (``CardScanner/withWeighedExpiry(_:learned:engines:search:)``); the
        /// holder's name beside a number reported or one plainly failing the check.
        mutating func finish() throws -> Evidence {
            guard let best else { return evidence }
            evidence.uprightCard = upright?.hypothesis
            evidence.decided = best.look.decided
            evidence.decidedByBoth = best.look.decided.map { CardScanner.readByBoth($0, in: best.look) } ?? false
            evidence.card = best.card
            evidence.outline = best.outline
            evidence.rows = best.look.readings
            evidence.numberBox = best.look.numberRow?.box
            evidence.learnedRows = best.look.rows
            evidence.lines = best.look.lines
            // With Tesseract beside it, the date of a number decided is weighed by the caller.
            if engines == nil || evidence.decided == nil {
                let ballot = try StageTimings.measure(phase: ScanPhase.expiry.rawValue) {
                    try scanner.learnedExpiry(learned: learned, into: &evidence, search: search)
                }
                evidence.expiry = ballot.isSettled(votes: 2) ? ballot.leader : nil
            }
            // The holder's name beside a number reported, or one both networks read plainly failing
            // the check (a specimen, a misprint): offered with it to be corrected by hand.
            if evidence.decided != nil || evidence.numberFailsPlainly {
                evidence.holder = try StageTimings.measure(phase: ScanPhase.holder.rawValue) {
                    try scanner.learnedHolder(learned: learned, into: &evidence)
                }
            }
            return evidence
        }
    }

    /// How many rows of its number band the first look at a picture reads, widest first,
    /// however little time budget is left: the number is not always the widest row of the
    /// band (a name and VALID THRU date beside it can be wider), and
    /// a budget spent should still read a card that lies plainly in the frame.
    static let firstLookRows = 3

    /// The longest side (pixels) the card is scaled to for the detector's second look, where
    /// the first (``TextDetector/Configuration/maximumSide``, 640) decided nothing. 800 read one
    /// more number in cards-dev and in the second generator, and more dates; 512 lost dates.
    static let secondDetectorSide = 800
}
