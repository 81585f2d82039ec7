import OCRBridge

/// Decide, last: what a scan answers from all its evidence.
extension CardScanner {
    /// The scan's answer: the number decided (`found`); else the whole number to offer for
    /// correction (`unverified`), or none (`not_found`). A number on a sample card is neither
    /// reported nor offered (`specimen`): one only sample cards print (judged on a number
    /// decided, or offered from readings that establish it), any where a reader read a number
    /// row whole as a sample's (``Specimen/inRows(_:acceptingTestNumbers:)``: sixteen zeros,
    /// no brand's number, beside another reader's misreading of them), or any on a card printed
    /// SAMPLE (``sampleWord(on:)``, read only here, where there is a number to refuse).
    func verdict(on evidence: inout Evidence, startedAt start: ContinuousClock.Instant) throws -> ScanResult {
        var milliseconds: Double { (ContinuousClock.now - start).seconds * 1000 }
        // The whole number read: the one decided, else the one to offer for correction.
        let unverified = evidence.decided == nil ? Self.unverified(candidates: evidence.candidates, failing: evidence.failing) : nil
        let wholeNumber =
            evidence.decided.map { ($0.pan.revealedDigits, $0.confidence, true) } ?? unverified.map { ($0.digits, $0.confidence, $0.isEstablished) }
        if let (digits, confidence, established) = wholeNumber,
            var specimen = try (established ? Specimen.inNumber(digits, acceptingTestNumbers: configuration.acceptsTestNumbers) : nil)
                ?? Specimen.inRows(evidence.sampleRows, acceptingTestNumbers: configuration.acceptsTestNumbers)
                ?? StageTimings.measure(phase: ScanPhase.specimen.rawValue, { try sampleWord(on: &evidence) })
        {
            // A valid number read on it is remembered, so that a vote over frames refuses it.
            if PAN.luhnValid(digits) { specimen.number = try? PAN(digits: digits) }
            return .specimen(specimen, read: digits, confidence: confidence, milliseconds: milliseconds)
        }
        guard let best = evidence.decided else {
            return ScanResult(
                status: unverified == nil ? .notFound : .unverified,
                pan: nil,
                unverified: unverified,
                expiry: evidence.expiry,
                confidence: unverified?.confidence ?? 0,
                milliseconds: milliseconds,
                holder: evidence.holder
            )
        }
        return ScanResult(
            status: .found,
            pan: best.pan,
            expiry: evidence.expiry,
            confidence: best.confidence,
            milliseconds: milliseconds,
            holder: evidence.holder,
            enginesAgreed: evidence.decidedByBoth
        )
    }
}
