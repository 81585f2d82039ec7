import OCRBridge

/// Decide: which number the readings of a row support, if any, and which date.
extension CardScanner {
    /// Whether nothing is printed close beside the number on its row.
    ///
    /// A card prints its number alone on its row. Characters a word's space or two away (a
    /// receipt's "REF 5147 3885 …", a longer reference number) mean the digits are part of
    /// something else, however valid they look.
    static func standsAlone(_ candidate: PANCandidate, on row: Bitmap) -> Bool {
        let boxes = TemplateReader.characterBoxes(row, threshold: row.otsuThreshold())
        guard !boxes.isEmpty else { return true }
        let height = Double(boxes.map(\.height).sorted()[boxes.count / 2])
        let extent = candidate.extent
        return !boxes.contains { box in
            let gapBefore = extent.lowerBound - Double(box.maxX)
            let gapAfter = Double(box.x) - extent.upperBound
            return (gapBefore > height * 0.3 && gapBefore < height * 2.5) || (gapAfter > height * 0.3 && gapAfter < height * 2.5)
        }
    }

    /// Whether one whole number that fails the check digit was read at least twice alike.
    static func agreedWholeReading(_ failing: [PANDecoder.NumberReading]) -> Bool {
        var seen: Set<[UInt8]> = []
        for reading in failing where !seen.insert(reading.digits).inserted { return true }
        return false
    }

    /// The least confidence of a whole reading offered as unverified: below it the digits
    /// are noise rather than a reading of the card.
    static let minimumUnverifiedConfidence = 0.2

    /// The whole number to offer for correction when none can be reported: the reading (first
    /// choices only, never repaired) that most readings agree on, then the strongest. Valid
    /// numbers too weak to report count as `low_confidence`; the rest fail the check digit. A
    /// reading one digit short of a whole reading of its row (``isShortOfWholeReading(_:in:)``)
    /// is part of the row, and not offered.
    static func unverified(candidates: [PANCandidate], failing: [PANDecoder.NumberReading]) -> UnverifiedNumber? {
        var tally: [[UInt8]: (votes: Int, confidence: Double, first: Int)] = [:]
        let readings = wholeReadings(candidates, failing: failing)
        for (index, reading) in readings.enumerated()
        where reading.confidence >= minimumUnverifiedConfidence && !isShortOfWholeReading(reading.digits, in: readings) {
            let entry = tally[reading.digits] ?? (0, 0, index)
            tally[reading.digits] = (entry.votes + 1, max(entry.confidence, reading.confidence), entry.first)
        }
        // Most votes, then the surest, then the first read: never the check digit, and never the
        // dictionary's order, which changes from one process to the next.
        func rank(_ entry: (key: [UInt8], value: (votes: Int, confidence: Double, first: Int))) -> (Int, Double, Int) {
            (entry.value.votes, entry.value.confidence, -entry.value.first)
        }
        guard let best = tally.max(by: { rank($0) < rank($1) }) else { return nil }
        let reason: UnverifiedNumber.Reason = PAN.luhnValid(best.key) ? .lowConfidence : .checkDigit
        return UnverifiedNumber(digits: best.key, reason: reason, confidence: best.value.confidence, readings: best.value.votes)
    }

    /// The number to report, or nil: two readings that agree, or one number pieced together
    /// from several readings; never when two different numbers are both supported, and never
    /// against a failing reading the recognizer keeps giving as it is.
    ///
    /// `failing` holds the whole numbers read on the same row that fail the check digit. A
    /// number of the same length read whole, nearly as surely, as often as the valid one is a
    /// tie between readings, and the check digit does not break it: nothing is reported; nor
    /// when a whole number one digit longer holds it (``isShortOfWholeReading(_:in:)``).
    func decide(_ candidates: [PANCandidate], failing: [PANDecoder.NumberReading] = []) -> PANCandidate? {
        var failingVotes: [[UInt8]: Int] = [:]
        for reading in failing { failingVotes[reading.digits, default: 0] += 1 }
        let consensus = failingVotes.values.max() ?? 0
        struct Support {
            var best: PANCandidate
            /// Readings that held the number, by reader.
            var plain: [PANCandidate.Source: Int] = [:]
            var votes: Int { plain.values.reduce(0, +) }
            /// Readings by the card-digit model with no doubtful digit.
            var sureModelReadings = 0
        }
        var byNumber: [String: Support] = [:]
        // A reading weaker than an unverified offer is noise, not support for a number.
        for candidate in candidates where candidate.groupingMatches && candidate.confidence >= Self.minimumUnverifiedConfidence {
            let key = candidate.pan.revealed
            var support = byNumber[key] ?? Support(best: candidate)
            if candidate.confidence > support.best.confidence { support.best = candidate }
            support.plain[candidate.source, default: 0] += 1
            if candidate.source == .cardModel && candidate.doubtfulDigits == 0 {
                support.sureModelReadings += 1
            }
            byNumber[key] = support
        }
        let whole = Self.wholeReadings(candidates, failing: failing)
        let accepted = byNumber.values.filter { entry in
            if consensus >= 3 && consensus > 2 * entry.votes { return false }
            if Self.failingAlike(entry.best, in: failing) >= entry.votes { return false }
            if Self.isShortOfWholeReading(entry.best.pan.revealedDigits, in: whole) { return false }
            // Pieces of several readings that make exactly one number, each its place's
            // strongest reading seen alike by two readers, are agreement already.
            if entry.best.source == .merged {
                return entry.best.confidence >= configuration.minimumConfidence
            }
            guard entry.votes >= 2, entry.best.confidence >= configuration.minimumAgreedConfidence else {
                return false
            }
            // Two readers that see the number alike (the model and the templates, say) are
            // independent evidence. One reader agreeing with itself over variants of the same
            // row is weaker: its confusions repeat (a model unsure of a typeface reads every
            // 8 as a 4 in every variant). The check digit catches every single misread digit,
            // so a wrong number that passes needs two misreads repeated alike; a specimen,
            // whose printed number fails the check, needs only one, and then its printed
            // reading keeps coming back as a failing one. So the card-digit model alone
            // needs two renderings that read the number as it is, one of them sure of every
            // digit, and no failing reading given as often as the number itself.
            let readers = entry.plain.keys.filter { $0 != .merged }
            if readers.count >= 2 { return true }
            if readers == [.cardModel] {
                let modelReadings = entry.plain[.cardModel, default: 0]
                return modelReadings >= 2 && entry.sureModelReadings >= 1 && consensus < modelReadings
                    && entry.best.confidence >= configuration.minimumConfidence
            }
            return true
        }
        // Two different numbers with support: refuse rather than guess.
        guard accepted.count == 1 else { return nil }
        return accepted[0].best
    }

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
        failing.filter { readsOtherwise($0, candidate) }.count
    }

    /// Whether a failing whole reading reads `candidate`'s row otherwise: its length, and nearly
    /// as sure (``failingComparableShare``).
    static func readsOtherwise(_ reading: PANDecoder.NumberReading, _ candidate: PANCandidate) -> Bool {
        reading.digits.count == candidate.pan.length && reading.confidence >= candidate.confidence * failingComparableShare
    }

    /// Whether a whole number read on the same row one digit longer holds `number` (at one
    /// place, with at most one digit read otherwise), read with some confidence (not noise,
    /// ``minimumUnverifiedConfidence``) and with its gaps exactly as its brand prints them: the
    /// row is longer than the number. A reader that drops a row's last digit drops it alike in
    /// every crop, and the shorter number passes the check one time in ten; a 15-digit number
    /// (a UnionPay length) read off a 16-digit row (4-4-4-4) is not a card's. With the gaps as
    /// printed, the extra digit is inside a group: the card's edge or a mark read as a digit
    /// beside the number stands apart from it (4-4-4-4-1, never a whole number) or makes its
    /// last group too long (4-4-4-5, on cards-dev's guail_15), and refuses nothing.
    static func isShortOfWholeReading(_ number: [UInt8], in readings: [PANDecoder.NumberReading]) -> Bool {
        readings.contains { reading in
            reading.digits.count == number.count + 1 && reading.gapsAsPrinted
                && reading.confidence >= minimumUnverifiedConfidence && PANDecoder.holds(reading.digits, number)
        }
    }

    /// The whole numbers read, valid (in their brand's grouping) and failing.
    static func wholeReadings(_ candidates: [PANCandidate], failing: [PANDecoder.NumberReading]) -> [PANDecoder.NumberReading] {
        candidates.filter(\.groupingMatches).map {
            PANDecoder.NumberReading(digits: $0.pan.revealedDigits, confidence: $0.confidence, gapsAsPrinted: $0.gapsAsPrinted)
        } + failing
    }

    /// The number a row's learned readings support, or nil. Both networks reading the number
    /// as it is is agreement; one network alone must be sure of every digit. A number of the same length,
    /// read whole and nearly as surely, that fails the check as often as the valid one (a
    /// specimen's printed number) refuses it; another number read as it is with some
    /// confidence refuses both, and a whole number one digit longer that holds it
    /// (``isShortOfWholeReading(_:in:)``) refuses it.
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
        let whole = Self.wholeReadings(candidates, failing: failing)
        let accepted = seen.filter { entry in
            guard entry.plain > Self.failingAlike(entry.best, in: failing) else { return false }
            if Self.isShortOfWholeReading(entry.best.pan.revealedDigits, in: whole) { return false }
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

    /// The learned engine's number, checked by Tesseract's card-digit model on the same row:
    /// the same number read is agreement; another valid number read is a disagreement, and
    /// then neither is reported.
    func checked(_ decided: PANCandidate, on card: Bitmap, row: LearnedRow, with engines: Engines, look: inout LearnedLook) throws -> PANCandidate? {
        let tesseract = try tesseractNumbers(on: card, row: row, looking: decided.pan, with: engines, look: &look)
        if tesseract.read { return decided.from(.agreed) }
        if !tesseract.others.isEmpty {
            look.readings.append((row.box, "engines disagree"))
            return nil
        }
        return decided
    }

    /// What Tesseract's card-digit model reads on a learned row (its first two variants, until
    /// one reads `number`): whether it read `number` in its brand's grouping, the other valid
    /// numbers it read, and the whole numbers it read that fail the check.
    func tesseractNumbers(
        on card: Bitmap,
        row: LearnedRow,
        looking number: PAN,
        with engines: Engines,
        look: inout LearnedLook
    ) throws -> (read: Bool, others: [PANCandidate], failing: [PANDecoder.NumberReading]) {
        let textRow = TextRow(box: row.box, energy: 0)
        guard let base = lineImage(of: card, row: textRow, textHeight: configuration.lineHeight) else { return (false, [], []) }
        var others: [PANCandidate] = []
        var failing: [PANDecoder.NumberReading] = []
        for variant in numberVariants(of: base).prefix(2) {
            let result = try engines.cardModel.recognition(in: variant())
            look.readings.append((row.box, "tesseract: " + result.text))
            for line in result.lines {
                let reading = PANDecoder.read(line)
                let candidates = reading.candidates.filter(\.groupingMatches)
                if candidates.contains(where: { $0.pan == number }) { return (true, others, failing) }
                others += candidates
                failing += reading.failing
            }
        }
        return (false, others, failing)
    }

    /// A look's undecided number, the networks that read it, and those that read its row otherwise.
    typealias Contest = (number: PANCandidate, readers: Set<PANCandidate.Source>, against: Set<PANCandidate.Source>)

    /// A number a look left undecided that a third reader may settle: the only number its rows
    /// read as it is above noise (``minimumUnverifiedConfidence``), at
    /// ``Configuration/minimumAgreedConfidence`` at best, not part of a longer whole reading
    /// (``isShortOfWholeReading(_:in:)``); with the networks that read it, and those that read
    /// a whole number of its length failing the check nearly as surely (``failingComparableShare``).
    /// It was refused for want of a second reader (one network, unsure), or because the other
    /// network read the row otherwise: each network keeps its confusions in every crop of a row,
    /// so its readings count as one reader's, however many crops gave them.
    func contested(in look: LearnedLook) -> Contest? {
        guard look.decided == nil else { return nil }
        let valid = look.candidates.filter { $0.groupingMatches && $0.confidence >= Self.minimumUnverifiedConfidence }
        guard let best = valid.max(by: { $0.confidence < $1.confidence }), Set(valid.map(\.pan)).count == 1,
            best.confidence >= configuration.minimumAgreedConfidence,
            !Self.isShortOfWholeReading(best.pan.revealedDigits, in: Self.wholeReadings(look.candidates, failing: look.failing))
        else { return nil }
        let against = look.failingByReader.filter { _, readings in readings.contains { Self.readsOtherwise($0, best) } }
        return (best, Set(valid.map(\.source)), Set(against.keys))
    }

    /// A contested number (``contested(in:)``) read again by Tesseract's card-digit model on its
    /// row, and reported (as agreed) when more readers read it as it is than read the row
    /// otherwise, each reader counted once: Tesseract and a network reading it are two; a
    /// network that read both it and a failing number of its length counts on neither side.
    /// Tesseract reading another valid number, or a failing one of its length, refuses it. The
    /// check digit decides nothing here: readers outnumbering readers do, and the check only
    /// checks the number they read.
    func settled(
        _ contested: Contest,
        on card: Bitmap,
        row: LearnedRow,
        with engines: Engines,
        look: inout LearnedLook
    ) throws -> PANCandidate? {
        let tesseract = try tesseractNumbers(on: card, row: row, looking: contested.number.pan, with: engines, look: &look)
        let disagrees = !tesseract.others.isEmpty || tesseract.failing.contains { $0.digits.count == contested.number.pan.length }
        guard Self.outnumbers(readers: contested.readers, against: contested.against, tesseractRead: tesseract.read, tesseractDisagrees: disagrees)
        else { return nil }
        look.readings.append((row.box, "settled by Tesseract's reading"))
        return contested.number.from(.agreed)
    }

    /// Whether the readers of a contested number, Tesseract's card-digit model among them,
    /// outnumber the networks that read its row otherwise (``settled(_:on:row:with:look:)``).
    static func outnumbers(
        readers: Set<PANCandidate.Source>,
        against: Set<PANCandidate.Source>,
        tesseractRead: Bool,
        tesseractDisagrees: Bool
    ) -> Bool {
        guard tesseractRead, !tesseractDisagrees else { return false }
        let both = readers.intersection(against)
        let pro = readers.subtracting(both).count + 1
        return pro >= 2 && pro > against.subtracting(both).count
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
}
