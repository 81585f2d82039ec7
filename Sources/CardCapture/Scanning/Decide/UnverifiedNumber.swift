/// A whole card number read off an image that the scanner does not report as a card: it
/// fails the check digit, or the reading behind it is too weak. It is offered to a person to
/// check and correct, never charged or tokenized as it is.
///
/// Like ``PAN`` it prints masked everywhere (`400012******9010`); the digits are reachable
/// only through ``revealed``.
public struct UnverifiedNumber: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Why the number is not reported as the card's.
    public enum Reason: String, Sendable {
        /// Every digit was read, but together they fail the Luhn check: at least one is
        /// wrong, or the card is a specimen whose printed number is not a card's.
        case checkDigit = "check_digit_failed"
        /// The digits pass the check, but the readings behind them are too weak (or
        /// disagree) to report them without a person's look.
        case lowConfidence = "low_confidence"
        /// The number was read on a sample card (``ScanResult/Status/specimen``): the digits
        /// as read, which are no card's.
        case specimen
    }

    let digits: [UInt8]
    public let reason: Reason
    /// 0 to 1: the weakest digit's confidence in the reading offered.
    public let confidence: Double
    /// How many readings of the card gave these digits.
    let readings: Int

    init(digits: [UInt8], reason: Reason, confidence: Double, readings: Int = 1) {
        self.digits = digits
        self.reason = reason
        self.confidence = confidence
        self.readings = readings
    }

    /// Whether the digits are what the card shows rather than noise a reader made of it: read
    /// the same way twice, or once with every digit sure (``CardScanner/plainFailureConfidence``).
    /// Only such a reading is judged as a sample card's number: a blurred card read once,
    /// unsurely, gives digits with any pattern.
    var isEstablished: Bool { readings >= 2 || confidence >= CardScanner.plainFailureConfidence }

    /// The digits as read. Show them only to the person holding the card.
    public var revealed: String { String(decoding: digits.map { $0 + 48 }, as: UTF8.self) }
    /// The first six and last four digits, the rest masked.
    public var masked: String { PAN.masked(digits) }
    /// How many digits were read.
    public var length: Int { digits.count }
    /// The brand the first digits name, when any.
    public var brand: CardBrand? { CardBrand.detect(digits: digits) }
    /// The digits grouped as the brand prints them (4-4-4-4 when no brand is known), in full:
    /// for the person holding the card to correct.
    public var revealedGrouped: String { PAN.grouped(Array(revealed), grouping) }
    /// The digits grouped as the brand prints them (4-4-4-4 when no brand is known), masked.
    public var maskedGrouped: String { PAN.grouped(Array(masked), grouping) }
    /// How the brand prints a number this long; groups of four when no brand is known.
    private var grouping: [Int] { brand?.grouping(forLength: digits.count) ?? [4, 4, 4, 4, 4] }

    /// Why, in words a person can act on.
    public var explanation: String {
        switch reason {
        case .checkDigit: "the digits read fail the card number's check digit, so at least one of them is wrong"
        case .lowConfidence: "the scan is not sure of these digits"
        case .specimen: "these digits are printed on a sample card, which is not a payment card"
        }
    }

    public var description: String { masked }
    public var debugDescription: String { "UnverifiedNumber(\(masked), \(reason.rawValue))" }
    public var customMirror: Mirror { Mirror(self, children: ["masked": masked, "reason": reason.rawValue]) }
}
