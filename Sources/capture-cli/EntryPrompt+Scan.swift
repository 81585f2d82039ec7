import CardCapture
import OCRBridge

extension EntryPrompt {
    /// An image's outcome, finished by hand when the scan fell short: the same outcome when it
    /// did not, or when the person pressed Ctrl-D; nil after Ctrl-C (stop everything). A number
    /// read with less confidence than `sureConfidence` is offered for the person to check.
    mutating func fallback(for outcome: ScanOutcome, sureConfidence: Double = ManualEntry.sureConfidence) -> ScanOutcome? {
        let name = outcome.file.split(separator: "/").last.map(String.init) ?? outcome.file
        let reason: String
        let defaults: ManualEntry.Values
        switch outcome.result {
        case .success(let result):
            guard let why = ManualEntry.reasonToAsk(after: result, sureConfidence: sureConfidence) else { return outcome }
            reason = "\(name): \(why)"
            defaults = ManualEntry.defaults(from: result)
        case .failure(let error):
            reason = "\(name): the image could not be scanned (\(error.message))"
            defaults = ManualEntry.Values()
        }
        var entry = ManualEntry(fields: [.number, .expiry, .holder], defaults: defaults)
        switch run(&entry, reason: reason) {
        case .card(let card):
            let milliseconds = (try? outcome.result.get())?.milliseconds ?? 0
            let result = ScanResult(
                status: .found,
                pan: card.pan,
                expiry: card.expiry,
                confidence: 1,
                milliseconds: milliseconds,
                holder: card.holder
            )
            return ScanOutcome(file: outcome.file, entered: result)
        case .cancelled: return outcome
        case .interrupted: return nil
        }
    }
}
