extension ManualEntry {
    /// The least confidence at which a scanned number is taken without asking a person. The
    /// scanner reports numbers from 0.55 (several readings agreeing) or 0.70 (one reading);
    /// between that and this, the number is offered as the default for a person to check.
    public static let sureConfidence = 0.75

    /// Why a scan needs a person to finish it, or nil when it read the number with confidence
    /// (and the expiry, when `expiryNeeded`).
    ///
    /// ```swift
    /// ManualEntry.reasonToAsk(after: result)
    /// // "the scan could not read the card number (it read the expiry, 12/30)"
    /// ```
    public static func reasonToAsk(
        after result: ScanResult,
        expiryNeeded: Bool = false,
        sureConfidence: Double = sureConfidence
    ) -> String? {
        if result.status == .specimen, let specimen = result.specimen {
            return "\(specimen.explanation); type in the card you will pay with"
        }
        if result.status == .unverified, let read = result.unverified {
            return "the scan read \(read.maskedGrouped), but \(read.explanation); check it against the card"
        }
        guard result.status == .found, result.pan != nil else {
            let read = [result.expiry.map { "the expiry, \($0.formatted)" }, result.holder.map { _ in "the name" }].compactMap { $0 }
            let also = read.isEmpty ? "" : " (it read \(read.joined(separator: " and ")))"
            return "the scan could not read the card number\(also)"
        }
        if result.confidence < sureConfidence {
            let percent = Int((result.confidence * 100).rounded())
            return "the scan is not sure of the card number (\(percent) % confident); check it against the card"
        }
        if expiryNeeded && result.expiry == nil { return "the scan could not read the expiry" }
        return nil
    }

    /// What a scan read, as defaults for the prompt.
    public static func defaults(from result: ScanResult) -> Values {
        Values(
            number: result.pan,
            expiry: result.expiry,
            holder: result.holder,
            draftNumber: result.status == .unverified ? result.unverified : nil
        )
    }
}
