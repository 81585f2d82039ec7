public import OCRBridge

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads a card's number, expiry and holder's name off an image.
///
/// The pipeline: find the card's outline (``CardLocator``) and straighten it to a canonical
/// 856 × 540 (10 px per mm of an ID-1 card), or, in a scan that fills the frame, level the
/// whole image (``Deskew``); find rows of text (``LineFinder``); read the strongest rows in
/// the number band with Tesseract in single-line mode at a good digit height, in a few
/// variants, until the evidence decides; decode the number under the constraints a real
/// number satisfies (``PANDecoder``); read the rows below for the expiry (``ExpiryFinder``)
/// and the name. A number is reported only when the evidence clears
/// ``Configuration/minimumConfidence``; otherwise the result is `not_found`, never a guess.
///
/// ```swift
/// let scanner = try CardScanner()
/// let result = try scanner.scan(contentsOf: "Fixtures/cards/t000-flat-visa.png")
/// print(result.pan as Any)      // 411111******1111, masked
/// ```
public struct CardScanner: Sendable {
    public struct Configuration: Sendable {
        /// Limits on the images the scanner accepts.
        public var limits: ImageLimits
        /// A JPEG twice this or more on its long side is decoded at 1/2, 1/4 or 1/8 of its
        /// size, keeping at least this (``ImageDecoder/leastLongSide``): a 12-megapixel phone
        /// photo (4032 × 3024) at 2016 × 1512. A card filling half such a picture's width is
        /// then still wider than the straightened card the scanner reads (``CardScanner/cardWidth``,
        /// 856 px), and decoding takes a quarter of the time. Nil decodes every picture whole.
        public var decodedLongSide: Int?
        /// Least confidence (0 to 1) for reporting a number read once.
        public var minimumConfidence: Double
        /// Least confidence for a number that two or more readings agree on.
        public var minimumAgreedConfidence: Double
        /// The text height, in pixels, number rows are scaled to for single-line reading.
        public var lineHeight: Int
        /// Which engines read the number.
        public var engine: Engine
        /// How long the search for the number may go on, from the scan's start (decoding
        /// included), or nil for no limit. Once it is spent no further way of seeing the
        /// picture is tried (another outline, a turn, Tesseract's own route, its date strip), a
        /// look under way reads no further row, and the date is looked for in the two bands
        /// under the number only: the answer is what was decided so far, often `not_found`. The
        /// card locator and the first look's three widest rows run whatever the budget, so a
        /// scan outlasts it (by a second on a picture full of edges). For a live camera, or a
        /// checkout that would rather ask again than wait.
        public var timeBudget: Duration?
        /// Whether a scan ends after its first pass: one look at the likeliest card (its outline
        /// straightened, else the whole frame levelled), the detector at its usual scale, the
        /// three widest rows of the number band read by both networks (and checked by
        /// Tesseract with ``Engine/both``), the date in the two bands under the number, the
        /// holder's name and the sample-card checks. No other outline, turn, zoom, scale or
        /// row, and no Tesseract route: what it does not decide is `not_found` or `unverified`.
        /// It is the start of every scan, so a number it reports is the one the whole scan
        /// reports (the date can differ: the whole scan looks further for it). Bounded in time
        /// whatever the picture, it suits a live camera, whose next frame comes anyway.
        public var firstPassOnly: Bool
        /// Whether a processor's published test number (``TestCards``) read off a picture is a
        /// card: true for the sandbox, whose outcomes those numbers choose; false where the
        /// scans serve live payments, and a picture showing one is a sample card.
        public var acceptsTestNumbers: Bool

        public init(
            limits: ImageLimits = .init(),
            decodedLongSide: Int? = 1600,
            minimumConfidence: Double = 0.70,
            minimumAgreedConfidence: Double = 0.55,
            lineHeight: Int = 36,
            engine: Engine = .both,
            timeBudget: Duration? = nil,
            firstPassOnly: Bool = false,
            acceptsTestNumbers: Bool = true
        ) {
            self.limits = limits
            self.decodedLongSide = decodedLongSide
            self.minimumConfidence = minimumConfidence
            self.minimumAgreedConfidence = minimumAgreedConfidence
            self.lineHeight = lineHeight
            self.engine = engine
            self.timeBudget = timeBudget
            self.firstPassOnly = firstPassOnly
            self.acceptsTestNumbers = acceptsTestNumbers
        }
    }

    /// The engines a scan reads the number with.
    public enum Engine: String, Sendable, CaseIterable {
        /// The learned detector and recognizer (OpenVINO) alone.
        case learned
        /// Tesseract alone (the card-digit model, templates and English); needs no model files.
        case tesseract
        /// The learned engine, its number checked by Tesseract on the same row, and Tesseract's
        /// own route where the learned engine reads no number.
        case both
    }

    public private(set) var configuration: Configuration
    /// Engines with Debian's `eng`: labels, names, and a second opinion on digits.
    private let pool: TesseractPool
    /// Engines with the project's card-digit model (``CardModel``): numbers and dates.
    private let digitPool: TesseractPool
    /// The learned detector and recognizer, unless the configuration reads with Tesseract alone.
    let learned: LearnedEngine?

    /// Creates a scanner and its first Tesseract engines.
    ///
    /// - Parameter workers: how many scans will run at once (the learned engine's
    ///   ``OpenVINOModel/Parallelism/forWorkers(_:cores:)``): by default one a core, as a
    ///   server's do.
    /// - Throws: ``OCRError`` when Tesseract, its English data or the card-digit model is
    ///   missing, or `learned_engine_missing` when the configuration's engine needs the learned
    ///   models and they are not installed.
    public init(configuration: Configuration = .init(), pool: TesseractPool? = nil, workers: Int = OpenVINOModel.Parallelism.cores) throws(OCRError) {
        self.configuration = configuration
        if configuration.engine == .tesseract {
            self.learned = nil
        } else {
            self.learned = try LearnedEngine.shared(parallelism: .forWorkers(workers))
        }
        if let pool {
            self.pool = pool
        } else {
            self.pool = try TesseractPool()
        }
        guard CardModel.folder != nil else {
            throw OCRError(
                .trainedDataMissing,
                "the card-digit model card.traineddata is not in this build's resources; rebuild the package, or set \(CardModel.folderVariable) to a folder holding it"
            )
        }
        self.digitPool = try TesseractPool(configuration: CardModel.configuration)
    }

    /// This scanner searching otherwise (``Configuration/firstPassOnly``,
    /// ``Configuration/timeBudget``), sharing its engines: a server's camera frames and its
    /// still pictures read with one set of models and Tesseract engines.
    public func searching(firstPassOnly: Bool, timeBudget: Duration?) -> CardScanner {
        var scanner = self
        scanner.configuration.firstPassOnly = firstPassOnly
        scanner.configuration.timeBudget = timeBudget
        return scanner
    }

    /// The two engines one scan reads with.
    struct Engines {
        /// The card-digit model.
        let digits: TesseractEngine
        /// Debian's English model.
        let english: TesseractEngine
    }

    /// When a scan stops trying new ways of seeing the picture (``Configuration/timeBudget``,
    /// ``Configuration/firstPassOnly``).
    struct Search {
        let deadline: ContinuousClock.Instant?
        /// The first pass alone: over from the start, whatever the clock says.
        var firstPassOnly = false
        /// Set when whoever asked for the scan no longer waits for it.
        var cancellation: ScanCancellation? = nil

        /// Whether the search is over (the budget spent, the first pass all there is, or the
        /// scan called off): no further look is started.
        var isOver: Bool {
            if firstPassOnly || cancellation?.isCancelled == true { return true }
            guard let deadline else { return false }
            return ContinuousClock.now >= deadline
        }
    }

    /// Decodes and scans a PNG or JPEG file (told apart by content; a JPEG's EXIF
    /// orientation applied).
    ///
    /// - Throws: ``OCRError`` `image_unreadable` or `image_too_large` for a bad file.
    public func scan(contentsOf path: String) throws -> ScanResult {
        try timed { try decoder().decode(contentsOf: path) }.result
    }

    /// Decodes and scans PNG or JPEG bytes, within `limits` when given (else the configuration's).
    ///
    /// - Parameter cancellation: once cancelled, the scan starts no further look (as when its
    ///   ``Configuration/timeBudget`` is spent) and throws ``OCRError`` `cancelled` instead of
    ///   answering: a server's client that went away frees the scanner within a look.
    public func scan(imageData bytes: [UInt8], limits: ImageLimits? = nil, cancellation: ScanCancellation? = nil) throws -> ScanResult {
        try cancellation?.check()
        let result = try timed(cancellation: cancellation) { try decoder(limits: limits).decode(bytes) }.result
        try cancellation?.check()
        return result
    }

    /// Scans a decoded image.
    public func scan(_ bitmap: Bitmap) throws -> ScanResult {
        try timed { bitmap }.result
    }

    /// The decoder of the scanner's pictures: within `limits` (else the configuration's), a large
    /// JPEG decoded at the size the scanner needs (``Configuration/decodedLongSide``).
    private func decoder(limits: ImageLimits? = nil) -> ImageDecoder {
        ImageDecoder(limits: limits ?? configuration.limits, leastLongSide: configuration.decodedLongSide)
    }

    /// Decodes a picture with `decode` and scans it, the decoding in the scan's time, with the
    /// scan's own ``StageTimings`` given to its result (``ScanResult/timings``, ``ScanResult/phases``).
    private func timed(
        cancellation: ScanCancellation? = nil,
        _ decode: () throws -> Bitmap
    ) throws -> (result: ScanResult, bitmap: Bitmap, evidence: Evidence) {
        let timings = StageTimings()
        var (result, bitmap, evidence) = try StageTimings.$current.withValue(timings) {
            let start = ContinuousClock.now
            let bitmap = try decode()
            try cancellation?.check()
            let (result, evidence) = try scanWithEvidence(bitmap, startedAt: start, cancellation: cancellation)
            return (result, bitmap, evidence)
        }
        result.timings = timings.entries
        result.phases = Dictionary(
            uniqueKeysWithValues: timings.phases.compactMap { name, entry in ScanPhase(rawValue: name).map { ($0, entry.milliseconds) } }
        )
        return (result, bitmap, evidence)
    }

    /// Scans a PNG or JPEG file and also draws what the scanner saw: the image with the card's
    /// outline, and the straightened card with every row it read and the digits it read
    /// there, and those readings as lines of text (`x,y,width,height: text`, in the order they
    /// were made). For `capture-cli scan --debug-dir`; both show the card's digits in full.
    public func scanWithDebugImage(contentsOf path: String) throws -> (result: ScanResult, debug: Bitmap, readings: [String]) {
        let (result, bitmap, evidence) = try timed { try decoder().decode(contentsOf: path) }
        let readings = (evidence.earlierRows + evidence.rows).map { "\($0.box.x),\($0.box.y),\($0.box.width),\($0.box.height): \($0.text)" }
        return (result, DebugImage.compose(original: bitmap, evidence: evidence, result: result), readings)
    }

    private func scanWithEvidence(
        _ bitmap: Bitmap,
        startedAt start: ContinuousClock.Instant,
        cancellation: ScanCancellation? = nil
    ) throws -> (result: ScanResult, evidence: Evidence) {
        let search = Search(
            deadline: configuration.timeBudget.map { start + $0 },
            firstPassOnly: configuration.firstPassOnly,
            cancellation: cancellation
        )
        var evidence = try pool.withEngine { english in
            try digitPool.withEngine { digits in
                let engines = Engines(digits: digits, english: english)
                switch (configuration.engine, learned) {
                case (.learned, let learned?):
                    return try readLearned(bitmap, learned: learned, checkingWith: nil, search: search)
                case (.both, let learned?):
                    var evidence = try readLearned(bitmap, learned: learned, checkingWith: engines, search: search)
                    if evidence.decided != nil {
                        // The date: the networks' reading of the rows below the number; where
                        // they do not settle it, Tesseract's reading of the strip under the
                        // number weighed beside theirs (``CardScanner/agreedExpiry(tesseract:networks:)``).
                        // Its readings cost a quarter second a card, and on the networks'
                        // settled dates it vetoed more right dates than wrong ones.
                        guard let card = evidence.card else { return evidence }
                        let expiryStart = ContinuousClock.now
                        defer { StageTimings.add(phase: ScanPhase.expiry.rawValue, since: expiryStart) }
                        let networks = try learnedExpiry(learned: learned, into: &evidence, search: search)
                        var tesseract = ExpiryBallot()
                        // Tesseract's strip is a second way to the date: not started once the
                        // time budget is spent.
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
                    // Both networks read a number that fails the check, plainly: Tesseract's
                    // route could pass it only by misreading a digit.
                    if evidence.numberFailsPlainly { return evidence }
                    // The time budget spent: no second route.
                    if search.isOver { return evidence }
                    // Tesseract's route on the networks' likeliest upright card alone, not on every
                    // way the picture may lie again: on the three sets it found one number the
                    // networks missed (in 54 pictures), on that card, at a quarter less time.
                    // Where it reads no number it reads no date either: the networks' date
                    // (two votes) stands. Tesseract's strip under a number it did not find gave
                    // only wrong dates there (a card's back read as 11/2011, eight of eight).
                    var fallback = try StageTimings.measure(phase: ScanPhase.tesseractRoute.rawValue) {
                        try read(bitmap, with: engines, only: evidence.uprightCard, datesWithoutNumber: false, search: search)
                    }
                    fallback.candidates += evidence.candidates
                    fallback.failing += evidence.failing
                    fallback.earlierRows = evidence.rows.map { ($0.box, "learned route: " + $0.text) }
                    if fallback.expiry == nil { fallback.expiry = evidence.expiry }
                    return fallback
                default:
                    return try StageTimings.measure(phase: ScanPhase.tesseractRoute.rawValue) {
                        try read(bitmap, with: engines, search: search)
                    }
                }
            }
        }
        var milliseconds: Double { (ContinuousClock.now - start).seconds * 1000 }
        // The whole number read: the one decided, else the one to offer for correction.
        let unverified = evidence.decided == nil ? Self.unverified(candidates: evidence.candidates, failing: evidence.failing) : nil
        let wholeNumber =
            evidence.decided.map { ($0.pan.revealedDigits, $0.confidence, true) } ?? unverified.map { ($0.digits, $0.confidence, $0.isEstablished) }
        // A number on a sample card is neither reported nor offered: one only sample cards
        // print (judged on a number decided, or offered from readings that establish it), or
        // any on a card printed SAMPLE.
        if let (digits, confidence, established) = wholeNumber,
            var specimen = try (established ? Specimen.inNumber(digits, acceptingTestNumbers: configuration.acceptsTestNumbers) : nil)
                ?? StageTimings.measure(phase: ScanPhase.specimen.rawValue, { try sampleWord(on: &evidence) })
        {
            // A valid number read on it is remembered, so that a vote over frames refuses it.
            if PAN.luhnValid(digits) { specimen.number = try? PAN(digits: digits) }
            return (.specimen(specimen, read: digits, confidence: confidence, milliseconds: milliseconds), evidence)
        }
        guard let best = evidence.decided else {
            let result = ScanResult(
                status: unverified == nil ? .notFound : .unverified,
                pan: nil,
                unverified: unverified,
                expiry: evidence.expiry,
                confidence: unverified?.confidence ?? 0,
                milliseconds: milliseconds,
                holder: evidence.holder
            )
            return (result, evidence)
        }
        let result = ScanResult(
            status: .found,
            pan: best.pan,
            expiry: evidence.expiry,
            confidence: best.confidence,
            milliseconds: milliseconds,
            holder: evidence.holder,
            enginesAgreed: evidence.decidedByBoth
        )
        return (result, evidence)
    }

    // MARK: - Reading

    struct Evidence {
        var candidates: [PANCandidate] = []
        /// Whole numbers read on number rows that fail the check digit.
        var failing: [PANDecoder.NumberReading] = []
        var expiry: Expiry?
        var holder: String?
        /// Where the card was found, in the original image; nil when the image is taken as the card.
        var outline: CardLocator.Outline?
        /// The straightened card the rows were read from.
        var card: Bitmap?
        /// Rows read, in card pixels, with what was read on each (for --debug-dir).
        var rows: [(box: Box, text: String)] = []
        /// What an earlier route read, on its own card, before this evidence's route (for
        /// --debug-dir's text; not drawn, as its boxes are on another card).
        var earlierRows: [(box: Box, text: String)] = []
        /// The number decided on a row, judged against that row's own readings.
        var decided: PANCandidate?
        /// Whether `decided` was read by two independent readers (``ScanResult/enginesAgreed``).
        var decidedByBoth = false
        /// The most digits Tesseract read in one reading of a number row.
        var tesseractDigits = 0
        /// The best mean confidence (0 to 100) of the card-digit model's readings of a number
        /// row: how surely this way up reads as digits.
        var modelConfidence = 0.0
        /// Where the learned engine found the number row on ``card``.
        var numberBox: Box?
        /// The rows of text the learned engine's detector found on ``card``.
        var learnedRows: [LearnedRow] = []
        /// The learned engine's readings of crops of ``card``, by crop and reader: each crop is
        /// read once (``CardScanner/line(_:margin:by:of:into:)``).
        var lines: [LineCrop: RecognizedLine] = [:]
        /// Whether a look of the learned engine settled that the number fails the check
        /// (``CardScanner/LearnedLook/failsPlainly``): no other way of reading the picture is tried.
        var numberFailsPlainly = false
        /// The learned route's likeliest card that is not turned half round (where it found
        /// one): the only one Tesseract's route reads after it.
        var uprightCard: Hypothesis?
        /// The row where most whole numbers were read, valid or not, and how many: the number
        /// row even when no number on it can be reported.
        var wholeRow: (row: TextRow, count: Int)?

        /// How much of a number this way of seeing the card shows: whole numbers read (valid
        /// or not) count most, then the most digits Tesseract read in one reading of a row
        /// (the template reader finds digit shapes in anything, so it does not count).
        var digitsSeen: Int { 100 * (candidates.count + failing.count) + tesseractDigits }

        mutating func noteDigits(in line: RecognizedLine) {
            let digits = line.text.reduce(0) { $0 + ($1.isASCIIDigit ? 1 : 0) }
            tesseractDigits = max(tesseractDigits, min(digits, 19))
        }
    }

    /// Canonical card size: 10 pixels per millimetre of an ID-1 card.
    static let cardWidth = 856
    static let cardHeight = 540

    /// One way the card may lie in the image: an outline found, or the whole frame, and a
    /// turn. Made into a straightened card only when it is tried.
    struct Hypothesis {
        var outline: CardLocator.Outline?
        /// Quarter turns clockwise of the card in the image.
        var quarterTurns: Int
        let makeCard: () -> Bitmap?

        /// The same place, and the turn: a hypothesis and its half turn share a place.
        var place: String {
            (outline?.corners.map { "\(Int($0.x)),\(Int($0.y))" }.joined(separator: ";") ?? "whole") + "/\(quarterTurns % 2)"
        }
    }

    /// The ways to try the image, likeliest first: the best outline (both upright turns for
    /// a card held in portrait), the whole frame levelled (turned upright when the frame is
    /// portrait), then the next outlines. A card upside down is not tried: the card-digit
    /// model reads upside-down digits as digits (a 6 as a 9) surely enough that two readings
    /// can agree on a number that passes the check.
    ///
    /// - Parameter wholeAsItLies: the whole frame is tried as it lies, whatever its shape (a
    ///   phone held upright photographs a card lying across), and levelled from up to
    ///   ``wideDeskew`` degrees: the learned route, which tries the frame's quarter turns
    ///   after, under a rule of its own.
    func hypotheses(for grey: Bitmap, wholeAsItLies: Bool = false) -> [Hypothesis] {
        let outlines = StageTimings.measure(.locate) { CardLocator().outlines(in: grey, limit: 3) }
        func card(_ outline: CardLocator.Outline, turns: Int) -> Hypothesis {
            Hypothesis(outline: outline, quarterTurns: turns) {
                grey.warped(corners: outline.corners(quarterTurns: turns), width: Self.cardWidth, height: Self.cardHeight)
            }
        }
        let deskew = wholeAsItLies ? Self.wideDeskew : Self.deskew
        func whole(turns: Int) -> Hypothesis {
            Hypothesis(outline: nil, quarterTurns: turns) { Self.levelled(grey, quarterTurns: turns, deskewRange: deskew) }
        }
        let upright = grey.height > grey.width * 6 / 5 && !wholeAsItLies ? [1, 3] : [0]
        var first: [Hypothesis] = []
        if let best = outlines.first {
            first += (best.portrait ? [1, 3] : [0]).map { card(best, turns: $0) }
        }
        first += upright.map { whole(turns: $0) }
        let others = outlines.dropFirst().flatMap { outline in
            (outline.portrait ? [1, 3] : [0]).map { card(outline, turns: $0) }
        }
        return first + others
    }

    /// How much more surely (mean confidence, 0 to 100) a card must read one way up than the
    /// other for a number read that way to count, once both have been looked at.
    static let turnMargin = 3.0

    /// How far (degrees) the whole frame is levelled from: Tesseract's route.
    static let deskew = 12.0
    /// How far the learned route levels it from: a card held by hand is often turned 15 to
    /// 25 degrees, and the detector's boxes are upright.
    static let wideDeskew = 25.0

    /// The whole frame as the card: scaled to the card's width, turned upright, and levelled
    /// (from up to `deskewRange` degrees).
    static func levelled(_ grey: Bitmap, quarterTurns: Int, deskewRange: Double = deskew) -> Bitmap? {
        // A card turned clockwise in the frame is put upright by turning the frame back.
        let image = grey.turned(quarterTurns: -quarterTurns)
        var whole = image.scaled(toWidth: cardWidth, height: max(1, image.height * cardWidth / max(1, image.width)))
        let angle = Deskew.angle(of: whole, range: deskewRange)
        if abs(angle) >= 0.75 {
            whole = whole.rotated(degrees: angle, fill: UInt8(whole.meanLevel.rounded()))
        }
        return whole
    }

    /// How hard a hypothesis is read: a first look at every one (the cheapest ways of
    /// reading its likeliest rows), then every way on the few that showed digits.
    enum Effort {
        case glance, full
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
            let result = try engines.english.recognize(image, mode: .singleLine, whitelist: Self.expiryCharacters)
            evidence.rows.append((row.box, result.text))
            // A date elsewhere counts only when the strip under the number gave none.
            if ballot.leader == nil { ballot.add(result.text) }
            if evidence.holder == nil, let name = Self.holderName(in: result) { evidence.holder = name }
        }
        evidence.expiry = ballot.leader
        return evidence
    }

    /// Reads the number rows of one straightened card into `evidence`.
    ///
    /// - Returns: the row a number was decided on, or nil.
    func readNumber(on card: Bitmap, effort: Effort, with engines: Engines, into evidence: inout Evidence) throws -> TextRow? {
        let glance = effort == .glance
        // The number: the strongest rows in the middle band of the card.
        for row in LineFinder.rows(in: card, top: 0.3, bottom: 0.85).prefix(glance ? 2 : 3) {
            var rowCandidates: [PANCandidate] = []
            var rowFailing: [PANDecoder.NumberReading] = []
            var readings: [RowReading] = []
            // Every run of digits a reading of the row showed (``PANDecoder/isPartOfLongerRun(_:runs:)``).
            var rowRuns: [[UInt8]] = []
            guard let base = lineImage(of: card, row: row, textHeight: configuration.lineHeight) else { continue }
            // Dark print reads as is; embossed digits are lighter than the card, so the
            // inverted image and a local threshold get their turn as well.
            let window = configuration.lineHeight * 2
            let flat = base.flattened(window: window * 2 / 3)
            let images: [() -> Bitmap] = [
                { base },
                { flat.binarized(threshold: 140) },
                { flat.binarized(threshold: 100) },
                { base.adaptiveBinarized(window: window) },
                { base.inverted().adaptiveBinarized(window: window) },
                // Thin lines of the design crossing the digits, removed.
                { base.binarized(threshold: base.otsuThreshold()).opened(size: 3) },
                { flat.binarized(threshold: 140).opened(size: 3) },
            ]
            let variants = numberVariants(of: base)
            /// One Tesseract reading of a variant of the row, decoded into the row's evidence.
            func recognize(_ image: Bitmap, with engine: TesseractEngine, source: PANCandidate.Source) throws {
                let result = try engine.recognize(image, mode: .singleLine, whitelist: "0123456789 ")
                if source == .cardModel, let line = result.lines.first, line.text.count >= 8 {
                    evidence.modelConfidence = max(evidence.modelConfidence, line.confidence)
                }
                let scale = Double(image.width - 2 * Self.variantPadding) / Double(base.width)
                let offset = Double(Self.variantPadding)
                readings += result.lines.map { RowReading(line: $0, offset: offset, scale: scale, source: source) }
                evidence.rows.append((row.box, result.text))
                for line in result.lines {
                    evidence.noteDigits(in: line)
                    let decoded = PANDecoder.read(line)
                    rowRuns += decoded.runs
                    rowCandidates += decoded.candidates.map { $0.from(source, offset: offset, scale: scale) }
                    rowFailing += decoded.failing
                }
            }
            /// The row's decision on its readings so far, without the numbers a reading saw as
            /// part of a longer row.
            func decideRow() -> PANCandidate? {
                PANDecoder.dropPartsOfLongerRuns(&rowCandidates, &rowFailing, runs: rowRuns)
                return decide(rowCandidates, failing: rowFailing)
            }
            func settled() -> Bool {
                guard let decided = decideRow() else { return false }
                return decided.confidence >= configuration.minimumConfidence
            }
            // The card-digit model first, as the row is and then in the other ways.
            for variant in variants.prefix(glance ? 2 : variants.count) where !settled() {
                try recognize(variant(), with: engines.digits, source: .cardModel)
            }
            // Then the templates and English, for typefaces the model reads badly.
            for makeImage in images.prefix(glance ? 1 : images.count) where !settled() {
                let image = makeImage()
                guard let line = TemplateReader.read(image.padded(by: 4)) else { continue }
                readings.append(RowReading(line: line, offset: 4, source: .templates))
                evidence.rows.append((row.box, "templates: " + line.text))
                let decoded = PANDecoder.read(line)
                rowRuns += decoded.runs
                rowCandidates += decoded.candidates.map { $0.from(.templates, offset: 4) }
                rowFailing += decoded.failing
            }
            for variant in variants.prefix(glance ? 1 : variants.count) where !settled() {
                try recognize(variant(), with: engines.english, source: .tesseract)
            }
            var decided = decideRow()
            if decided == nil, let merged = PANDecoder.merged(readings) {
                rowCandidates.append(merged.from(.merged))
                decided = decideRow()
            }
            if let decided, !Self.standsAlone(decided, on: base) {
                evidence.rows.append((row.box, "not alone on its row: " + decided.pan.description))
                continue
            }
            evidence.candidates += rowCandidates
            evidence.failing += rowFailing
            let whole = rowCandidates.count + rowFailing.count
            if whole > (evidence.wholeRow?.count ?? 0) { evidence.wholeRow = (row, whole) }
            if let decided {
                evidence.decided = decided
                return row
            }
        }
        return nil
    }

    static let expiryCharacters = "0123456789/ABCDEFGHIJKLMNOPQRSTUVWXYZ .-'"

    /// A line that reads as a cardholder's name: capital words, confidently read, and not a label or brand.
    static func holderName(in result: Recognition) -> String? {
        guard let line = result.lines.first, line.confidence >= 80 else { return nil }
        let text = line.text
        let words = text.split(separator: " ")
        guard words.count >= 2, words.count <= 5, text.count >= 5,
            text.allSatisfy({ $0.isUppercase || $0 == " " || $0 == "." || $0 == "-" || $0 == "'" })
        else { return nil }
        let labels: Set<Substring> = [
            "VALID", "THRU", "GOOD", "EXPIRES", "END", "FROM", "UNTIL", "EXPIRY", "MONTH/YEAR", "MONTH", "YEAR", "MEMBER",
            "SINCE",
            // Brands' names, printed beside the holder's.
            "VISA", "MASTERCARD", "JCB", "MIR", "DISCOVER", "AMERICAN", "EXPRESS", "UNIONPAY", "DINERS", "MAESTRO",
            "DEBIT", "CREDIT",
        ]
        guard !words.contains(where: { labels.contains($0) }) else { return nil }
        return text
    }

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

    /// The margin around every image of a number row given to Tesseract.
    static let variantPadding = 12

    /// Ways to present a number row (its ``lineImage(of:row:textHeight:)``) to Tesseract,
    /// cheapest and likeliest first.
    func numberVariants(of base: Bitmap) -> [() -> Bitmap] {
        [
            { base.padded(by: Self.variantPadding) },
            { base.binarized(threshold: base.otsuThreshold()).padded(by: Self.variantPadding) },
            {
                let small = base.scaled(toWidth: max(1, base.width * 3 / 4), height: max(1, base.height * 3 / 4))
                return small.padded(by: Self.variantPadding)
            },
            { base.adaptiveBinarized(window: self.configuration.lineHeight * 2).padded(by: Self.variantPadding) },
            { base.inverted().adaptiveBinarized(window: self.configuration.lineHeight * 2).padded(by: Self.variantPadding) },
            { base.binarized(threshold: base.otsuThreshold()).opened(size: 3).padded(by: Self.variantPadding) },
        ]
    }

    /// The row cut out with a margin, scaled so its text is `textHeight` pixels tall,
    /// contrast-stretched, with dark text on a light ground.
    func lineImage(of card: Bitmap, row: TextRow, textHeight: Int) -> Bitmap? {
        let margin = max(4, row.box.height / 3)
        guard
            let crop = card.cropped(
                x: row.box.x - margin,
                y: row.box.y - margin,
                width: row.box.width + 2 * margin,
                height: row.box.height + 2 * margin
            )
        else { return nil }
        let scale = Double(textHeight) / Double(max(1, row.box.height))
        let width = max(1, Int(Double(crop.width) * scale))
        let height = max(1, Int(Double(crop.height) * scale))
        guard width <= 4000 else { return nil }
        let sized = crop.scaled(toWidth: width, height: height).stretchedContrast()
        return Self.darkText(sized)
    }

    /// Text is whichever side of Otsu's threshold is rarer; Tesseract wants it dark.
    static func darkText(_ image: Bitmap) -> Bitmap {
        let threshold = image.otsuThreshold()
        let dark = image.pixels.reduce(0) { $0 + ($1 <= threshold ? 1 : 0) }
        return dark * 2 > image.pixels.count ? image.inverted() : image
    }

    // MARK: - Deciding

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
    /// numbers too weak to report count as `low_confidence`; the rest fail the check digit.
    static func unverified(candidates: [PANCandidate], failing: [PANDecoder.NumberReading]) -> UnverifiedNumber? {
        var tally: [[UInt8]: (votes: Int, confidence: Double, first: Int)] = [:]
        let readings =
            candidates.filter(\.groupingMatches)
            .map { PANDecoder.NumberReading(digits: $0.pan.revealedDigits, confidence: $0.confidence) }
            + failing
        for (index, reading) in readings.enumerated() where reading.confidence >= minimumUnverifiedConfidence {
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
    /// tie between readings, and the check digit does not break it: nothing is reported.
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
        let accepted = byNumber.values.filter { entry in
            if consensus >= 3 && consensus > 2 * entry.votes { return false }
            if Self.failingAlike(entry.best, in: failing) >= entry.votes { return false }
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
}
