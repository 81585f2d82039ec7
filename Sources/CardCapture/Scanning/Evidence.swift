import OCRBridge

/// What one scan found so far: the evidence every stage adds to and the decision reads.
extension CardScanner {
    struct Evidence {
        var candidates: [PANCandidate] = []
        /// Whole numbers read on number rows that fail the check digit.
        var failing: [PANDecoder.NumberReading] = []
        /// Every run of digits read on a number row, for the sample-row check (``Specimen/inRows(_:acceptingTestNumbers:)``, which judges their length).
        var sampleRows: Set<[UInt8]> = []
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

    /// What the learned engine read on one straightened card.
    struct LearnedLook {
        var candidates: [PANCandidate] = []
        var failing: [PANDecoder.NumberReading] = []
        /// Every run of digits read on a number row (``Evidence/sampleRows``).
        var sampleRows: Set<[UInt8]> = []
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
}
