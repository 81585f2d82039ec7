public import OCRBridge

/// What the scanner read off one image.
public struct ScanResult: Sendable {
    public enum Status: String, Sendable {
        /// A card number was read with enough confidence to report it.
        case found
        /// A whole number was read, but it fails the check digit or the confidence
        /// threshold: ``ScanResult/unverified`` holds it for a person to check, never as a card.
        case unverified
        /// No card number could be read; nothing is reported.
        case notFound = "not_found"
        /// The picture shows a sample card (a SAMPLE or SPECIMEN print, a number printed on
        /// sample cards): ``ScanResult/specimen`` says why; no card number is reported, valid or
        /// not (the digits read, if any, are told as ``ScanResult/unverified`` with the reason
        /// ``UnverifiedNumber/Reason/specimen``).
        case specimen
    }

    public var status: Status
    /// The card number, only when `status` is `found`.
    public var pan: PAN?
    /// The number read but not verified, only when `status` is `unverified`.
    public var unverified: UnverifiedNumber?
    /// The expiry, when one was read (it may be read even when the number was not).
    public var expiry: Expiry?
    /// 0 to 1: how sure the scanner is of the number (found or unverified); 0 when none was read.
    public var confidence: Double
    /// Wall time for the scan, in milliseconds.
    public var milliseconds: Double
    /// The cardholder's name, when it was read with confidence.
    public var holder: String?
    /// Whether the number found was read by two independent readers: the learned engine and
    /// Tesseract's card-digit model on the same row, or both networks as printed. One such
    /// frame is as good as two frames agreeing (``FrameVote``).
    public var enginesAgreed: Bool
    /// Why the card is a sample, only when `status` is `specimen`.
    public var specimen: Specimen?
    /// Where the scan's time went, by stage (``StageTimings``): each stage's milliseconds and
    /// calls; what they leave of ``milliseconds`` is the scanner's own work.
    public var timings: [StageTimings.Stage: StageTimings.Entry] = [:]
    /// The scan's phases' milliseconds (``ScanPhase``): what it spent finding the number, its
    /// date, the holder's name, a sample card's word, and on Tesseract's route. Phases hold stages.
    public var phases: [ScanPhase: Double] = [:]

    public init(
        status: Status,
        pan: PAN?,
        unverified: UnverifiedNumber? = nil,
        expiry: Expiry?,
        confidence: Double,
        milliseconds: Double,
        holder: String? = nil,
        enginesAgreed: Bool = false,
        specimen: Specimen? = nil
    ) {
        self.status = status
        self.pan = pan
        self.unverified = unverified
        self.expiry = expiry
        self.confidence = confidence
        self.milliseconds = milliseconds
        self.holder = holder
        self.enginesAgreed = enginesAgreed
        self.specimen = specimen
    }

    /// A sample card's result: no card, no expiry, no name; the whole number read on it, if
    /// any, as ``UnverifiedNumber`` with the reason ``UnverifiedNumber/Reason/specimen`` (what was
    /// read, never a card's number).
    static func specimen(_ specimen: Specimen, read digits: [UInt8]? = nil, confidence: Double = 0, milliseconds: Double) -> ScanResult {
        ScanResult(
            status: .specimen,
            pan: nil,
            unverified: digits.map { UnverifiedNumber(digits: $0, reason: .specimen, confidence: confidence) },
            expiry: nil,
            confidence: 0,
            milliseconds: milliseconds,
            specimen: specimen
        )
    }
}

/// The parts of a scan, one after another, that ``ScanResult/phases`` times.
public enum ScanPhase: String, Sendable, CaseIterable {
    /// The learned route's looks at the card until the number is decided (Tesseract's check of
    /// it included).
    case number
    /// The date: the networks' reading of the rows under the number, and Tesseract's strip.
    case expiry
    /// The holder's name.
    case holder
    /// The words that mark a sample card, read on a card a whole number was read on.
    case specimen
    /// Tesseract's own route (after the learned one found no number, or alone).
    case tesseractRoute = "tesseract_route"
}
