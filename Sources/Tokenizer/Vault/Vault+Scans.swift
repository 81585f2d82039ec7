public import CardCapture
import Foundation

extension Vault {
    /// Keeps what the scanner read of a card, the number sealed, for the merchant to make
    /// into a token (``createToken(for:scan:cvc:expiry:holder:amount:currency:)``) within a
    /// token's life. A scan that read no number is kept too, so its id answers clearly.
    ///
    /// - Parameter checkoutSession: the checkout session whose hosted page read the card (its
    ///   camera): the scan then pays on that page only (``Payments/payCheckoutSession(_:card:scan:)``),
    ///   never through ``createToken(for:scan:cvc:expiry:holder:amount:currency:)``.
    public func recordScan(for merchantID: String, result: ScanResult, checkoutSession: String? = nil) async throws(VaultError) -> Scan {
        let now = configuration.now()
        let id = ObjectID.random(.scan, at: now).rawValue
        let pan = result.status == .found ? result.pan : nil
        let unverified = result.status == .unverified ? result.unverified : nil
        let sealed = try pan.map { pan throws(VaultError) in
            try keys.seal(Self.encode(SealedCard(number: pan.revealed, holder: result.holder)), for: .card, context: id)
        }
        let record = ScanRecord(
            id: id,
            merchantID: merchantID,
            status: Self.scanStatus(pan: pan, unverified: unverified, specimen: result.status == .specimen).rawValue,
            brand: pan?.brand.id,
            bin: pan?.bin,
            last4: pan?.last4,
            expMonth: result.expiry?.month,
            expYear: result.expiry?.year,
            confidence: pan == nil ? 0 : result.confidence,
            keyID: keys.keyID,
            sealedCard: sealed,
            createdAt: now,
            expiresAt: now.addingTimeInterval(configuration.tokenLifetime.seconds),
            usedAt: nil,
            tokenID: nil,
            checkoutSessionID: checkoutSession
        )
        try await storing("save the scan") { try await store.insertScan(record) }
        var scan = Scan(record)
        scan.unverified = unverified.map { Scan.Unverified(masked: $0.masked, reason: $0.reason.rawValue) }
        return scan
    }

    /// Makes a scan into a single-use token, once: the scan's number (and holder's name, if
    /// read) with the CVC given here. The expiry is the one given here, else the scan's.
    /// A scan a hosted page's camera made is used only by that page's payment
    /// (`checkoutSession`, its session's id); for anyone else it does not exist.
    ///
    /// - Throws: ``VaultError`` `scanNotFound`, `scanExpired`, `scanAlreadyUsed`,
    ///   `scanWithoutNumber`, or `invalidRequest` (param `exp_month`) when neither the scan
    ///   nor the caller has an expiry; `CardValidationError` for an expired card or a wrong
    ///   CVC; as ``createToken(for:card:amount:currency:)`` otherwise.
    public func createToken(
        for merchantID: String,
        scan scanID: String,
        cvc: String?,
        expiry: (month: Int, year: Int)? = nil,
        holder: String? = nil,
        amount: Int? = nil,
        currency: String? = nil,
        checkoutSession: String? = nil
    ) async throws -> Token {
        let (scan, read) = try await openScan(scanID, merchantID: merchantID, checkoutSession: checkoutSession)
        let now = configuration.now()
        let expiryGiven = expiry ?? scan.expMonth.flatMap { month in scan.expYear.map { (month, $0) } }
        guard let (month, year) = expiryGiven else {
            throw VaultError(
                .invalidRequest,
                "scan \(scanID) did not read the card's expiry: send exp_month and exp_year with it",
                param: "exp_month"
            )
        }
        let card = CardInput(number: read.number, expMonth: month, expYear: year, cvc: cvc, holder: holder ?? read.holder)
        let record = try tokenRecord(for: merchantID, card: card, amount: amount, currency: currency)
        let use = try await storing("save the token") { try await store.insertToken(record, usingScan: scanID, at: now) }
        guard use == .tokenized else { throw Self.scanRefusal(use, scanID) }
        return Token(record)
    }

    /// The status a scan is kept with: what of it can be made into a token.
    static func scanStatus(pan: PAN?, unverified: UnverifiedNumber?, specimen: Bool) -> ScanResult.Status {
        if pan != nil { return .found }
        if specimen { return .specimen }
        return unverified != nil ? .unverified : .notFound
    }

    /// A scan that can still be used, and its card opened.
    ///
    /// - Throws: ``VaultError`` `scanNotFound`, `scanAlreadyUsed`, `scanExpired` or `scanWithoutNumber`.
    private func openScan(_ scanID: String, merchantID: String, checkoutSession: String?) async throws -> (ScanRecord, SealedCard) {
        // A page's scan is the buyer's, on that page: to the API, and to another session, it is
        // not there.
        guard let scan = try await storing("read the scan", { try await store.scan(id: scanID, merchantID: merchantID) }),
            scan.checkoutSessionID == checkoutSession
        else {
            throw Self.scanRefusal(.notFound, scanID)
        }
        if scan.usedAt != nil { throw Self.scanRefusal(.alreadyUsed, scanID) }
        if scan.expiresAt <= configuration.now() { throw Self.scanRefusal(.expired, scanID) }
        if scan.status == ScanResult.Status.specimen.rawValue { throw Self.specimenRefusal(scanID) }
        guard let sealed = scan.sealedCard, scan.keyID == keys.keyID else { throw Self.scanRefusal(.withoutNumber, scanID) }
        return (scan, try Self.decode(try keys.open(sealed, for: .card, context: scan.id)))
    }

    /// The number and holder's name a scan of the hosted page of `checkoutSession` read, for
    /// the page to check before paying with it. Reading does not spend the scan; the payment
    /// does (``Payments/payCheckoutSession(_:card:scan:)``).
    ///
    /// - Throws: ``VaultError`` `scanNotFound` (also for another session's scan, or one the
    ///   API made), `scanAlreadyUsed`, `scanExpired` or `scanWithoutNumber`.
    public func scannedCard(for merchantID: String, scan scanID: String, checkoutSession: String) async throws -> (number: String, holder: String?) {
        let (_, card) = try await openScan(scanID, merchantID: merchantID, checkoutSession: checkoutSession)
        return (card.number, card.holder)
    }

    /// A scan of a sample card: never a card, whatever number it shows.
    static func specimenRefusal(_ id: String) -> VaultError {
        VaultError(
            .scanWithoutNumber,
            "scan \(id.prefix(40)) shows a sample card (printed SAMPLE or SPECIMEN, or a number only sample cards carry), not a payment card: scan the real card, or send its number, exp_month and exp_year"
        )
    }

    static func scanRefusal(_ use: ScanUse, _ id: String) -> VaultError {
        let id = id.prefix(40)
        switch use {
        case .tokenized, .notFound:
            return VaultError(.scanNotFound, "no scan \(id) for this merchant; check the id, or scan the card again")
        case .expired:
            return VaultError(.scanExpired, "scan \(id) has expired and its card data is gone: scan the card again")
        case .alreadyUsed:
            return VaultError(.scanAlreadyUsed, "scan \(id) has been made into a token already: scan the card again for a new token")
        case .withoutNumber:
            return VaultError(
                .scanWithoutNumber,
                "scan \(id) read no card number it could verify: scan the card again, or send the number, exp_month and exp_year instead"
            )
        }
    }
}
