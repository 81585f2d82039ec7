/// What the scanner read off one image.
public struct ScanResult: Sendable {
    public enum Status: String, Sendable {
        /// A card number was read with enough confidence to report it.
        case found
        /// No card number could be read with confidence; nothing is reported.
        case notFound = "not_found"
    }

    public var status: Status
    /// The card number, only when `status` is `found`.
    public var pan: PAN?
    /// The expiry, when one was read (it may be read even when the number was not).
    public var expiry: Expiry?
    /// 0 to 1: how sure the scanner is of the number; 0 when none was found.
    public var confidence: Double
    /// Wall time for the scan, in milliseconds.
    public var milliseconds: Double
    /// The cardholder's name, when it was read with confidence.
    public var holder: String?

    public init(status: Status, pan: PAN?, expiry: Expiry?, confidence: Double, milliseconds: Double, holder: String? = nil) {
        self.status = status
        self.pan = pan
        self.expiry = expiry
        self.confidence = confidence
        self.milliseconds = milliseconds
        self.holder = holder
    }
}
