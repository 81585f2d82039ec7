public import OCRBridge

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads a card's number, expiry and holder's name off an image.
///
/// Every scan goes through three stages, each a folder of Scanning/:
/// - **Locate** (Locate/): the ways the card may lie in the picture, likeliest first
///   (``hypotheses(for:wholeAsItLies:)``, ordered by the number-row detector,
///   ``ordered(_:in:by:)``): a card outline straightened to a canonical 856 × 540 (10 px per mm
///   of an ID-1 card), or the whole frame levelled (``Deskew``) or turned; then the rows of text
///   on that card (the learned text detector's, ``rows(of:)``; ``LineFinder``'s for Tesseract).
/// - **Read** (Read/): crops of the rows read by engines behind one face (``RowReader``): the
///   card-digit network and PP-OCRv4's recognizer, Tesseract's card-digit model and English, the
///   digit templates. The number band's rows, the date's bands under the number, the holder's
///   row, and the card's other rows for a sample word.
/// - **Decide** (Decide/): ``PANDecoder`` finds the whole numbers in each reading (a brand's IIN,
///   one of its lengths, its grouping, the check digit as a check only); a row's readings decide
///   a number (``decideLearned(_:failing:)``, ``decide(_:failing:)``, Tesseract's check,
///   ``checked(_:on:row:with:look:)``); the dates are voted on (``ExpiryBallot``); the
///   ``verdict(on:startedAt:)`` reports a number only when the evidence clears
///   ``Configuration/minimumConfidence``, never on a sample card, and otherwise offers the whole
///   number read to be corrected, or nothing: never a guess.
///
/// Two paths go through these stages (Paths/): the learned engine's first pass, one look at the
/// likeliest view, and its fallback, every other view (``LearnedRoute``); Tesseract's route
/// (``read(_:with:only:datesWithoutNumber:search:)``) is the last fallback with both engines, and
/// the whole scan with Tesseract alone.
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

    /// The paths a picture takes through the stages (locate, read, decide), by the engines the
    /// configuration reads with, and the verdict on what they found.
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
                    // The networks' first pass and fallback (``LearnedRoute``).
                    return try readLearned(bitmap, learned: learned, checkingWith: nil, search: search)
                case (.both, let learned?):
                    // The same, Tesseract checking the networks' number and weighing in on its date;
                    // where they decided nothing, Tesseract's route is the last fallback.
                    let evidence = try readLearned(bitmap, learned: learned, checkingWith: engines, search: search)
                    if evidence.decided != nil {
                        return try withWeighedExpiry(evidence, learned: learned, engines: engines, search: search)
                    }
                    return try tesseractFallback(bitmap, after: evidence, with: engines, search: search)
                default:
                    return try StageTimings.measure(phase: ScanPhase.tesseractRoute.rawValue) {
                        try read(bitmap, with: engines, search: search)
                    }
                }
            }
        }
        let result = try verdict(on: &evidence, startedAt: start)
        return (result, evidence)
    }
}
