import OCRBridge

/// Tesseract's route through a picture (``read(_:with:only:datesWithoutNumber:search:)``): the
/// classic locator's views (``hypotheses(for:wholeAsItLies:)``), a glance at each, then every way
/// of reading on the two that showed most digits; its number rows read by the card-digit model,
/// the templates and English (``readNumber(on:effort:with:into:)``), decided by ``decide(_:failing:)``;
/// the date in the strip under the number. With the learned engine beside it, it is the last
/// fallback (``tesseractFallback(_:after:with:search:)``), and it weighs in on the networks' date
/// (``withWeighedExpiry(_:learned:engines:search:)``).
extension CardScanner {
    /// The date of a number the networks decided: the networks' reading of the rows below the
    /// number; where they do not settle it, Tesseract's reading of the strip under the number
    /// weighed beside theirs (``CardScanner/agreedExpiry(tesseract:networks:)``). Its readings
    /// cost a quarter second a card, and on the networks' settled dates it vetoed more right
    /// dates than wrong ones.
    func withWeighedExpiry(_ evidence: Evidence, learned: LearnedEngine, engines: Engines, search: Search) throws -> Evidence {
        var evidence = evidence
        guard let card = evidence.card else { return evidence }
        let expiryStart = ContinuousClock.now
        defer { StageTimings.add(phase: ScanPhase.expiry.rawValue, since: expiryStart) }
        let networks = try learnedExpiry(learned: learned, into: &evidence, search: search)
        var tesseract = ExpiryBallot()
        // Tesseract's strip is a second way to the date: not started once the time budget is
        // spent.
        if let box = evidence.numberBox, !networks.isSettled(votes: 2), !search.isOver {
            // The detector's box stands a little beyond the digits.
            let digitHeight = box.height * 3 / 4
            tesseract = try readExpiry(
                on: card,
                top: box.maxY,
                height: digitHeight * 2,
                numberHeight: digitHeight,
                with: engines,
                into: &evidence
            )
        }
        evidence.expiry = Self.agreedExpiry(tesseract: tesseract, networks: networks)
        return evidence
    }

    /// Tesseract's route after the networks decided nothing: on their likeliest upright card
    /// alone, not on every way the picture may lie again (on the three sets it found one number
    /// the networks missed, in 54 pictures, on that card, at a quarter less time). Not taken
    /// where both networks read a number that plainly fails the check (Tesseract's route could
    /// pass it only by misreading a digit), nor once the time budget is spent. Where it reads no
    /// number it reads no date either: the networks' date (two votes) stands. Tesseract's strip
    /// under a number it did not find gave only wrong dates there (a card's back read as 11/2011,
    /// eight of eight).
    func tesseractFallback(_ bitmap: Bitmap, after learned: Evidence, with engines: Engines, search: Search) throws -> Evidence {
        if learned.numberFailsPlainly || search.isOver { return learned }
        var fallback = try StageTimings.measure(phase: ScanPhase.tesseractRoute.rawValue) {
            try read(bitmap, with: engines, only: learned.uprightCard, datesWithoutNumber: false, search: search)
        }
        fallback.candidates += learned.candidates
        fallback.failing += learned.failing
        fallback.sampleRows.formUnion(learned.sampleRows)
        fallback.earlierRows = learned.rows.map { ($0.box, "learned route: " + $0.text) }
        if fallback.expiry == nil { fallback.expiry = learned.expiry }
        return fallback
    }

    /// Tesseract's route through a picture: every way it may lie (``hypotheses(for:wholeAsItLies:)``),
    /// or only the one given (a card straightened already).
    ///
    /// - Parameter datesWithoutNumber: whether the strip under the likeliest row is read for a
    ///   date (and the rows under it for a name) where no number was decided; false where
    ///   another route's date stands in its place.
    /// - Parameter search: the time budget: past it no further way is read.
    func read(
        _ bitmap: Bitmap,
        with engines: Engines,
        only hypothesis: Hypothesis? = nil,
        datesWithoutNumber: Bool = true,
        search: Search
    ) throws -> Evidence {
        let grey = bitmap.grey()
        var evidence = Evidence()
        var chosen: (evidence: Evidence, row: TextRow?)?
        var glanced: [(hypothesis: Hypothesis, card: Bitmap, digits: Int)] = []
        // A first look at each way the card may lie, until one gives a number.
        let all = hypothesis.map { [$0] } ?? hypotheses(for: grey)
        // The two turns of a card held in portrait share a place: each is the other's partner.
        let places = Dictionary(grouping: all, by: \.place)
        for (index, hypothesis) in all.enumerated() {
            // The first way is always read; the next only while the time budget lasts.
            if index > 0, search.isOver { break }
            guard let card = hypothesis.makeCard() else { continue }
            var trial = Evidence(outline: hypothesis.outline, card: card)
            var row = try readNumber(on: card, effort: .glance, with: engines, into: &trial)
            // A card held in portrait may be turned either way: a number read one way up counts
            // only when that way reads more surely than the other (a 6 upside down is a 9).
            if row != nil, let partner = places[hypothesis.place]?.first(where: { $0.quarterTurns != hypothesis.quarterTurns }),
                let other = partner.makeCard()
            {
                var look = Evidence(outline: partner.outline, card: other)
                _ = try readNumber(on: other, effort: .glance, with: engines, into: &look)
                if trial.modelConfidence <= look.modelConfidence + Self.turnMargin {
                    row = nil
                    trial.decided = nil
                }
            }
            evidence.candidates += trial.candidates
            evidence.failing += trial.failing
            evidence.sampleRows.formUnion(trial.sampleRows)
            if row != nil {
                chosen = (trial, row)
                evidence.decided = trial.decided
                break
            }
            glanced.append((hypothesis, card, trial.digitsSeen))
            if trial.digitsSeen > (chosen?.evidence.digitsSeen ?? -1) { chosen = (trial, nil) }
            // A whole number read twice the same way: this is how the card lies, though the
            // number does not pass. Only this way is worth reading harder.
            if Self.agreedWholeReading(trial.failing) {
                glanced = [glanced.removeLast()]
                break
            }
        }
        // Then every way of reading on the two that showed most digits.
        if chosen?.row == nil {
            let promising = glanced.filter { $0.digits >= 8 }.sorted { $0.digits > $1.digits }.prefix(2)
            for (hypothesis, card, _) in promising {
                if search.isOver { break }
                var trial = Evidence(outline: hypothesis.outline, card: card)
                let row = try readNumber(on: card, effort: .full, with: engines, into: &trial)
                evidence.candidates += trial.candidates
                evidence.failing += trial.failing
                evidence.sampleRows.formUnion(trial.sampleRows)
                if row != nil || trial.digitsSeen > (chosen?.evidence.digitsSeen ?? -1) { chosen = (trial, row) }
                if row != nil {
                    evidence.decided = trial.decided
                    break
                }
            }
        }
        let card = chosen?.evidence.card ?? Self.levelled(grey, quarterTurns: 0) ?? grey
        evidence.outline = chosen?.evidence.outline
        evidence.card = card
        evidence.rows = chosen?.evidence.rows ?? []
        if evidence.decided == nil, !datesWithoutNumber { return evidence }
        let numberRow = chosen?.row ?? chosen?.evidence.wholeRow?.row

        // The expiry sits right under the number (with its label), the name under that.
        let numberHeight = numberRow?.box.height ?? card.height / 14
        let stripTop = numberRow.map { $0.box.maxY + numberHeight / 8 } ?? card.height * 55 / 100
        let stripHeight = numberHeight * 2
        var ballot = try readExpiry(
            on: card,
            top: stripTop,
            height: stripHeight,
            numberHeight: numberHeight,
            effort: numberRow == nil ? .glance : .full,
            with: engines,
            into: &evidence
        )
        let nameTop = stripTop + stripHeight
        for row in LineFinder.rows(in: card, top: Double(nameTop) / Double(card.height), bottom: 0.97).prefix(2) {
            guard let image = lineImage(of: card, row: row, textHeight: 32) else { continue }
            let result = try engines.englishWords.recognition(in: image)
            evidence.rows.append((row.box, result.text))
            // A date elsewhere counts only when the strip under the number gave none.
            if ballot.leader == nil { ballot.add(result.text) }
            if evidence.holder == nil, let name = Self.holderName(in: result) { evidence.holder = name }
        }
        evidence.expiry = ballot.leader
        return evidence
    }
}
