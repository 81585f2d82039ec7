import OCRBridge

/// (placeholder)
extension CardScanner {
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
